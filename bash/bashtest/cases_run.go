package bashtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/dsh-go/dsh/bash"
)

func resolveDefaults(c *kc) {
	spec := c.resolve(bash.Request{Command: CmdEcho})
	if spec.Command != CmdEcho {
		c.errorf("Resolve: Command = %q, want %q", spec.Command, CmdEcho)
	}
	if spec.Workdir != c.opts.Workdir {
		c.errorf("Resolve: Workdir = %q, want the configured %q for a request without one", spec.Workdir, c.opts.Workdir)
	}
	if want := c.defaultTimeout(); spec.Timeout != want {
		c.errorf("Resolve: Timeout = %v, want the default %v (capped at the maximum %v) for a request without one", spec.Timeout, want, c.opts.MaxTimeout)
	}
	switch {
	case spec.StdoutMaxBytes != c.opts.MaxOutputBytes:
		c.errorf("Resolve: StdoutMaxBytes = %d, want the per-stream default %d", spec.StdoutMaxBytes, c.opts.MaxOutputBytes)
	}
	if spec.Stdin != nil {
		c.errorf("Resolve: Stdin = %q, want nil: the absence of stdin is kept", spec.Stdin)
	}
	if spec.Env != nil {
		c.errorf("Resolve: Env = %v, want nil: the absence of Env is kept", spec.Env)
	}
	if spec.Owner != "" {
		c.errorf("Resolve: Owner = %q, want empty: the absence of an owner is kept", spec.Owner)
	}
	if tasks := c.list(); len(tasks) != 0 {
		c.errorf("after Resolve, List has %d tasks, want none: Resolve starts nothing", len(tasks))
	}
}

func resolveTimeoutCap(c *kc) {
	limit := c.opts.MaxTimeout
	tests := []struct {
		name      string
		requested time.Duration
		want      time.Duration
	}{
		{"over the maximum", limit + time.Hour, limit},
		{"at the maximum", limit, limit},
		{"under the maximum", limit / 2, limit / 2},
		{"one nanosecond", time.Nanosecond, time.Nanosecond},
	}
	for _, tt := range tests {
		if tt.want <= 0 {
			continue
		}
		spec := c.resolve(bash.Request{Command: CmdTrue, Timeout: tt.requested})
		if spec.Timeout != tt.want {
			c.errorf("Resolve with Timeout %v (%s): Timeout = %v, want %v (the request's value, capped at %v)", tt.requested, tt.name, spec.Timeout, tt.want, limit)
		}
	}
}

func resolveVerbatim(c *kc) {
	owner := bash.OwnerToken(" odd\nowner ")
	env := map[string]string{EnvVar: "v a l", "OTHER_VAR": ""}
	stdoutMax := max(12345, 4*c.opts.MaxOutputBytes+1)
	req := bash.Request{
		Command:        "  echo  verbatim  ",
		Workdir:        "relative/bashtest-workdir-not-checked",
		Timeout:        min(time.Second, c.opts.MaxTimeout),
		StdoutMaxBytes: stdoutMax,
		Stdin:          []byte{},
		Env:            env,
		Owner:          owner,
	}
	spec := c.resolve(req)
	if spec.Command != req.Command {
		c.errorf("Resolve: Command = %q, want %q verbatim", spec.Command, req.Command)
	}
	if spec.Workdir != req.Workdir {
		c.errorf("Resolve: Workdir = %q, want the request's %q verbatim (not made absolute, not checked)", spec.Workdir, req.Workdir)
	}
	if spec.Timeout != req.Timeout {
		c.errorf("Resolve: Timeout = %v, want the request's %v", spec.Timeout, req.Timeout)
	}
	if spec.StdoutMaxBytes != stdoutMax {
		c.errorf("Resolve: StdoutMaxBytes = %d, want the request's %d (it is not capped)", spec.StdoutMaxBytes, stdoutMax)
	}
	if spec.Stdin == nil || len(spec.Stdin) != 0 {
		c.errorf("Resolve: Stdin = %#v for a non-nil empty Stdin, want a non-nil empty slice: presence is kept", spec.Stdin)
	}
	if !maps.Equal(spec.Env, env) {
		c.errorf("Resolve: Env = %v, want %v", spec.Env, env)
	}
	if spec.Owner != owner {
		c.errorf("Resolve: Owner = %q, want %q verbatim", spec.Owner, owner)
	}
	spec = c.resolve(bash.Request{Command: CmdTrue, Stdin: []byte("abc")})
	if string(spec.Stdin) != "abc" {
		c.errorf("Resolve: Stdin = %q, want %q", spec.Stdin, "abc")
	}
}

