package bashssh

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-ssh/internal/sshdtest"
	"github.com/dsh-go/dsh/internal/envpolicy"
)

// mustRun resolves req and runs it on ex, failing t on any error.
func mustRun(t *testing.T, ex *Executor, req bash.Request) bash.RunResult {
	t.Helper()
	res, err := runReq(ex, req)
	if err != nil {
		t.Fatalf("Run(%q): %v", req.Command, err)
	}
	return res
}

func runReq(ex *Executor, req bash.Request) (bash.RunResult, error) {
	spec, err := ex.Resolve(req)
	if err != nil {
		return bash.RunResult{}, err
	}
	return ex.Run(context.Background(), spec)
}

func TestRunOutcomes(t *testing.T) {
	ex := newExecutor(t, serverConfig(sharedServer(t)))
	tests := []struct {
		name           string
		command        string
		code           int // -1: killed by signal
		signal         string
		stdout, stderr string
	}{
		{"exit code and both streams", "echo out; echo err >&2; exit 3", 3, "", "out\n", "err\n"},
		{"exit 0", "true", 0, "", "", ""},
		{"exit code above 128 is a code", "exit 143", 143, "", "", ""},
		{"death by a signal", "kill -TERM $$", -1, "SIGTERM", "", ""},
		{"death by SIGKILL", "kill -KILL $$", -1, "SIGKILL", "", ""},
		{"quotes and odd bytes in the command", `printf '%s|' "it's" 'a "b"' '$HOME' '\n' '` + "`x`" + `' 'ü'`, 0, "", `it's|a "b"|$HOME|\n|` + "`x`|ü|", ""},
		{"bash -c semantics: $0", `printf '%s' "$0"`, 0, "", "bash", ""},
		{"no stdin means /dev/null", "test -c /dev/stdin && cat", 0, "", "", ""},
		{"own process group", `test "$(ps -o pgid= -p $$ | tr -d ' ')" = $$ && echo leader`, 0, "", "leader\n", ""},
		{"a plain shell", `shopt -q login_shell || echo plain; [ -z "$PS1" ] && echo noninteractive`, 0, "", "plain\nnoninteractive\n", ""},
		{"multi-byte output", "printf 'héllo ✓\\n'", 0, "", "héllo ✓\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, ex, bash.Request{Command: tt.command})
			switch {
			case tt.code < 0 && (res.ExitCode != nil || res.Signal != tt.signal):
				t.Errorf("ExitCode %s, Signal %q; want none and %s", codeString(res.ExitCode), res.Signal, tt.signal)
			case tt.code >= 0 && (res.ExitCode == nil || *res.ExitCode != tt.code || res.Signal != ""):
				t.Errorf("ExitCode %s, Signal %q; want %d", codeString(res.ExitCode), res.Signal, tt.code)
			}
			if res.TimedOut || res.Aborted {
				t.Errorf("TimedOut %v, Aborted %v; want neither", res.TimedOut, res.Aborted)
			}
			if got := res.Stdout.Text(); got != tt.stdout {
				t.Errorf("stdout %q, want %q", got, tt.stdout)
			}
			if got := res.Stderr.Text(); got != tt.stderr {
				t.Errorf("stderr %q, want %q", got, tt.stderr)
			}
		})
	}
}

func codeString(code *int) string {
	if code == nil {
		return "none"
	}
	return strconv.Itoa(*code)
}

func TestEnvironment(t *testing.T) {
	// A variable of the harness's own environment must never reach the remote side.
	t.Setenv("BASHSSH_LOCAL_ONLY", "local")
	cfg := serverConfig(sharedServer(t))
	cfg.KeepEnv = []string{"BASHSSH_KEPT_TOKEN"}
	ex := newExecutor(t, cfg)
	show := func(names ...string) string {
		var b strings.Builder
		for _, n := range names {
			b.WriteString(`printf '%s=%s;' ` + n + ` "${` + n + `-<unset>}"; `)
		}
		return b.String()
	}
	tests := []struct {
		name    string
		env     map[string]string
		command string
		want    string
	}{
		{"terminal overrides", nil, show("NO_COLOR", "TERM", "PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT"),
			"NO_COLOR=1;TERM=dumb;PAGER=cat;GIT_PAGER=cat;GIT_TERMINAL_PROMPT=0;"},
		{"the local environment stays local", nil, show("BASHSSH_LOCAL_ONLY"), "BASHSSH_LOCAL_ONLY=<unset>;"},
		{"remote credentials and DSH_ are scrubbed, the rest kept", nil, show("BASHSSH_AMBIENT_API_KEY", "DSH_STALE", "BASHSSH_PLAIN", "HOME"),
			"BASHSSH_AMBIENT_API_KEY=<unset>;DSH_STALE=<unset>;BASHSSH_PLAIN=plain;HOME=" + sharedServer(t).Home + ";"},
		{"explicit variables win over overrides and scrubbing", map[string]string{"TERM": "xterm", "MY_API_KEY": "k", "DSH_X": "d"},
			show("TERM", "MY_API_KEY", "DSH_X"), "TERM=xterm;MY_API_KEY=k;DSH_X=d;"},
		{"values are passed byte for byte", map[string]string{"V": "a 'b' \"c\" $d `e` \\f\ng ü"},
			`printf '%s' "$V"`, "a 'b' \"c\" $d `e` \\f\ng ü"},
		{"empty value", map[string]string{"EMPTY": ""}, show("EMPTY"), "EMPTY=;"},
		{"names bash cannot hold still reach children", map[string]string{"A.B": "dotted", "1X": "digit"},
			`env | grep -E '^(A\.B|1X)=' | sort | tr '\n' ';'`, "1X=digit;A.B=dotted;"},
		{"the tag marks the command", nil, `case $DSH_PROC_TAG in ` + ex.tag + `-[0-9]*) echo tagged;; esac`, "tagged\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, ex, bash.Request{Command: tt.command, Env: tt.env})
			if got := res.Stdout.Text(); got != tt.want {
				t.Errorf("got %q, want %q (stderr %q)", got, tt.want, res.Stderr.Text())
			}
		})
	}
}

