// Package sandboxtest is the escape suite for a sandboxed shell: the ways a command tries to write
// outside its workspace, read what it may not, reach the network, a socket, a signal or a trace
// target outside its sandbox, or loosen its own sandbox, each checked from outside by its side
// effects; and the legitimate work that must keep working inside. It is to a sandbox what package
// bashtest is to an executor: any sandboxed backend runs it in one line.
//
// The cases run real commands through a [Shell]. Those that need a system call bash cannot make
// (connecting to a Unix socket, ptrace, a nested Landlock ruleset, setns) run a probe: the test
// binary itself, whose TestMain calls [ProbeMain] first.
package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// Result is what one command did: its standard output and error, interleaved as the shell gives
// them, and its exit code (-1 when a signal ended it).
type Result struct {
	Output   string
	ExitCode int
}

// Shell runs commands in the sandbox under test. Run runs one and returns when it has ended; an
// error means the command could not be run at all.
type Shell interface {
	Run(ctx context.Context, command string) (Result, error)
}

// Executor returns ex as a Shell: each command is one foreground Run of ex, with the executor's
// sandbox policy, and the output is stdout followed by stderr.
func Executor(ex bash.Executor) Shell { return executorShell{ex} }

type executorShell struct{ ex bash.Executor }

func (s executorShell) Run(ctx context.Context, command string) (Result, error) {
	res, err := s.ex.Run(ctx, bash.Request{Command: command})
	if err != nil {
		return Result{}, err
	}
	r := Result{Output: res.Stdout.Text() + res.Stderr.Text(), ExitCode: -1}
	if res.ExitCode != nil {
		r.ExitCode = *res.ExitCode
	}
	return r, nil
}

// Options describe the sandbox under test and the fixtures the kit may use.
type Options struct {
	// Workdir is where commands start: it must be writable inside the sandbox. Cases make their
	// own subdirectories in it.
	Workdir string
	// Outside is a directory the test may write and the sandbox may read but not write. Cases put
	// their targets and listeners in it.
	Outside string
	// Denied is a directory the sandbox's policy denies reading. The kit writes secrets in it.
	Denied string
	// Network reports that the policy lets the network on: the TCP and UDP cases then do not
	// apply (the Unix socket cases still do).
	Network bool
	// Probe turns on the cases that need the probe: the test binary's TestMain must call
	// ProbeMain, and the binary must be executable by the sandboxed commands.
	Probe bool
	// Setuid is a set-user-ID program owned by root that prints its effective user id when given
	// "-u" (a copy of id, say); the setuid case checks it gains nothing. Empty, or a test running
	// as root, leaves the case out.
	Setuid string
	// Go and Git turn on the cases that build a Go program and commit with git in the workspace.
	Go, Git bool
	// Persistent reports that consecutive commands share one shell, whose state must survive.
	Persistent bool
	// Slack bounds each command (60 s when zero; a cold Go build takes a while).
	Slack time.Duration
}

// NewOptions returns the fixtures of one run of the kit under t: Workdir, Outside and Denied made
// as fresh directories (mode 0755, so an unprivileged sandbox may enter them) in t.TempDir(),
// and Go and Git on when those programs are on PATH. The caller confines its shell to Workdir,
// denies it Denied, and sets the rest (Probe, Setuid, Network, Persistent).
func NewOptions(t testing.TB) Options {
	t.Helper()
	base := t.TempDir()
	o := Options{Workdir: filepath.Join(base, "work"), Outside: filepath.Join(base, "outside"), Denied: filepath.Join(base, "denied")}
	for _, d := range []string{o.Workdir, o.Outside, o.Denied} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	_, goErr := exec.LookPath("go")
	_, gitErr := exec.LookPath("git")
	o.Go, o.Git = goErr == nil, gitErr == nil
	return o
}

func (o Options) validate() error {
	var errs []error
	for name, p := range map[string]string{"Workdir": o.Workdir, "Outside": o.Outside, "Denied": o.Denied} {
		if !filepath.IsAbs(p) {
			errs = append(errs, fmt.Errorf("sandboxtest: Options.%s %q is not absolute", name, p))
		}
	}
	return errors.Join(errs...)
}