func resolveInvalid(c *kc) {
	tests := []struct {
		name  string
		req   bash.Request
		field string
	}{
		{"empty command", bash.Request{}, "command"},
		{"blank command", bash.Request{Command: " \t\n "}, "command"},
		{"negative timeout", bash.Request{Command: CmdTrue, Timeout: -time.Second}, "timeout"},
		{"negative StdoutMaxBytes", bash.Request{Command: CmdTrue, StdoutMaxBytes: -1}, "stdoutmaxbytes"},
	}
	for _, tt := range tests {
		var err error
		c.call("Resolve", c.quick(), func() { _, err = c.ex.Resolve(tt.req) })
		switch {
		case err == nil:
			c.errorf("Resolve with a %s returned no error", tt.name)
		case !strings.Contains(squash(err.Error()), tt.field):
			c.errorf("Resolve with a %s returned %q, which does not name the field (%s)", tt.name, err, tt.field)
		}
	}
}

// squash lower-cases s and drops everything but letters and digits, so that a field is found
// however an error spells it ("StdoutMaxBytes", "stdout_max_bytes").
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

func requestHandMade(c *kc) {
	// An unresolved request is resolved by Run and Start themselves: zero limits take the
	// defaults (a backend that sizes its buffers from a zero StdoutMaxBytes must not panic).
	for _, req := range []bash.Request{
		{Command: CmdEcho},
		{Command: CmdEcho, Workdir: c.opts.Workdir, Timeout: 0, StdoutMaxBytes: 0},
	} {
		res, _, err := c.run(c.ctx, req, c.endLimit())
		if err != nil {
			c.errorf("Run of an unresolved request (%s) returned %v, want the defaults applied", describe(req), err)
			continue
		}
		if res.Timeout != c.defaultTimeout() {
			c.errorf("Run of a request without a timeout: RunResult.Timeout = %v, want the default %v", res.Timeout, c.defaultTimeout())
		}
		c.wantOutput("Run(unresolved "+CmdEcho+")", "Stdout", res.Stdout, "hi\n")
		task := c.start(req)
		c.mustDone(task, c.quick(), "for a command that ends by itself")
		if read := c.read(task.ID()); read.Delta != "hi\n" {
			c.errorf("Start of an unresolved request: read %q, want %q", read.Delta, "hi\n")
		}
	}
	// What Resolve refuses, Run and Start refuse too, and start nothing.
	for _, tt := range []struct {
		name string
		req  bash.Request
	}{
		{"an empty Command", bash.Request{}},
		{"a negative Timeout", bash.Request{Command: CmdTrue, Timeout: -time.Second}},
		{"a negative StdoutMaxBytes", bash.Request{Command: CmdTrue, StdoutMaxBytes: -1}},
	} {
		if _, _, err := c.run(c.ctx, tt.req, c.endLimit()); err == nil {
			c.errorf("Run of a request with %s returned no error", tt.name)
		}
		if _, err := c.startErr(tt.req, c.quick()); err == nil {
			c.errorf("Start of a request with %s returned no error", tt.name)
		}
	}
	if n := len(c.list()); n != 2 {
		c.errorf("after two Starts and refused ones, List has %d tasks, want 2", n)
	}
}

func runExitAndStreams(c *kc) {
	owner := bash.OwnerToken("ignored-by-run")
	tests := []struct {
		command        string
		code           int
		stdout, stderr string
	}{
		{CmdEcho, 0, "hi\n", ""},
		{CmdTrue, 0, "", ""},
		{CmdExit3, 3, "", ""},
		{CmdStreams, 3, "out", "err\n"},
	}
	for _, tt := range tests {
		spec := c.spec(tt.command, func(r *bash.Request) { r.Owner = owner })
		res := c.mustRun(spec)
		if res.ExitCode == nil || *res.ExitCode != tt.code {
			c.errorf("Run(%q): ExitCode = %s, want %d", tt.command, exitString(res.ExitCode), tt.code)
		}
		if res.Signal != "" || res.TimedOut || res.Aborted {
			c.errorf("Run(%q): Signal %q, TimedOut %v, Aborted %v; want none for a command that exits", tt.command, res.Signal, res.TimedOut, res.Aborted)
		}
		if res.Timeout != spec.Timeout {
			c.errorf("Run(%q): RunResult.Timeout = %v, want the spec's %v", tt.command, res.Timeout, spec.Timeout)
		}
		c.wantOutput(runName(tt.command), "Stdout", res.Stdout, tt.stdout)
		c.wantOutput(runName(tt.command), "Stderr", res.Stderr, tt.stderr)
	}
}