func TestStdin(t *testing.T) {
	ex := newExecutor(t, serverConfig(sharedServer(t)))
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	tests := []struct {
		name    string
		stdin   []byte
		command string
		want    string
		code    int
	}{
		{"bytes are streamed, then closed", []byte("line1\nline2\x00bin\n"), "cat", "line1\nline2\x00bin\n", 0},
		{"empty stdin is closed at once", []byte{}, "cat; echo end", "end\n", 0},
		{"1 MiB is delivered whole", []byte(big), "wc -c", strconv.Itoa(len(big)) + "\n", 0},
		{"a command that ignores its stdin", []byte(big), "exit 7", "", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, ex, bash.Request{Command: tt.command, Stdin: tt.stdin, Timeout: 30 * time.Second})
			if got := strings.TrimLeft(res.Stdout.Text(), " "); got != tt.want {
				t.Errorf("stdout %q, want %q", got, tt.want)
			}
			if res.ExitCode == nil || *res.ExitCode != tt.code || res.TimedOut {
				t.Errorf("ExitCode %s, TimedOut %v; want %d", codeString(res.ExitCode), res.TimedOut, tt.code)
			}
		})
	}
}

func TestWorkdir(t *testing.T) {
	s := sharedServer(t)
	ex := newExecutor(t, serverConfig(s))
	for _, dir := range []string{"sub dir", "-"} {
		if err := os.MkdirAll(filepath.Join(s.Home, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ok := []struct{ workdir, want string }{
		{"", s.Home},  // the default "~"
		{"~", s.Home}, // home
		{"~/sub dir", filepath.Join(s.Home, "sub dir")}, // under home
		{"sub dir", filepath.Join(s.Home, "sub dir")},   // relative: to home too
		{"-", filepath.Join(s.Home, "-")},               // a directory named "-", not $OLDPWD
		{"/", "/"},
		{"/tmp/../tmp", "/tmp"},
	}
	for _, tt := range ok {
		res := mustRun(t, ex, bash.Request{Command: "pwd -P", Workdir: tt.workdir})
		if got := strings.TrimSuffix(res.Stdout.Text(), "\n"); got != tt.want {
			t.Errorf("Workdir %q: pwd printed %q, want %q", tt.workdir, got, tt.want)
		}
	}
	bad := []struct {
		workdir string
		is      error
	}{
		{filepath.Join(t.TempDir(), "missing"), fs.ErrNotExist},
		{file, syscall.ENOTDIR},
	}
	for _, tt := range bad {
		_, err := runReq(ex, bash.Request{Command: "true", Workdir: tt.workdir})
		var se *SpawnError
		switch {
		case !errors.As(err, &se):
			t.Errorf("Workdir %q: error %v, want a *SpawnError", tt.workdir, err)
		case !errors.Is(err, tt.is):
			t.Errorf("Workdir %q: error %v does not match %v", tt.workdir, err, tt.is)
		case !strings.Contains(err.Error(), ex.Host()) || !strings.Contains(err.Error(), tt.workdir):
			t.Errorf("Workdir %q: error %q does not name the host %s and the directory", tt.workdir, err, ex.Host())
		}
	}
}

// TestNoisyLoginShell runs commands for a remote user whose ~/.bashrc (which Debian's bash reads
// for commands sshd starts) prints to both streams and exports a variable: the noise must not reach
// the command's output, and the command's own bash must not read the file again.
func TestNoisyLoginShell(t *testing.T) {
	s := sshdStart(t, sshdtest.Options{})
	rc := "echo NOISE-OUT; echo NOISE-ERR >&2; printf 'no newline'; export NOISE_VAR=from-rc\n"
	if err := os.WriteFile(filepath.Join(s.Home, ".bashrc"), []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	ex := newExecutor(t, serverConfig(s))
	res := mustRun(t, ex, bash.Request{Command: `echo "hi $NOISE_VAR"; echo err >&2`})
	if got := res.Stdout.Text(); got != "hi from-rc\n" {
		t.Errorf("stdout %q, want %q", got, "hi from-rc\n")
	}
	if got := res.Stderr.Text(); got != "err\n" {
		t.Errorf("stderr %q, want %q", got, "err\n")
	}
}

func TestUnsendable(t *testing.T) {
	ex := newExecutor(t, serverConfig(sharedServer(t)))
	tests := []struct {
		name string
		req  bash.Request
		want string
	}{
		{"NUL in the command", bash.Request{Command: "echo a\x00b"}, "NUL"},
		{"NUL in a value", bash.Request{Command: "true", Env: map[string]string{"V": "a\x00"}}, "NUL"},
		{"= in a name", bash.Request{Command: "true", Env: map[string]string{"A=B": "x"}}, `"A=B"`},
		{"a name like an option", bash.Request{Command: "true", Env: map[string]string{"-i": "x"}}, `"-i"`},
		{"a command over 128 KiB", bash.Request{Command: "echo " + strings.Repeat("x", 128<<10)}, "131071"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runReq(ex, tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run returned %v, want an error mentioning %s", err, tt.want)
			}
			spec, _ := ex.Resolve(tt.req)
			task, err := ex.Start(spec)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			<-task.Done()
			if r, _ := ex.ReadOutput(task.ID()); !strings.Contains(r.Delta, "spawn failed: ") || !strings.Contains(r.Delta, tt.want) {
				t.Errorf("the task's read is %q, want a spawn failure mentioning %s", r.Delta, tt.want)
			}
		})
	}
}

func TestMissingBash(t *testing.T) {
	s := sshdStart(t, sshdtest.Options{Env: []string{"PATH=/nonexistent"}})
	ex := newExecutor(t, serverConfig(s))
	_, err := runReq(ex, bash.Request{Command: "true"})
	var se *SpawnError
	if !errors.As(err, &se) || !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("Run with no bash in the remote PATH returned %v, want a *SpawnError matching exec.ErrNotFound", err)
	}
	if msg := err.Error(); !strings.Contains(msg, ex.Host()) || !strings.Contains(msg, "bash not found") {
		t.Errorf("error %q does not name the host and the missing bash", msg)
	}

	cfg := serverConfig(sharedServer(t))
	cfg.RemoteBash = "/nonexistent/bash"
	ex = newExecutor(t, cfg)
	if _, err := runReq(ex, bash.Request{Command: "true"}); !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "/nonexistent/bash") {
		t.Errorf("Run with RemoteBash %q returned %v, want an error naming it and matching exec.ErrNotFound", cfg.RemoteBash, err)
	}
}

// TestRemoteScrubIsEnvpolicy: the remote launcher scrubs the login environment by the same rules
// as bash-local (internal/envpolicy): patterns and prefixes, carrier words as whole words, the
// ordinary names those spare, and values shaped like secrets. Each entry's fate is envpolicy's own
// answer, so the two cannot drift apart.
func TestRemoteScrubIsEnvpolicy(t *testing.T) {
	ambient := []string{
		"DATABASE_URL=postgres://app:hunter2@db.internal/app", "REDIS_URL=redis://:pw@cache:6379/0",
		"MYSQL_PWD=x", "NPM_CONFIG__AUTH=x", "GH_PAT=x", "CI_JOB_JWT=x", "SENTRY_DSN=https://k@o1.ingest.sentry.io/1",
		"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/x", "DOCKER_AUTH_CONFIG=x", "SSH_AUTH_SOCK=/tmp/agent.1",
		"COOKIE=x", "BEARER=x", "SESSION=x", "NETRC=x", "SESSION_MANAGER=local/h:@/tmp/.ICE-unix/1",
		"INNOCENT=ghp_0123456789abcdefghijABCDEFGHIJ0123", "AWS_ID=AKIAIOSFODNN7EXAMPLE", "NOT_AWS=xAKIAIOSFODNN7EXAMPLE",
		"XDG_SESSION_ID=3", "DESKTOP_SESSION=gnome", "GOPATH=/go", "GIT_AUTHOR_NAME=me", "PLAIN_URL=https://example.com/a:b",
		"LOWER_secret=x", "BASHSSH_KEEP_PWD=kept", "LC_ALL=C.UTF-8",
	}
	s := sshdStart(t, sshdtest.Options{Env: ambient})
	cfg := serverConfig(s)
	cfg.KeepEnv = []string{"BASHSSH_KEEP_PWD"}
	ex := newExecutor(t, cfg)
	policy, err := envpolicy.New(nil, nil, cfg.KeepEnv)
	if err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, ex, bash.Request{Command: "env -0"})
	got := map[string]string{}
	for _, kv := range strings.Split(res.Stdout.Text(), "\x00") {
		if name, value, ok := strings.Cut(kv, "="); ok {
			got[name] = value
		}
	}
	scrubbed := 0
	for _, kv := range ambient {
		name, value, _ := strings.Cut(kv, "=")
		v, present := got[name]
		want := !policy.ScrubbedEntry(name, value)
		if !want {
			scrubbed++
		}
		if present != want || present && v != value {
			t.Errorf("%s: passed %v (%q), envpolicy says %v", name, present, v, want)
		}
	}
	if scrubbed < 15 {
		t.Errorf("only %d of the entries are scrubbed: the table no longer tests the rules", scrubbed)
	}
}