// Run runs every case that applies as a subtest of t, each against the shell newShell returns for
// it (newShell may register cleanups on the subtest). A case that finds a way out, or legitimate
// work that fails, is reported with t.Error naming what broke.
func Run(t *testing.T, newShell func(t *testing.T) Shell, opts Options) {
	t.Helper()
	if err := opts.validate(); err != nil {
		t.Fatal(err)
	}
	if opts.Slack == 0 {
		opts.Slack = 60 * time.Second
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if why := tc.skip(opts); why != "" {
				t.Skip(why)
			}
			c := &kc{T: t, opts: opts, shell: newShell(t)}
			c.setup()
			tc.check(c)
		})
	}
}

// kc is one case's context: the shell, its own directories inside the workspace (W), outside it
// (O) and in the denied directory (D).
type kc struct {
	*testing.T
	opts    Options
	shell   Shell
	W, O, D string
}

func (c *kc) setup() {
	c.Helper()
	name := strings.ReplaceAll(c.Name(), "/", "-")
	for _, d := range []struct {
		dst  *string
		root string
	}{{&c.W, c.opts.Workdir}, {&c.O, c.opts.Outside}, {&c.D, c.opts.Denied}} {
		*d.dst = filepath.Join(d.root, name)
		if err := os.MkdirAll(*d.dst, 0o755); err != nil {
			c.Fatal(err)
		}
		// The mode is set again: a umask must not keep an unprivileged sandbox out.
		if err := os.Chmod(*d.dst, 0o755); err != nil {
			c.Fatal(err)
		}
	}
}

// run runs command in W with W, O and D exported, and returns what it did.
func (c *kc) run(command string) Result {
	c.Helper()
	return c.runRaw(`cd "$W" && ` + command)
}

// runRaw runs command with W, O and D exported, wherever the shell is.
func (c *kc) runRaw(command string) Result {
	c.Helper()
	ctx, cancel := context.WithTimeout(c.Context(), c.opts.Slack)
	defer cancel()
	env := "export W=" + quote(c.W) + " O=" + quote(c.O) + " D=" + quote(c.D)
	if c.opts.Probe {
		if exe, err := os.Executable(); err == nil {
			env += " PROBE=" + quote(exe)
		}
	}
	res, err := c.shell.Run(ctx, env+"; "+command)
	if err != nil {
		c.Fatalf("command %q could not be run: %v", command, err)
	}
	return res
}

// probe runs the probe with args and reports whether it says the operation succeeded.
func (c *kc) probe(args ...string) (escaped bool, out string) {
	c.Helper()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = quote(a)
	}
	res := c.run("\"$PROBE\" " + probeFlag + " " + strings.Join(quoted, " "))
	return strings.Contains(res.Output, probeEscaped), res.Output
}

// write puts content in the file at path from outside the sandbox.
func (c *kc) write(path, content string) {
	c.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		c.Fatal(err)
	}
}

// absent fails the case when path exists: something inside the sandbox created it.
func (c *kc) absent(path, how string, res Result) {
	c.Helper()
	if _, err := os.Lstat(path); err == nil {
		c.Errorf("escape: %s created %s outside the workspace (output: %q)", how, path, res.Output)
	}
}

// unchanged fails the case when the file at path no longer holds want.
func (c *kc) unchanged(path, want, how string, res Result) {
	c.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		c.Errorf("escape: %s changed %s outside the workspace: now %q, %v (output: %q)", how, path, got, err, res.Output)
	}
}

// holds fails the case when the file at path does not hold want: legitimate work failed.
func (c *kc) holds(path, want, what string, res Result) {
	c.Helper()
	got, err := os.ReadFile(path)
	if err != nil || strings.TrimSpace(string(got)) != want {
		c.Errorf("%s must work inside the sandbox: %s holds %q, %v (output: %q, exit %d)", what, path, got, err, res.Output, res.ExitCode)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func itoa(n int) string { return strconv.Itoa(n) }