// wantOutput checks that o is the whole, untruncated stream want; what names the run in reports.
func (c *kc) wantOutput(what, stream string, o bash.Output, want string) {
	if o.Text() != want {
		c.errorf("%s: %s.Text() = %q, want %q", what, stream, o.Text(), want)
	}
	if o.Truncated() || o.OmittedBytes != 0 {
		c.errorf("%s: %s is truncated (%d bytes omitted) after %d bytes", what, stream, o.OmittedBytes, len(want))
	}
	if o.TotalBytes != int64(len(want)) {
		c.errorf("%s: %s.TotalBytes = %d, want %d", what, stream, o.TotalBytes, len(want))
	}
	if o.Spill.Path != "" {
		c.errorf("%s: %s.Spill.Path = %q for a stream that was not truncated, want none", what, stream, o.Spill.Path)
	}
}

func runWorkdir(c *kc) {
	res := c.mustRun(c.spec(CmdPwd, nil))
	if want := canonical(c.opts.Workdir) + "\n"; res.Stdout.Text() != want {
		c.errorf("Run(%q) without a Workdir printed %q, want the configured %q", CmdPwd, res.Stdout.Text(), want)
	}
	res = c.mustRun(c.spec(CmdPwd, func(r *bash.Request) { r.Workdir = "/" }))
	if res.Stdout.Text() != "/\n" {
		c.errorf("Run(%q) with Workdir \"/\" printed %q, want \"/\\n\"", CmdPwd, res.Stdout.Text())
	}
}

func runName(command string) string { return fmt.Sprintf("Run(%q)", command) }

