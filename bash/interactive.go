package bash

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Interactive is an optional ability of an [Executor], discovered by type assertion as
// database/sql/driver discovers its optional interfaces (or with [InteractiveOf]): talking to a
// running background task. A caller writes to the task's standard input, sends it a chosen
// signal, and waits for its next event instead of polling ReadOutput.
//
// A task has an input only when its request asked for one: [Request.TTY] (the task runs on a
// pseudo-terminal, which is its stdin, stdout and stderr) or [Request.OpenStdin] (its stdin is a
// pipe that stays open after [Request.Stdin], if any, was written). Every other task's stdin is
// what the Executor documents (Stdin's bytes, then end-of-file; or /dev/null).
//
// All methods are safe for concurrent use, with each other and with the Executor's. Writes to
// one task are serialised in call order; a Write concurrent with CloseInput either completes
// before the input is closed or fails with ErrInputClosed. Ownership is not checked here, as for
// ReadOutput and Kill: the consumer compares [Executor.OwnerOf] with its caller first.
//
// Every method returns an error matching [ErrUnknownTask] for an id the executor never issued
// (and for every id after Close).
type Interactive interface {
	// Write writes p to the standard input of task id and returns how many bytes of p were
	// written, blocking while the task does not read (a pipe or a terminal buffer is full) until
	// all of p is written or ctx is done. On a terminal the bytes are what a person would type:
	// "\r" or "\n" is Enter, "\x03" is Ctrl-C (the terminal turns it into SIGINT for the
	// foreground group when the program left the terminal in its normal mode), "\x04" is
	// Ctrl-D, and echoed input appears in the output as a person would see it.
	//
	// It returns, with the count written so far: an error matching ErrInputClosed when the task
	// has no input (it did not ask for one, CloseInput closed it, the task has ended, or the
	// program closed its end of a pipe); ctx's error, wrapped, when ctx was done first; and
	// ErrUnsupported when the executor cannot write to this task. A failed Write leaves the task
	// running as it was. A Write of no bytes checks that the input is open and writes nothing.
	Write(ctx context.Context, id TaskID, p []byte) (int, error)

	// CloseInput ends the input of task id: a pipe is closed, so the program reads end-of-file;
	// on a terminal, which stays open, the terminal's end-of-file character (Ctrl-D) is written,
	// which ends a read of a program in the terminal's normal (canonical) mode. Later Writes fail
	// with ErrInputClosed. It returns an error matching ErrInputClosed when the task has no input
	// or it was closed already.
	CloseInput(id TaskID) error

	// Signal sends sig to the process group of task id, once, and returns true, or false when
	// the task had already ended. It does not mark the task killed and starts no grace period:
	// the task's status follows from how it ends (a task that traps SIGINT and exits 0
	// completes; one that dies of the signal is TaskKilled like any task dying of a signal).
	// It returns an error wrapping ErrUnsupported for a signal this executor cannot send, and an
	// error for a sig not in [Signals].
	Signal(id TaskID, sig Signal) (bool, error)

	// Wait blocks until task id has an event that want asks for, deadline passes, or ctx is
	// done, without polling. With want.Output, an event is output written to either stream
	// after what the latest ReadOutput of the task covered (bytes held back or dropped included,
	// so a half-written character does not wake it twice); the task's end is always an event.
	// Wait returns at once when the event has already happened (output written but not yet
	// read, a task already done). It consumes nothing: the caller reads with ReadOutput.
	//
	// The event says what woke it; a passed deadline is no error (TaskEvent.TimedOut). A zero
	// deadline means none (ctx alone bounds the wait). It returns ctx's error, wrapped, when ctx
	// is done first.
	Wait(ctx context.Context, id TaskID, want WaitFor, deadline time.Time) (TaskEvent, error)
}

// InteractiveOf returns ex's [Interactive] ability, or an error matching ErrUnsupported that
// names what ex cannot do.
func InteractiveOf(ex Executor) (Interactive, error) {
	if in, ok := ex.(Interactive); ok {
		return in, nil
	}
	return nil, fmt.Errorf("%w: this executor (%T) cannot write to, signal or wait on background tasks", ErrUnsupported, ex)
}

