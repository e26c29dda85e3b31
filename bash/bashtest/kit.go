package bashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// testCase is one named check of the contract.
type testCase struct {
	name string
	// escapees marks a case that runs only with Options.Escapees.
	escapees bool
	// interactive marks a case that needs bash.Interactive.
	interactive bool
	check       func(c *kc)
}

// skip returns why tc cannot run with opts, or "".
func (tc testCase) skip(opts Options) string {
	if tc.escapees && !opts.Escapees {
		return "Options.Escapees is off"
	}
	return ""
}

// Durations the kit uses for its own commands.
const (
	// sleepTimeout is the foreground timeout for CmdSleep.
	sleepTimeout = 250 * time.Millisecond
	// trapTimeout is the foreground timeout for the SIGTERM-trapping commands: long enough for bash
	// to have set its trap before the deadline, even on a loaded machine.
	trapTimeout = time.Second
	// abortDelay is how long after calling Run the kit cancels the context.
	abortDelay = 100 * time.Millisecond
	// pollEvery is the interval of the kit's polls.
	pollEvery = 5 * time.Millisecond
)

// abortCase is the panic value with which fatalf ends a case.
type abortCase struct{}

// kc is the state of one running case: the executor under test and the errors found so far. Its
// methods that record errors are safe for concurrent use (listeners call them on the executor's
// goroutines); fatalf and the helpers that call it must only run on the case's own goroutine or
// inside kc.parallel.
type kc struct {
	name string
	ex   bash.Executor
	// probe returns a second executor of the same kind, for the cases that look at processes
	// from outside the one under test (it may be remote).
	probe func() (bash.Executor, error)
	opts  Options
	ctx   context.Context

	mu     sync.Mutex
	errs   []error
	closed bool // the case called Close itself
	dirs   []string
}

func runCase(ctx context.Context, tc testCase, ex bash.Executor, probe func() (bash.Executor, error), opts Options) []error {
	c := &kc{name: tc.name, ex: ex, probe: probe, opts: opts, ctx: ctx}
	c.guard(func() { tc.check(c) })
	c.cleanup()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errs
}

// guard runs f, turning a fatalf into a normal return and any other panic of the kit into an error.
func (c *kc) guard(f func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abortCase); !ok {
				c.errorf("bashtest itself panicked: %v\n%s", r, debug.Stack())
			}
		}
	}()
	f()
}

// cleanup closes the executor (again, if the case did) and removes the case's scratch files.
func (c *kc) cleanup() {
	c.mu.Lock()
	closedByCase := c.closed
	c.mu.Unlock()
	// The executor is closed even when the kit's context is done: its processes must not outlive
	// the kit.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), c.opts.Grace+c.opts.Slack)
	defer cancel()
	var err error
	if callErr := tryIn(context.WithoutCancel(c.ctx), "Close at the end of the case", c.opts.Grace+2*c.opts.Slack, func() { err = c.ex.Close(ctx) }); callErr != nil {
		c.errorf("%v", callErr)
	} else if err != nil && !closedByCase {
		c.errorf("Close at the end of the case returned %v, want nil", err)
	}
	for _, dir := range c.dirs {
		os.RemoveAll(dir)
	}
}

// errorf records a broken promise.
func (c *kc) errorf(format string, args ...any) {
	err := fmt.Errorf("%s: %s", c.name, fmt.Sprintf(format, args...))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}

// fatalf records a broken promise after which the case cannot go on, and ends the case.
func (c *kc) fatalf(format string, args ...any) {
	c.errorf(format, args...)
	panic(abortCase{})
}

// try runs f, one call into the executor named by what, on its own goroutine and waits at most
// limit for it. It returns an error when f panics, when it does not return in time (its goroutine
// is then abandoned) or when the kit's context is done first.
func (c *kc) try(what string, limit time.Duration, f func()) error {
	return tryIn(c.ctx, what, limit, f)
}

// tryIn is try bounded by ctx instead of the kit's context.
func tryIn(ctx context.Context, what string, limit time.Duration, f func()) error {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case p := <-done:
		if p != nil {
			return fmt.Errorf("%s panicked: %v", what, p)
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("%s did not return within %v", what, limit)
	case <-ctx.Done():
		return fmt.Errorf("%s: gave up: %v", what, context.Cause(ctx))
	}
}

// call is try that ends the case on failure.
func (c *kc) call(what string, limit time.Duration, f func()) {
	if err := c.try(what, limit, f); err != nil {
		c.fatalf("%v", err)
	}
}

// parallel runs f(0) … f(n-1) on n goroutines and waits for them; a fatalf inside f ends only that
// goroutine.
func (c *kc) parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { c.guard(func() { f(i) }) })
	}
	wg.Wait()
}

