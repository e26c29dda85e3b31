package bashlocal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

func TestRunResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		command    string
		wantCode   string
		wantSignal string
		wantOut    string
		wantErr    string
	}{
		{name: "stdout", command: "echo hi", wantCode: "0", wantOut: "hi\n"},
		{name: "stderr separate", command: "echo oops >&2", wantCode: "0", wantErr: "oops\n"},
		{name: "both streams", command: "echo out; echo err >&2", wantCode: "0", wantOut: "out\n", wantErr: "err\n"},
		{name: "exit code", command: "exit 42", wantCode: "42"},
		{name: "self-signalled", command: "kill -TERM $$", wantCode: "nil", wantSignal: "SIGTERM"},
		{name: "argv is bash -c", command: `printf '%s' "$0"`, wantCode: "0", wantOut: "bash"},
		{name: "no stdin reads EOF", command: "cat; echo done", wantCode: "0", wantOut: "done\n"},
		{name: "stdin is a character device without bytes", command: "test -c /dev/stdin && echo char", wantCode: "0", wantOut: "char\n"},
		{name: "terminal overrides", command: `echo "$NO_COLOR/$TERM/$PAGER/$GIT_PAGER/$GIT_TERMINAL_PROMPT"`, wantCode: "0", wantOut: "1/dumb/cat/cat/0\n"},
	}
	h := newHarness(t, Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := h.run(h.req(tc.command))
			if got := exitCode(res); got != tc.wantCode || res.Signal != tc.wantSignal {
				t.Errorf("exit %s signal %q; want exit %s signal %q", got, res.Signal, tc.wantCode, tc.wantSignal)
			}
			if res.Stdout.Text() != tc.wantOut || res.Stderr.Text() != tc.wantErr {
				t.Errorf("stdout %q stderr %q; want %q and %q", res.Stdout.Text(), res.Stderr.Text(), tc.wantOut, tc.wantErr)
			}
			if res.TimedOut || res.Aborted {
				t.Errorf("TimedOut=%v Aborted=%v; want neither", res.TimedOut, res.Aborted)
			}
			if res.Stdout.Truncated() || res.Stderr.Truncated() {
				t.Error("small output reported as truncated")
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	wd, _ := os.Getwd()
	owner := bash.OwnerToken("agent")
	tests := []struct {
		name    string
		cfg     Config
		req     bash.Request
		want    bash.Request
		wantErr string
	}{
		{name: "defaults", cfg: Config{Limits: bash.Limits{Timeout: 5 * time.Second}},
			req:  bash.Request{Command: "echo hi"},
			want: bash.Request{Command: "echo hi", Workdir: wd, Timeout: 5 * time.Second, StdoutMaxBytes: bash.DefaultMaxOutputBytes}},
		{name: "configured workdir", cfg: Config{Workdir: "/tmp"},
			req:  bash.Request{Command: "pwd"},
			want: bash.Request{Command: "pwd", Workdir: "/tmp", Timeout: bash.DefaultTimeout, StdoutMaxBytes: bash.DefaultMaxOutputBytes}},
		{name: "request workdir wins verbatim", cfg: Config{Workdir: "/tmp"},
			req:  bash.Request{Command: "pwd", Workdir: "rel/dir"},
			want: bash.Request{Command: "pwd", Workdir: "rel/dir", Timeout: bash.DefaultTimeout, StdoutMaxBytes: bash.DefaultMaxOutputBytes}},
		{name: "timeout capped", cfg: Config{Limits: bash.Limits{MaxTimeout: 2 * time.Second}},
			req:  bash.Request{Command: "true", Timeout: 99999 * time.Millisecond},
			want: bash.Request{Command: "true", Workdir: wd, Timeout: 2 * time.Second, StdoutMaxBytes: bash.DefaultMaxOutputBytes}},
		{name: "stdin env owner kept", cfg: Config{},
			req: bash.Request{Command: "cat", Stdin: []byte{}, Env: map[string]string{"A": "1"}, Owner: owner, StdoutMaxBytes: 7},
			want: bash.Request{Command: "cat", Workdir: wd, Timeout: bash.DefaultTimeout, StdoutMaxBytes: 7,
				Stdin: []byte{}, Env: map[string]string{"A": "1"}, Owner: owner}},
		{name: "blank command", req: bash.Request{Command: " \n\t"}, wantErr: "Request.Command"},
		{name: "negative timeout", req: bash.Request{Command: "true", Timeout: -1}, wantErr: "Request.Timeout"},
		{name: "negative stdout budget", req: bash.Request{Command: "true", StdoutMaxBytes: -1}, wantErr: "Request.StdoutMaxBytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close(context.Background())
			got, err := ex.Resolve(tc.req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve error = %v; want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Command != tc.want.Command || got.Workdir != tc.want.Workdir || got.Timeout != tc.want.Timeout ||
				got.StdoutMaxBytes != tc.want.StdoutMaxBytes || got.Owner != tc.want.Owner ||
				(got.Stdin == nil) != (tc.want.Stdin == nil) || (got.Env == nil) != (tc.want.Env == nil) {
				t.Errorf("Resolve = %+v\nwant      %+v", got, tc.want)
			}
		})
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Limits: bash.Limits{Timeout: -1}}, "Limits.Timeout"},
		{Config{Limits: bash.Limits{MaxTimeout: -time.Second}}, "Limits.MaxTimeout"},
		{Config{Limits: bash.Limits{MaxOutputBytes: -1}}, "Limits.MaxOutputBytes"},
		{Config{Limits: bash.Limits{MaxOutputBytes: 100, HeadBytes: 100}}, "Limits.HeadBytes"},
		{Config{Limits: bash.Limits{HeadBytes: -5}}, "Limits.HeadBytes"},
		{Config{Limits: bash.Limits{MaxSpillBytes: -1}}, "Limits.MaxSpillBytes"},
		{Config{Limits: bash.Limits{Grace: -1}}, "Limits.Grace"},
		{Config{Limits: bash.Limits{Grace: bash.MaxGrace + time.Millisecond}}, "Limits.Grace"},
		{Config{Limits: bash.Limits{Timeout: time.Hour, MaxTimeout: time.Minute}}, "Limits.Timeout 1h0m0s is above Limits.MaxTimeout"},
		{Config{Limits: bash.Limits{Timeout: 11 * time.Minute}}, "Limits.Timeout"},
		{Config{ScrubPatterns: []string{"A-B"}}, "Config.ScrubPatterns"},
		{Config{ScrubPrefixes: []string{""}}, "Config.ScrubPrefixes"},
		{Config{KeepEnv: []string{"A=B"}}, "Config.KeepEnv"},
		{Config{MaxProcesses: -1}, "Config.MaxProcesses"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.field+" ") {
			t.Errorf("New(%+v) = %v; want an error naming %s", tc.cfg, err, tc.field)
		}
	}
}

