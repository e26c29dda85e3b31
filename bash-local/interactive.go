package bashlocal

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-local/internal/proc"
	"github.com/dsh-go/dsh/bash/backend"
)

// Write implements bash.Interactive.Write: it writes p to the pipe or terminal of task id, or
// returns an error matching bash.ErrInputClosed, bash.ErrUnknownTask or ctx's error.
func (e *Executor) Write(ctx context.Context, id bash.TaskID, p []byte) (int, error) {
	return e.tasks.Write(ctx, id, p)
}

// CloseInput implements bash.Interactive.CloseInput: it closes the stdin pipe of task id, or
// types Ctrl-D on its terminal.
func (e *Executor) CloseInput(id bash.TaskID) error { return e.tasks.CloseInput(id) }

// Signal implements bash.Interactive.Signal: it sends sig to the process group of task id and
// reports whether the task was still there to receive it.
func (e *Executor) Signal(id bash.TaskID, sig bash.Signal) (bool, error) {
	return e.tasks.Signal(id, sig)
}

// Wait implements bash.Interactive.Wait: it blocks until task id writes output the latest read
// did not cover (with want.Output) or ends, until deadline, or until ctx is done, and returns the
// event that woke it.
func (e *Executor) Wait(ctx context.Context, id bash.TaskID, want bash.WaitFor, deadline time.Time) (bash.TaskEvent, error) {
	return e.tasks.Wait(ctx, id, want, deadline)
}

// ttySize returns the proc form of t, with its defaults, or nil.
func ttySize(t *bash.TTY) *[2]uint16 {
	if t == nil {
		return nil
	}
	rows, cols := t.Size()
	return &[2]uint16{rows, cols}
}

// attachIO gives task entry t the input and the signal path of its process p.
func attachIO(t *backend.TaskEntry, p *proc.Process) {
	if in := p.Input(); in != nil {
		t.SetInput(taskInput{in: in, id: t.Task.ID()})
	}
	t.SetSignal(func(sig bash.Signal) (bool, error) {
		return p.Signal(unix.SignalNum(string(sig)))
	})
}

// taskInput adapts a proc.Input to backend.Input, naming the task in its errors.
type taskInput struct {
	in *proc.Input
	id bash.TaskID
}

func (t taskInput) Write(ctx context.Context, p []byte) (int, error) {
	n, err := t.in.Write(ctx, p)
	if errors.Is(err, proc.ErrProgramGone) {
		return n, &bash.InputClosedError{ID: t.id, Reason: bash.ReasonProgramGone}
	}
	return n, err
}

func (t taskInput) Close() error { return t.in.Close() }
