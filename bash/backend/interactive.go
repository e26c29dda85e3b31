package backend

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// Input is a task's open standard input as its backend holds it: a pipe or a terminal. The
// TaskTable serialises Writes and never calls Write after Close.
type Input interface {
	// Write writes all of p unless ctx is done first or the input fails, and returns how much
	// was written. It returns an error matching bash.ErrInputClosed when the program's end is
	// gone (a pipe whose reader closed it).
	Write(ctx context.Context, p []byte) (int, error)
	// Close ends the input as bash.Interactive.CloseInput documents (closing a pipe; Ctrl-D on
	// a terminal). A Write blocked in Write may return an error then.
	Close() error
}

// ioState is the input and signal path of one task. mu guards the fields; writeMu serialises
// writes and is held for the whole of one, so it is never taken under mu.
type ioState struct {
	writeMu sync.Mutex
	mu      sync.Mutex
	input   Input
	closed  bool // by CloseInput
	ended   bool // by CloseInputOnEnd
	signal  func(bash.Signal) (bool, error)
}

// SetInput gives the task its open input; call it once the process exists, before Start returns
// the task. A task without one fails Write with bash.ReasonNoInput.
func (e *TaskEntry) SetInput(in Input) {
	e.io.mu.Lock()
	e.io.input = in
	e.io.mu.Unlock()
}

// SetSignal sets the function TaskTable.Signal calls with a valid signal for a running task:
// it sends the signal to the task's process group and reports false when nothing was left to
// receive it. A task without one fails Signal with bash.ErrUnsupported.
func (e *TaskEntry) SetSignal(signal func(bash.Signal) (bool, error)) {
	e.io.mu.Lock()
	e.io.signal = signal
	e.io.mu.Unlock()
}

// CloseInputOnEnd closes the task's input, if it has one still open, without marking it closed by
// the caller: the backend calls it when the task ends, so later Writes report bash.ReasonEnded.
func (e *TaskEntry) CloseInputOnEnd() {
	e.io.mu.Lock()
	in, wasClosed := e.io.input, e.io.closed || e.io.ended
	e.io.ended = true
	e.io.mu.Unlock()
	if in != nil && !wasClosed {
		_ = in.Close()
	}
}

// Write implements bash.Interactive.Write over the task's Input: it returns a
// *bash.InputClosedError for a task that has ended, has no input or whose input was closed, and
// otherwise what Input.Write returns.
func (t *TaskTable) Write(ctx context.Context, id bash.TaskID, p []byte) (int, error) {
	e, err := t.Lookup(id)
	if err != nil {
		return 0, err
	}
	e.io.writeMu.Lock()
	defer e.io.writeMu.Unlock()
	in, err := e.openInput()
	if err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := in.Write(ctx, p)
	if err != nil {
		if closedErr := e.inputErr(); closedErr != nil {
			return n, closedErr // closed under the write: say why, not how the write noticed
		}
		return n, fmt.Errorf("write to bash task %q: %w", string(id), err)
	}
	return n, nil
}

// openInput returns the task's input, or why it has none.
func (e *TaskEntry) openInput() (Input, error) {
	if err := e.inputErr(); err != nil {
		return nil, err
	}
	e.io.mu.Lock()
	defer e.io.mu.Unlock()
	return e.io.input, nil
}

// inputErr returns the *bash.InputClosedError that says why the task has no open input, or nil
// while it has one.
func (e *TaskEntry) inputErr() error {
	e.io.mu.Lock()
	in, closed, ended := e.io.input, e.io.closed, e.io.ended
	e.io.mu.Unlock()
	switch {
	case ended || done(e.Task):
		return &bash.InputClosedError{ID: e.Task.ID(), Reason: bash.ReasonEnded}
	case in == nil:
		return &bash.InputClosedError{ID: e.Task.ID(), Reason: bash.ReasonNoInput}
	case closed:
		return &bash.InputClosedError{ID: e.Task.ID(), Reason: bash.ReasonClosed}
	}
	return nil
}

// CloseInput implements bash.Interactive.CloseInput: it closes the task's Input once, after any
// Write in progress, and returns a *bash.InputClosedError when there is nothing open to close.
func (t *TaskTable) CloseInput(id bash.TaskID) error {
	e, err := t.Lookup(id)
	if err != nil {
		return err
	}
	if err := e.inputErr(); err != nil {
		return err
	}
	e.io.mu.Lock()
	in := e.io.input
	already := e.io.closed || e.io.ended
	e.io.closed = true
	e.io.mu.Unlock()
	if already {
		return &bash.InputClosedError{ID: id, Reason: bash.ReasonClosed}
	}
	// A pipe is closed at once, so a Write blocked on a reader that never reads ends with an
	// error; a terminal's Ctrl-D waits for the Write in progress so that it is not interleaved.
	if err := in.Close(); err != nil {
		return fmt.Errorf("close the input of bash task %q: %w", string(id), err)
	}
	return nil
}

// Signal implements bash.Interactive.Signal: it returns an error for a signal not in
// bash.Signals, false for a task that has ended, an error wrapping bash.ErrUnsupported for a task
// whose backend set no signal function, and otherwise what that function returns.
func (t *TaskTable) Signal(id bash.TaskID, sig bash.Signal) (bool, error) {
	e, err := t.Lookup(id)
	if err != nil {
		return false, err
	}
	if !sig.Valid() {
		return false, fmt.Errorf("bash: unknown signal %q (want one of %v)", string(sig), bash.Signals)
	}
	if done(e.Task) {
		return false, nil
	}
	e.io.mu.Lock()
	signal := e.io.signal
	e.io.mu.Unlock()
	if signal == nil {
		if e.Task.Status() != bash.TaskRunning {
			return false, nil // killed or failed to spawn: nothing to signal
		}
		return false, fmt.Errorf("%w: signal bash task %q", bash.ErrUnsupported, string(id))
	}
	return signal(sig)
}

// Wait implements bash.Interactive.Wait over the task's collectors and Done channel: no polling,
// one select on the channels Collector.Grown returns for what the latest Read covered.
func (t *TaskTable) Wait(ctx context.Context, id bash.TaskID, want bash.WaitFor, deadline time.Time) (bash.TaskEvent, error) {
	e, err := t.Lookup(id)
	if err != nil {
		return bash.TaskEvent{}, err
	}
	var outGrown, errGrown <-chan struct{}
	if want.Output {
		e.mu.Lock()
		outSeen, errSeen := e.outSeen, e.errSeen
		e.mu.Unlock()
		outGrown, errGrown = e.Stdout.Grown(outSeen), e.Stderr.Grown(errSeen)
	}
	grown := func() bool { return isClosed(outGrown) || isClosed(errGrown) }
	ev := bash.TaskEvent{Task: e.Task}
	if grown() || done(e.Task) {
		ev.Output, ev.Done = grown(), done(e.Task)
		return ev, nil
	}
	var expired <-chan time.Time
	if !deadline.IsZero() {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-outGrown:
	case <-errGrown:
	case <-e.Task.Done():
	case <-expired:
		ev.TimedOut = true
		return ev, nil
	case <-ctx.Done():
		return bash.TaskEvent{}, fmt.Errorf("wait for bash task %q: %w", string(id), context.Cause(ctx))
	}
	ev.Output, ev.Done = grown(), done(e.Task)
	return ev, nil
}

// isClosed reports whether ch is closed; a nil channel never is.
func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