func TestRunWorkdir(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Workdir: "/tmp"})
	if out := h.run(h.req("pwd")).Stdout.Text(); out != "/tmp\n" {
		t.Errorf("configured workdir: pwd = %q", out)
	}
	r := h.req("pwd")
	r.Workdir = "/"
	if out := h.run(r).Stdout.Text(); out != "/\n" {
		t.Errorf("request workdir: pwd = %q", out)
	}
	r.Workdir = filepath.Join(t.TempDir(), "missing")
	_, err := h.ex.Run(context.Background(), h.spec(r))
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), r.Workdir) {
		t.Errorf("Run in a missing workdir = %v; want a not-exist error naming it", err)
	}
}

func TestRunTimeoutAndAbort(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		r := h.req("sleep 60")
		r.Timeout = 100 * time.Millisecond
		res := h.run(r)
		if !res.TimedOut || res.Aborted || res.Signal != "SIGTERM" || res.Timeout != 100*time.Millisecond {
			t.Errorf("result %+v; want TimedOut only, SIGTERM, Timeout 100ms", res)
		}
	})
	t.Run("timeout of a TERM-trapping command escalates to SIGKILL", func(t *testing.T) {
		t.Parallel()
		r := h.req("trap '' TERM; echo armed; sleep 60")
		// Long enough for bash to set its trap before the deadline, even on a loaded machine.
		r.Timeout = time.Second
		res := h.run(r)
		if !res.TimedOut || res.Signal != "SIGKILL" || res.Stdout.Text() != "armed\n" {
			t.Errorf("result %+v; want TimedOut, SIGKILL, stdout armed", res)
		}
	})
	t.Run("trapping TERM and exiting 0 is still a timeout", func(t *testing.T) {
		t.Parallel()
		r := h.req("trap 'exit 0' TERM; sleep 60 & wait")
		r.Timeout = time.Second
		res := h.run(r)
		if !res.TimedOut || exitCode(res) != "0" || res.Signal != "" {
			t.Errorf("result %+v; want TimedOut with exit 0", res)
		}
	})
	t.Run("abort", func(t *testing.T) {
		t.Parallel()
		ready, _ := pidFile(t, "ready")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			waitFor(t, "the command to start", func() bool { _, err := os.Stat(ready); return err == nil })
			cancel()
		}()
		res, err := h.ex.Run(ctx, h.spec(h.req("echo $$ > "+ready+"; sleep 60")))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Aborted || res.TimedOut || res.Signal != "SIGTERM" {
			t.Errorf("result %+v; want Aborted only, SIGTERM", res)
		}
	})
	t.Run("aborted before spawn", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errors.New("too late"))
		marker := filepath.Join(t.TempDir(), "ran")
		_, err := h.ex.Run(ctx, h.spec(h.req("touch "+marker)))
		if !errors.Is(err, bash.ErrAbortedBeforeSpawn) || err.Error() != "aborted before spawn: too late" {
			t.Errorf("Run = %v; want %q", err, "aborted before spawn: too late")
		}
		if _, statErr := os.Stat(marker); statErr == nil {
			t.Error("the command ran although the context was done")
		}
	})
}