// canonical returns dir absolute with symbolic links resolved, or dir when that fails.
func canonical(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

func runStdinEnv(c *kc) {
	timeout := min(c.opts.Slack, c.opts.MaxTimeout)
	tests := []struct {
		name  string
		stdin []byte
		env   map[string]string
		want  string
	}{
		{"stdin and env", []byte("in-bytes\n"), map[string]string{EnvVar: "v a l"}, "in-bytes\n[v a l]"},
		{"no stdin, no env", nil, nil, "[]"},
		{"empty stdin", []byte{}, nil, "[]"},
	}
	for _, tt := range tests {
		spec := c.spec(CmdStdinEnv, func(r *bash.Request) { r.Stdin, r.Env, r.Timeout = tt.stdin, tt.env, timeout })
		res := c.mustRun(spec)
		if res.TimedOut {
			c.errorf("Run(%q) with %s timed out: cat never saw the end of its input (no stdin means /dev/null, given stdin is closed after writing)", CmdStdinEnv, tt.name)
			continue
		}
		if got := res.Stdout.Text(); got != tt.want {
			c.errorf("Run(%q) with %s printed %q, want %q", CmdStdinEnv, tt.name, got, tt.want)
		}
	}
}

func runTimeout(c *kc) {
	timeout := min(sleepTimeout, c.opts.MaxTimeout)
	spec := c.spec(CmdSleep, func(r *bash.Request) { r.Timeout = timeout })
	res, took, err := c.run(c.ctx, spec, c.runLimit(timeout))
	if err != nil {
		c.fatalf("Run(%q) with timeout %v returned %v, want a result: a timeout is an outcome", CmdSleep, timeout, err)
	}
	c.wantStopped(CmdSleep, res, "SIGTERM", nil, true)
	if res.Timeout != timeout {
		c.errorf("Run(%q): RunResult.Timeout = %v, want %v", CmdSleep, res.Timeout, timeout)
	}
	if took < timeout {
		c.errorf("Run(%q) with timeout %v returned after %v, before its deadline", CmdSleep, timeout, took)
	}
}

// wantStopped checks that res is the result of a command the executor stopped, for a timeout when
// timedOut is set or else for an abort, and that it ended with signal (or exit code code).
func (c *kc) wantStopped(command string, res bash.RunResult, signal string, code *int, timedOut bool) {
	cause, other := "TimedOut", "Aborted"
	gotCause, gotOther := res.TimedOut, res.Aborted
	if !timedOut {
		cause, other = other, cause
		gotCause, gotOther = gotOther, gotCause
	}
	if !gotCause {
		c.errorf("Run(%q): %s = false, want true", command, cause)
	}
	if gotOther {
		c.errorf("Run(%q): %s = true as well as %s: exactly one cause is reported", command, other, cause)
	}
	if res.Signal != signal {
		c.errorf("Run(%q): Signal = %q, want %q", command, res.Signal, signal)
	}
	if exitString(res.ExitCode) != exitString(code) {
		c.errorf("Run(%q): ExitCode = %s, want %s", command, exitString(res.ExitCode), exitString(code))
	}
}

func runTimeoutTermTrapped(c *kc) {
	timeout := min(trapTimeout, c.opts.MaxTimeout)
	spec := c.spec(CmdTrapTerm, func(r *bash.Request) { r.Timeout = timeout })
	res, took, err := c.run(c.ctx, spec, c.runLimit(timeout))
	if err != nil {
		c.fatalf("Run(%q) returned %v, want a result", CmdTrapTerm, err)
	}
	c.wantStopped(CmdTrapTerm, res, "SIGKILL", nil, true)
	if res.Stdout.Text() != "armed\n" {
		c.errorf("Run(%q): stdout %q, want %q", CmdTrapTerm, res.Stdout.Text(), "armed\n")
	}
	if took < timeout+c.opts.Grace {
		c.errorf("Run(%q) with timeout %v and grace %v returned after %v: SIGKILL comes only after the grace period", CmdTrapTerm, timeout, c.opts.Grace, took)
	}
}

func runTimeoutTrapExit0(c *kc) {
	timeout := min(trapTimeout, c.opts.MaxTimeout)
	spec := c.spec(CmdTrapExit, func(r *bash.Request) { r.Timeout = timeout })
	res, _, err := c.run(c.ctx, spec, c.runLimit(timeout))
	if err != nil {
		c.fatalf("Run(%q) returned %v, want a result", CmdTrapExit, err)
	}
	zero := 0
	c.wantStopped(CmdTrapExit, res, "", &zero, true)
}

// errKitAbort is the cause with which the kit cancels a run.
var errKitAbort = errors.New("bashtest: abort")

func runAbort(c *kc) {
	spec := c.spec(CmdSleep, func(r *bash.Request) { r.Timeout = min(time.Minute, c.opts.MaxTimeout) })
	delay := abortDelay
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithCancelCause(c.ctx)
		timer := time.AfterFunc(delay, func() { cancel(errKitAbort) })
		res, _, err := c.run(ctx, spec, delay+c.killLimit())
		timer.Stop()
		cancel(nil)
		if errors.Is(err, bash.ErrAbortedBeforeSpawn) && attempt < 2 {
			delay *= 4 // Run was slow to start; the cancellation came first, so try again
			continue
		}
		if err != nil {
			c.fatalf("Run(%q) cancelled after %v returned %v, want a result: an abort is an outcome", CmdSleep, delay, err)
		}
		c.wantStopped(CmdSleep, res, "SIGTERM", nil, false)
		if res.Timeout != spec.Timeout {
			c.errorf("Run(%q): RunResult.Timeout = %v, want %v", CmdSleep, res.Timeout, spec.Timeout)
		}
		return
	}
}

func runSelfSignal(c *kc) {
	res := c.mustRun(c.spec(CmdSelfTerm, nil))
	if res.Signal != "SIGTERM" || res.ExitCode != nil {
		c.errorf("Run(%q): Signal %q, ExitCode %s; want SIGTERM and nil", CmdSelfTerm, res.Signal, exitString(res.ExitCode))
	}
	if res.TimedOut || res.Aborted {
		c.errorf("Run(%q): TimedOut %v, Aborted %v; want neither for a command that signals itself", CmdSelfTerm, res.TimedOut, res.Aborted)
	}
}