// TTY asks for a pseudo-terminal of Rows lines and Cols columns; a zero field means
// [DefaultTTYRows] or [DefaultTTYCols]. Either may be at most [MaxTTYSize].
type TTY struct {
	Rows, Cols uint16
}

// The terminal size a zero [TTY] field stands for, and the largest allowed.
const (
	DefaultTTYRows = 24
	DefaultTTYCols = 80
	MaxTTYSize     = 1000
)

// Validate returns an error naming the field when Rows or Cols is above MaxTTYSize.
func (t TTY) Validate() error {
	if t.Rows > MaxTTYSize || t.Cols > MaxTTYSize {
		return fmt.Errorf("bash: TTY %dx%d is larger than %dx%d", t.Rows, t.Cols, MaxTTYSize, MaxTTYSize)
	}
	return nil
}

// Size returns Rows and Cols with the defaults filled in.
func (t TTY) Size() (rows, cols uint16) {
	rows, cols = t.Rows, t.Cols
	if rows == 0 {
		rows = DefaultTTYRows
	}
	if cols == 0 {
		cols = DefaultTTYCols
	}
	return rows, cols
}

// Signal names a signal [Interactive.Signal] may send: one of [Signals].
type Signal string

// The signals a caller may send to a task.
const (
	SIGINT  Signal = "SIGINT"
	SIGTERM Signal = "SIGTERM"
	SIGHUP  Signal = "SIGHUP"
	SIGQUIT Signal = "SIGQUIT"
	SIGUSR1 Signal = "SIGUSR1"
	SIGUSR2 Signal = "SIGUSR2"
	SIGKILL Signal = "SIGKILL"
)

// Signals lists every [Signal] in the order tools document them.
var Signals = []Signal{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGKILL}

// Valid reports whether s is one of [Signals].
func (s Signal) Valid() bool { return slices.Contains(Signals, s) }

// WaitFor says which events end an [Interactive.Wait]. The task's end always does.
type WaitFor struct {
	// Output makes new output an event.
	Output bool
}

// TaskEvent is what ended an [Interactive.Wait]: Output (new output was written), Done (the
// task has ended; its Done channel is closed), both, or TimedOut alone (the deadline passed
// first).
type TaskEvent struct {
	Task     *Task
	Output   bool
	Done     bool
	TimedOut bool
}

// ErrUnsupported is matched by the error of an executor asked to do what it cannot: an
// [Interactive] method it cannot perform for a task, a [Request.TTY] or [Request.OpenStdin] it
// cannot give. [InteractiveOf] returns it for an executor without the ability.
var ErrUnsupported = errors.New("bash: not supported by this executor")

// ErrInputClosed is matched by the error of [Interactive.Write] and CloseInput on a task with no
// open input: one that did not ask for input, whose input was closed, that has ended, or whose
// program closed its end of the pipe. The task is unaffected.
var ErrInputClosed = errors.New("task input is closed")

// InputClosedError is the error of a Write or CloseInput on a task without open input; it
// matches [ErrInputClosed]. Its message is `bash task "<id>": task input is closed: <reason>`.
type InputClosedError struct {
	ID     TaskID
	Reason string
}

// Error returns the message `bash task "<id>": task input is closed: <reason>`.
func (e *InputClosedError) Error() string {
	return fmt.Sprintf("bash task %q: %v: %s", string(e.ID), ErrInputClosed, e.Reason)
}

// Is reports whether target is ErrInputClosed.
func (e *InputClosedError) Is(target error) bool { return target == ErrInputClosed }

// Why a task has no open input, for [InputClosedError.Reason].
const (
	ReasonNoInput     = "it was not started with an input (interactive or OpenStdin)"
	ReasonClosed      = "its input was closed"
	ReasonEnded       = "the task has ended"
	ReasonProgramGone = "the program closed its standard input"
)