func TestRunDrainsAfterExit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Limits: bash.Limits{Grace: 100 * time.Millisecond}})
	pidPath, pid := pidFile(t, "bg")
	r := h.req("sleep 600 & echo $! > " + pidPath + "; echo shell-done")
	r.Timeout = 30 * time.Second
	res := h.run(r)
	if res.TimedOut || exitCode(res) != "0" || res.Stdout.Text() != "shell-done\n" {
		t.Fatalf("result %+v; want exit 0 with shell-done, not timed out (the drain must not wait for the survivor)", res)
	}
	bg := pid()
	if !alive(bg) {
		t.Fatal("the background survivor died with the run; Run must not kill it")
	}
	if err := h.ex.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if alive(bg) {
		t.Errorf("survivor %d still alive after Close", bg)
	}
}

func TestRunStdin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	r := h.req(`cat; test -S /dev/stdin && echo " socket"`)
	r.Stdin = []byte("fed")
	if out := h.run(r).Stdout.Text(); out != "fed socket\n" {
		t.Errorf("stdout %q; want the bytes echoed and a socket on fd 0", out)
	}
	r = h.req("cat; echo end")
	r.Stdin = []byte{}
	if out := h.run(r).Stdout.Text(); out != "end\n" {
		t.Errorf("empty stdin: stdout %q", out)
	}
	r = h.req("exit 7")
	r.Stdin = make([]byte, 1<<20)
	res := h.run(r)
	if exitCode(res) != "7" || res.Aborted {
		t.Errorf("ignored 1 MiB stdin: %+v; want exit 7", res)
	}
}

// TestRunEnvironment sets ambient variables, so it does not run in parallel.
func TestRunEnvironment(t *testing.T) {
	t.Setenv("BASHLOCAL_API_KEY", "k")
	t.Setenv("GITHUB_TOKEN", "t")
	t.Setenv("DB_PASSWORD", "p")
	t.Setenv("GPG_PASSPHRASE", "pp")
	t.Setenv("AWS_CREDENTIALS_FILE", "c")
	t.Setenv("DSH_SESSION_ID", "stale")
	t.Setenv("dsh_lower", "stale")
	t.Setenv("BASHLOCAL_PLAIN", "plain")
	t.Setenv("KEEP_THIS_TOKEN", "kept")
	h := newHarness(t, Config{KeepEnv: []string{"KEEP_THIS_TOKEN"}})
	r := h.req(`for v in BASHLOCAL_API_KEY GITHUB_TOKEN DB_PASSWORD GPG_PASSPHRASE AWS_CREDENTIALS_FILE DSH_SESSION_ID dsh_lower BASHLOCAL_PLAIN KEEP_THIS_TOKEN EXPLICIT_SECRET DSH_EXPLICIT TERM; do echo "$v=${!v-unset}"; done`)
	r.Env["EXPLICIT_SECRET"] = "given"
	r.Env["DSH_EXPLICIT"] = "given"
	r.Env["TERM"] = "xterm"
	got := h.run(r).Stdout.Text()
	want := strings.Join([]string{
		"BASHLOCAL_API_KEY=unset", "GITHUB_TOKEN=unset", "DB_PASSWORD=unset", "GPG_PASSPHRASE=unset",
		"AWS_CREDENTIALS_FILE=unset", "DSH_SESSION_ID=unset", "dsh_lower=unset", "BASHLOCAL_PLAIN=plain",
		"KEEP_THIS_TOKEN=kept", "EXPLICIT_SECRET=given", "DSH_EXPLICIT=given", "TERM=xterm", "",
	}, "\n")
	if got != want {
		t.Errorf("environment:\n%s\nwant:\n%s", got, want)
	}
}