func runPreCancelled(c *kc) {
	marker := filepath.Join(c.tempDir(), "marker")
	spec := c.spec(MarkerCommand(marker), nil)
	ctx, cancel := context.WithCancelCause(c.ctx)
	cancel(errors.New("too late"))
	_, _, err := c.run(ctx, spec, c.endLimit())
	switch {
	case err == nil:
		c.errorf("Run with a context that is already done returned no error, want one matching bash.ErrAbortedBeforeSpawn")
	case !errors.Is(err, bash.ErrAbortedBeforeSpawn):
		c.errorf("Run with a context that is already done returned %q, which does not match bash.ErrAbortedBeforeSpawn", err)
	case !strings.Contains(err.Error(), "aborted before spawn") || !strings.Contains(err.Error(), "too late"):
		c.errorf("Run with a context cancelled with cause \"too late\" returned %q, want \"aborted before spawn: too late\"", err)
	}
	// Close waits for every process the executor started: after it, a spawned command has run.
	if err := c.close(context.Background(), c.killLimit()); err != nil {
		c.errorf("Close returned %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		c.errorf("Run with a context that is already done started the command anyway (it created %s)", marker)
	}
}

func runBadWorkdir(c *kc) {
	dir := c.missingDir()
	spec := c.spec(CmdTrue, func(r *bash.Request) { r.Workdir = dir })
	res, _, err := c.run(c.ctx, spec, c.endLimit())
	if err == nil {
		c.errorf("Run with Workdir %q, which does not exist, returned no error but %+v", dir, res)
	}
}

func runBackgroundChild(c *kc) {
	timeout := min(c.opts.Grace+c.opts.Slack, c.opts.MaxTimeout)
	spec := c.spec(CmdLeaveChild, func(r *bash.Request) { r.Timeout = timeout })
	res := c.mustRun(spec)
	if res.TimedOut {
		c.errorf("Run(%q) timed out: Run waited for the process the command left in the background, want it to return once the shell exited (within the grace period)", CmdLeaveChild)
		return
	}
	if res.ExitCode == nil || *res.ExitCode != 0 || res.Stdout.Text() != "done\n" {
		c.errorf("Run(%q): ExitCode %s, stdout %q; want 0 and %q", CmdLeaveChild, exitString(res.ExitCode), res.Stdout.Text(), "done\n")
	}
}

func runOutputCaps(c *kc) {
	limit := c.opts.MaxOutputBytes
	n := 3*limit/12 + 1
	want := Lines(n)
	toStdout, toStderr := runName(LinesCommand(n, false)), runName(LinesCommand(n, true))
	res := c.mustRun(c.spec(LinesCommand(n, false), nil))
	c.wantTruncated(toStdout, "Stdout", res.Stdout, want, limit)
	c.wantOutput(toStdout, "Stderr", res.Stderr, "")

	raise := func(r *bash.Request) { r.StdoutMaxBytes = len(want) }
	res = c.mustRun(c.spec(LinesCommand(n, false), raise))
	c.wantOutput(toStdout+" with StdoutMaxBytes raised to the output's size", "Stdout", res.Stdout, want)

	res = c.mustRun(c.spec(LinesCommand(n, true), raise))
	c.wantTruncated(toStderr+" with StdoutMaxBytes raised", "Stderr", res.Stderr, want, limit)
}

// wantTruncated checks that o is the stream want kept as a head and a tail within limit bytes;
// what names the run in reports.
func (c *kc) wantTruncated(what, stream string, o bash.Output, want string, limit int) {
	kept := len(o.Head) + len(o.Tail)
	switch {
	case !o.Truncated():
		c.errorf("%s: %s is not truncated after %d bytes with a %d-byte cap", what, stream, len(want), limit)
	case o.TotalBytes != int64(len(want)):
		c.errorf("%s: %s.TotalBytes = %d, want %d", what, stream, o.TotalBytes, len(want))
	case int64(kept)+o.OmittedBytes != o.TotalBytes:
		c.errorf("%s: %s keeps %d bytes and omits %d, which is not the %d bytes written", what, stream, kept, o.OmittedBytes, o.TotalBytes)
	case kept > limit:
		c.errorf("%s: %s keeps %d bytes, more than the %d-byte cap", what, stream, kept, limit)
	case !strings.HasPrefix(want, o.Head):
		c.errorf("%s: %s.Head is not the start of the stream", what, stream)
	case !strings.HasSuffix(want, o.Tail):
		c.errorf("%s: %s.Tail is not the end of the stream", what, stream)
	}
	if o.Truncated() && o.Spill.Path == "" {
		c.errorf("%s: %s is truncated but names no spill file", what, stream)
	}
}