// tempDir returns a new scratch directory, removed when the case ends.
func (c *kc) tempDir() string {
	dir, err := os.MkdirTemp("", "bashtest-")
	if err != nil {
		c.fatalf("cannot create a scratch directory: %v", err)
	}
	c.mu.Lock()
	c.dirs = append(c.dirs, dir)
	c.mu.Unlock()
	return dir
}

// missingDir returns a path that does not exist.
func (c *kc) missingDir() string {
	return filepath.Join(c.tempDir(), "does-not-exist")
}

// quick is the limit for a call that must return at once.
func (c *kc) quick() time.Duration { return c.opts.Slack }

// killLimit is the limit for a task or a run to end once it has been stopped.
func (c *kc) killLimit() time.Duration { return c.opts.Grace + c.opts.Slack }

// runLimit is the limit for a foreground run with timeout d.
func (c *kc) runLimit(d time.Duration) time.Duration { return d + c.opts.Grace + c.opts.Slack }

// endLimit is the limit for a foreground run of a command that ends by itself at once (or is
// refused), whatever its timeout.
func (c *kc) endLimit() time.Duration { return c.runLimit(c.opts.Slack) }

// defaultTimeout is the timeout Resolve must fill in for a request without one.
func (c *kc) defaultTimeout() time.Duration { return min(c.opts.Timeout, c.opts.MaxTimeout) }

// resolve resolves req and ends the case when that fails.
func (c *kc) resolve(req bash.Request) bash.Request {
	var spec bash.Request
	var err error
	c.call("Resolve", c.quick(), func() { spec, err = c.ex.Resolve(req) })
	if err != nil {
		c.fatalf("Resolve(%s) returned %v, want a spec", describe(req), err)
	}
	return spec
}

// spec resolves a request for command with extra settings applied by edit (which may be nil).
func (c *kc) spec(command string, edit func(*bash.Request)) bash.Request {
	req := bash.Request{Command: command}
	if edit != nil {
		edit(&req)
	}
	return c.resolve(req)
}

// run runs spec in the foreground, bounded by limit, and returns the result, how long Run took
// and the error.
func (c *kc) run(ctx context.Context, spec bash.Request, limit time.Duration) (bash.RunResult, time.Duration, error) {
	var res bash.RunResult
	var err error
	start := time.Now()
	c.call(fmt.Sprintf("Run(%q)", spec.Command), limit, func() { res, err = c.ex.Run(ctx, spec) })
	return res, time.Since(start), err
}

// mustRun runs spec and ends the case when Run fails.
func (c *kc) mustRun(spec bash.Request) bash.RunResult {
	res, _, err := c.run(c.ctx, spec, c.runLimit(min(spec.Timeout, c.opts.Slack)))
	if err != nil {
		c.fatalf("Run(%q) returned %v, want a result", spec.Command, err)
	}
	return res
}

// startErr starts spec, bounded by limit, and returns the task and the error.
func (c *kc) startErr(spec bash.Request, limit time.Duration) (*bash.Task, error) {
	var task *bash.Task
	var err error
	c.call(fmt.Sprintf("Start(%q)", spec.Command), limit, func() { task, err = c.ex.Start(spec) })
	return task, err
}

// start starts spec and ends the case unless Start returned a task at once.
func (c *kc) start(spec bash.Request) *bash.Task {
	task, err := c.startErr(spec, c.quick())
	if err != nil {
		c.fatalf("Start(%q) returned %v, want a task", spec.Command, err)
	}
	if task == nil {
		c.fatalf("Start(%q) returned a nil task and no error", spec.Command)
	}
	return task
}

// startCmd resolves and starts command.
func (c *kc) startCmd(command string) *bash.Task {
	return c.start(c.spec(command, nil))
}

// waitDone waits until task's Done channel is closed, at most limit, and reports whether it was.
func (c *kc) waitDone(task *bash.Task, limit time.Duration) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-task.Done():
		return true
	case <-timer.C:
		return false
	case <-c.ctx.Done():
		c.fatalf("gave up waiting for task %s: %v", task.ID(), context.Cause(c.ctx))
		return false
	}
}

// mustDone waits until task is done and ends the case when it is not done within limit.
func (c *kc) mustDone(task *bash.Task, limit time.Duration, why string) {
	if !c.waitDone(task, limit) {
		c.fatalf("task %s (%q): Done was not closed within %v %s", task.ID(), task.Command(), limit, why)
	}
}

// read reads task id's output once and ends the case when ReadOutput fails.
func (c *kc) read(id bash.TaskID) bash.TaskRead {
	var r bash.TaskRead
	var err error
	c.call(fmt.Sprintf("ReadOutput(%q)", id), c.quick(), func() { r, err = c.ex.ReadOutput(id) })
	if err != nil {
		c.fatalf("ReadOutput(%q) returned %v", id, err)
	}
	return r
}