func TestRunOutputBudgets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Limits: bash.Limits{MaxOutputBytes: 100, HeadBytes: 20}})
	t.Run("stdout budget raised by a trusted caller, stderr keeps its own", func(t *testing.T) {
		r := h.req("head -c 500 /dev/zero | tr '\\0' x; head -c 500 /dev/zero | tr '\\0' y >&2")
		r.StdoutMaxBytes = 500
		res := h.run(r)
		if res.Stdout.Truncated() || res.Stdout.Text() != strings.Repeat("x", 500) {
			t.Errorf("stdout truncated=%v len=%d; want 500 x untruncated", res.Stdout.Truncated(), len(res.Stdout.Text()))
		}
		if !res.Stderr.Truncated() || len(res.Stderr.Head)+len(res.Stderr.Tail) > 100 {
			t.Errorf("stderr %+v; want truncated within 100 bytes", res.Stderr)
		}
	})
	t.Run("head and tail with a spill file holding everything", func(t *testing.T) {
		res := h.run(h.req("for i in $(seq -w 1 200); do echo line-0$i; done"))
		o := res.Stdout
		if !o.Truncated() || !strings.HasPrefix(o.Head, "line-0001\n") || !strings.HasSuffix(o.Tail, "line-0200\n") {
			t.Fatalf("stdout head %q tail %q; want line-0001 first and line-0200 last", o.Head, o.Tail)
		}
		if o.Spill.Path == "" || o.Spill.Partial {
			t.Fatalf("spill %+v; want a complete spill file", o.Spill)
		}
		b, err := os.ReadFile(o.Spill.Path)
		if err != nil || !strings.Contains(string(b), "line-0001\n") || !strings.HasSuffix(string(b), "line-0200\n") || int64(len(b)) != o.TotalBytes {
			t.Errorf("spill file: %d bytes (%v); want all %d bytes", len(b), err, o.TotalBytes)
		}
		if int64(len(o.Head))+o.OmittedBytes+int64(len(o.Tail)) != o.TotalBytes {
			t.Errorf("head %d + omitted %d + tail %d != total %d", len(o.Head), o.OmittedBytes, len(o.Tail), o.TotalBytes)
		}
	})
	t.Run("exactly at the budget is not truncated", func(t *testing.T) {
		res := h.run(h.req("head -c 100 /dev/zero | tr '\\0' z"))
		if res.Stdout.Truncated() || res.Stdout.Spill.Path != "" || res.Stdout.Text() != strings.Repeat("z", 100) {
			t.Errorf("stdout %+v; want 100 z, no truncation, no spill", res.Stdout)
		}
	})
}

func TestRunPartialSpill(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Limits: bash.Limits{MaxOutputBytes: 100, MaxSpillBytes: 1000}})
	res := h.run(h.req("head -c 5000 /dev/zero | tr '\\0' p"))
	o := res.Stdout
	if !o.Spill.Partial || o.Spill.Path == "" {
		t.Fatalf("spill %+v; want a partial spill file", o.Spill)
	}
	if st, err := os.Stat(o.Spill.Path); err != nil || st.Size() != 1000 {
		t.Errorf("partial spill: %v, size %v; want the first 1000 bytes", err, st)
	}
}

// TestDeletedSpillDirIsMadeAgain checks that a spill directory deleted under the executor (a temp
// cleaner, `rm -rf /tmp/*` from a command) does not leave every later overflow without its file.
func TestDeletedSpillDirIsMadeAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Limits: bash.Limits{MaxOutputBytes: 100}})
	first := h.run(h.req("seq 1 1000")).Stdout.Spill.Path
	if first == "" {
		t.Fatal("no spill file: the test proves nothing")
	}
	if res := h.run(h.req("rm -rf '" + filepath.Dir(first) + "'")); exitCode(res) != "0" {
		t.Fatalf("rm: %s", res.Stderr.Text())
	}
	second := h.run(h.req("seq 1 1000")).Stdout.Spill.Path
	b, err := os.ReadFile(second)
	if err != nil || !strings.HasSuffix(string(b), "\n1000\n") {
		t.Fatalf("spill after the directory was deleted: %q (%v)", second, err)
	}
	if filepath.Dir(second) == filepath.Dir(first) || h.ex.SpillDir() != filepath.Dir(second) {
		t.Errorf("spill %s, SpillDir %s: want a fresh directory in place of %s", second, h.ex.SpillDir(), filepath.Dir(first))
	}
}

func TestCloseRemovesSpills(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		ex, err := New(Config{Limits: bash.Limits{MaxOutputBytes: 10, Grace: testGrace}, SpillDir: t.TempDir(), KeepSpills: keep})
		if err != nil {
			t.Fatal(err)
		}
		spec, _ := ex.Resolve(bash.Request{Command: "seq 1 100"})
		res, err := ex.Run(context.Background(), spec)
		if err != nil || res.Stdout.Spill.Path == "" {
			t.Fatalf("Run: %v, spill %+v", err, res.Stdout.Spill)
		}
		ex.Close(context.Background())
		_, statErr := os.Stat(res.Stdout.Spill.Path)
		if keep != (statErr == nil) {
			t.Errorf("KeepSpills=%v: spill file after Close: %v", keep, statErr)
		}
	}
}
