package bashssh

import (
	"bytes"
	"errors"
	"io/fs"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/envpolicy"
)

// runLauncher runs a launcher command line the way sshd does, with a login shell (sh -c), on this
// machine, and returns the command's stdout (after the control line) and stderr (after its marker).
func runLauncher(t *testing.T, line, marker string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as sshd starts a session
	if err := cmd.Run(); err != nil {
		t.Fatalf("the launcher failed: %v; stderr %q", err, errb.String())
	}
	o, e := out.String(), errb.String()
	i := strings.Index(o, marker+" ok ")
	j := strings.Index(e, marker+"\n")
	if i < 0 || j < 0 {
		t.Fatalf("no control lines in stdout %q / stderr %q", o, e)
	}
	o = o[i:]
	o = o[strings.IndexByte(o, '\n')+1:]
	return o, e[j+len(marker)+1:]
}

// FuzzLaunchQuoting checks that any command word and any variable value (without NUL) reach the
// remote command byte for byte through the login shell and the launcher.
func FuzzLaunchQuoting(f *testing.F) {
	for _, seed := range []struct{ word, value string }{
		{"plain", "plain"},
		{"it's", `a "b" 'c'`},
		{"$HOME `id` $(id) \\", "\n\t\r"},
		{"", ""},
		{"-n", "-e"},
		{"ü ✓ \xff", "\x01\x7f"},
		{"'", "'\\''"},
		{"%s %d", "!!"},
	} {
		f.Add(seed.word, seed.value)
	}
	f.Fuzz(func(t *testing.T, word, value string) {
		const marker = "dsh-bash-ssh-fuzz"
		env, err := envEntries(map[string]string{"FUZZ_V": value}, "abc-1")
		command := `printf '%s\0%s' "$FUZZ_V" ` + quote(word)
		if strings.ContainsRune(value, 0) {
			if err == nil {
				t.Fatal("a NUL in a value was accepted")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		line, err := launchArgs{marker: marker, workdir: "/", bash: "bash", env: env, command: command}.build()
		if strings.ContainsRune(word, 0) {
			if err == nil {
				t.Fatal("a NUL in the command was accepted")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		out, errOut := runLauncher(t, line, marker)
		if want := value + "\x00" + word; out != want || errOut != "" {
			t.Errorf("the command printed %q (stderr %q), want %q", out, errOut, want)
		}
	})
}

func TestQuote(t *testing.T) {
	for _, s := range []string{"", "a", "a b", "'", "''", "a'b'c", "\n", "$x"} {
		q := quote(s)
		if !strings.HasPrefix(q, "'") || !strings.HasSuffix(q, "'") {
			t.Errorf("quote(%q) = %s, not single-quoted", s, q)
		}
		out, err := exec.Command("sh", "-c", "printf %s "+q).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh read quote(%q) = %s as %q (%v)", s, q, out, err)
		}
	}
}

func TestEnvEntries(t *testing.T) {
	got, err := envEntries(map[string]string{"B": "2", "A": "1", "TERM": "xterm"}, "t-1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"NO_COLOR=1", "TERM=xterm", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "A=1", "B=2", envpolicy.TagVar + "=t-1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("envEntries = %q, want %q", got, want)
	}
	for _, name := range []string{"", "A=B", "-x", "a\x00b"} {
		if _, err := envEntries(map[string]string{name: "v"}, "t-1"); err == nil {
			t.Errorf("envEntries accepted the name %q", name)
		}
	}
}

func TestLaunchFailure(t *testing.T) {
	e := &Executor{host: "u@h:22"}
	tests := []struct {
		line   string
		is     error
		reason string
	}{
		{"workdir notexist /x: No such file or directory", fs.ErrNotExist, "workdir /x: No such file or directory"},
		{"workdir notdir /f: Not a directory", syscall.ENOTDIR, "workdir /f: Not a directory"},
		{"workdir permission /p: Permission denied", fs.ErrPermission, "workdir /p: Permission denied"},
		{"bash zsh: not found in the remote PATH", exec.ErrNotFound, "zsh: not found in the remote PATH"},
		{"something new", nil, "something new"},
	}
	for _, tt := range tests {
		err := e.launchFailure(tt.line)
		if tt.is != nil && !errors.Is(err, tt.is) || tt.is == nil && err.Err != nil {
			t.Errorf("launchFailure(%q) = %v, want it to match %v", tt.line, err, tt.is)
		}
		if want := "bashssh: start on u@h:22: " + tt.reason; err.Error() != want {
			t.Errorf("launchFailure(%q) says %q, want %q", tt.line, err, want)
		}
	}
}

func TestSignalName(t *testing.T) {
	for in, want := range map[string]string{"TERM": "SIGTERM", "KILL": "SIGKILL", "SIGINT": "SIGINT", "XYZ@openssh.com": "SIGUNKNOWN", "": "SIGUNKNOWN"} {
		if got := signalName(in); got != want {
			t.Errorf("signalName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	base := Config{Host: "h", IdentityFiles: []string{"k"}, KnownHostsFiles: []string{"kh"}}
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"no host", func(c *Config) { c.Host = " " }, "Host"},
		{"host with a user", func(c *Config) { c.Host = "u@h" }, "Host"},
		{"port out of range", func(c *Config) { c.Port = 70000 }, "Port"},
		{"no way to authenticate", func(c *Config) { c.IdentityFiles, c.NoAgent = nil, true }, "IdentityFiles"},
		{"one session", func(c *Config) { c.MaxSessions = 1 }, "MaxSessions"},
		{"negative connections", func(c *Config) { c.MaxConnections = -1 }, "MaxConnections"},
		{"negative dial timeout", func(c *Config) { c.DialTimeout = -1 }, "DialTimeout"},
		{"negative timeout", func(c *Config) { c.Timeout = -1 }, "Timeout"},
		{"head not below the cap", func(c *Config) { c.MaxOutputBytes, c.HeadBytes = 100, 100 }, "HeadBytes"},
		{"grace too long", func(c *Config) { c.Grace = bash.MaxGrace + 1 }, "Grace"},
		{"pattern with a glob", func(c *Config) { c.ScrubPatterns = []string{"KEY*"} }, "ScrubPatterns"},
		{"keep an impossible name", func(c *Config) { c.KeepEnv = []string{"A=B"} }, "KeepEnv"},
		{"NUL in the workdir", func(c *Config) { c.Workdir = "a\x00" }, "Workdir"},
	}
	for _, tt := range tests {
		cfg := base
		tt.edit(&cfg)
		_, _, err := cfg.withDefaults()
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: error %v, want one naming %s", tt.name, err, tt.field)
		}
	}
	if _, err := New(Config{Host: "h", IdentityFiles: []string{"/nonexistent/key"}, KnownHostsFiles: []string{"kh"}}); err == nil || !strings.Contains(err.Error(), "/nonexistent/key") {
		t.Errorf("New with a missing identity file: %v, want an error naming it", err)
	}
}