// readUntil reads task's output until the deltas read so far add up to at least len(want) bytes,
// at most limit, and returns them joined. A lossy delta is reported.
func (c *kc) readUntil(task *bash.Task, want string, limit time.Duration) string {
	deadline := time.Now().Add(limit)
	var got string
	for {
		r := c.read(task.ID())
		if r.Lossy {
			c.errorf("ReadOutput(%q) of %q was lossy although the task wrote only %d bytes", task.ID(), task.Command(), len(want))
		}
		got += r.Delta
		if len(got) >= len(want) {
			return got
		}
		if time.Now().After(deadline) {
			c.fatalf("ReadOutput(%q) of %q delivered %q after %v, want %q", task.ID(), task.Command(), got, limit, want)
		}
		c.pause()
	}
}

// pause waits one poll interval.
func (c *kc) pause() {
	timer := time.NewTimer(pollEvery)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-c.ctx.Done():
		c.fatalf("gave up: %v", context.Cause(c.ctx))
	}
}

// kill kills task id and returns Kill's answer and error.
func (c *kc) kill(id bash.TaskID) (bool, error) {
	var ok bool
	var err error
	// Kill waits for the tree, at most until SIGKILL after the grace period.
	c.call(fmt.Sprintf("Kill(%q)", id), c.killLimit(), func() { ok, err = c.ex.Kill(id) })
	return ok, err
}

// mustKill kills task id and ends the case when Kill fails.
func (c *kc) mustKill(id bash.TaskID) bool {
	ok, err := c.kill(id)
	if err != nil {
		c.fatalf("Kill(%q) returned %v", id, err)
	}
	return ok
}

// get calls Get(id).
func (c *kc) get(id bash.TaskID) (*bash.Task, bool) {
	var task *bash.Task
	var ok bool
	c.call(fmt.Sprintf("Get(%q)", id), c.quick(), func() { task, ok = c.ex.Get(id) })
	return task, ok
}

// list calls List.
func (c *kc) list() []*bash.Task {
	var tasks []*bash.Task
	c.call("List", c.quick(), func() { tasks = c.ex.List() })
	return tasks
}

// ownerOf calls OwnerOf(id).
func (c *kc) ownerOf(id bash.TaskID) (bash.OwnerToken, bool) {
	var tok bash.OwnerToken
	var ok bool
	c.call(fmt.Sprintf("OwnerOf(%q)", id), c.quick(), func() { tok, ok = c.ex.OwnerOf(id) })
	return tok, ok
}

// onTaskDone registers listener and returns the unsubscribe function, bounded like every call.
func (c *kc) onTaskDone(listener bash.TaskListener) func() {
	var unsubscribe func()
	c.call("OnTaskDone", c.quick(), func() { unsubscribe = c.ex.OnTaskDone(listener) })
	if unsubscribe == nil {
		c.fatalf("OnTaskDone returned a nil unsubscribe function")
	}
	return func() { c.call("the unsubscribe function OnTaskDone returned", c.quick(), unsubscribe) }
}

// close closes the executor with ctx, bounded by limit, and returns Close's error.
func (c *kc) close(ctx context.Context, limit time.Duration) error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	var err error
	c.call("Close", limit, func() { err = c.ex.Close(ctx) })
	return err
}

// facts is what a task reports about itself at one moment.
type facts struct {
	status  bash.TaskStatus
	code    int
	hasCode bool
	signal  string
}

func factsOf(t *bash.Task) facts {
	f := facts{status: t.Status(), signal: t.Signal()}
	if code := t.ExitCode(); code != nil {
		f.code, f.hasCode = *code, true
	}
	return f
}

func (f facts) String() string {
	code := "none"
	if f.hasCode {
		code = fmt.Sprint(f.code)
	}
	return fmt.Sprintf("status %s, exit code %s, signal %q", f.status, code, f.signal)
}

// wantFacts compares task's facts with want and reports a difference, explaining it with why.
func (c *kc) wantFacts(task *bash.Task, want facts, why string) {
	if got := factsOf(task); got != want {
		c.errorf("task %s (%q) has %v, want %v%s", task.ID(), task.Command(), got, want, why)
	}
}

func completed(code int) facts { return facts{status: bash.TaskCompleted, code: code, hasCode: true} }

func killedBy(signal string) facts { return facts{status: bash.TaskKilled, signal: signal} }

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func exitString(code *int) string {
	if code == nil {
		return "nil"
	}
	return fmt.Sprint(*code)
}

func describe(req bash.Request) string {
	return fmt.Sprintf("Request{Command: %q, Workdir: %q, Timeout: %v, StdoutMaxBytes: %d}", req.Command, req.Workdir, req.Timeout, req.StdoutMaxBytes)
}

// sameTasks reports whether got holds exactly the pointers of want, in order.
func sameTasks(got, want []*bash.Task) bool { return slices.Equal(got, want) }
