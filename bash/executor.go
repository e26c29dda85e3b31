package bash

import "context"

// Executor runs bash commands for an agent harness, in the foreground or as background tasks.
//
// All methods are safe for concurrent use. Command outcomes are results, not errors: a non-zero
// exit, a timeout, a caller's abort or death by a signal all come back in a [RunResult] or on a
// [Task]. Errors are kept for failures of the machinery: a bad spec, a command that could not be
// started in the foreground, an unknown task id, a closed executor.
//
//catalog:service bash/executor
type Executor interface {
	// Resolve returns req as Run and Start will see it: Workdir, Timeout and StdoutMaxBytes
	// filled from the executor's configuration (read at call time) and Timeout capped at the
	// configured maximum; a Sandbox with an empty Mode replaced by the executor's policy; Stdin,
	// Env and Owner are copied verbatim. It returns an error naming the field when req.Command is
	// blank, req.Timeout is negative, req.StdoutMaxBytes is negative or req.Sandbox is invalid.
	// It starts nothing.
	Resolve(req Request) (Request, error)

	// Run runs req in the foreground, resolved as Resolve does, and returns once the command has
	// exited and its output has been collected. ctx is the caller's cancellation: when it is done
	// first the command is stopped and the result has Aborted set; when the timeout passes first
	// the result has TimedOut set. Stopping means SIGTERM to the command's process tree, then
	// SIGKILL after the executor's grace period. req.Owner is ignored.
	//
	// It returns Resolve's error for an invalid request, an error wrapping ErrAbortedBeforeSpawn
	// when ctx is already done, ErrClosed after Close, and an error when the command cannot be
	// started, which wraps the cause so that errors.Is works on it (fs.ErrNotExist when the
	// workdir does not exist, ErrSandboxUnavailable when the sandbox asked for cannot be
	// enforced). Processes the command left running in the background are not
	// waited for; Close stops them.
	Run(ctx context.Context, req Request) (RunResult, error)

	// Start starts req, resolved as Resolve does, as a background task and returns its live
	// handle at once, already listed by Get and List and owned by req.Owner. No timeout applies
	// (req.Timeout is ignored) and the task is tied to no caller's context: it runs until it
	// exits, is killed with Kill, or the executor is closed.
	//
	// A command that cannot be started does not make Start fail: the task ends TaskKilled, its
	// listeners run, and the next ReadOutput carries "spawn failed: <reason>" in its stderr section.
	// Start returns an error only for an invalid request or after Close (ErrClosed).
	Start(req Request) (*Task, error)

	// Get returns the handle Start returned for id, with true, or nil and false for an id this
	// executor never issued (and for every id after Close).
	Get(id TaskID) (*Task, bool)

	// List returns every task this executor started, running or finished, in start order. It is
	// empty after Close. The slice is the caller's.
	List() []*Task

	// OwnerOf returns the owner token recorded for task id, with true. It returns false both for
	// an unknown id and for a task started without an owner (an empty token): a consumer treats
	// both as open, and an unknown id then fails on ReadOutput or Kill.
	OwnerOf(id TaskID) (OwnerToken, bool)

	// ReadOutput returns the output task id wrote since the previous ReadOutput of that task, and
	// advances the task's read cursor: consecutive reads never deliver the same bytes twice, while
	// the task runs and after it ends (then the rest, once, then empty deltas). Reads of one task
	// are serialised. It returns an error matching ErrUnknownTask for an id never issued.
	ReadOutput(id TaskID) (TaskRead, error)

	// Kill stops task id: the task is marked TaskKilled at once, before the process is gone, and
	// SIGTERM then SIGKILL after the grace period go to its process tree. When the task was
	// running, Kill returns true once the tree (its process group and the processes that left it
	// carrying the executor's tag) is gone or, when something outlived the grace period, once
	// SIGKILL has been sent to what was left; the task's Done follows as its output ends. It
	// returns false at once when the task had already ended or been killed (a second Kill is a
	// no-op), and an error matching ErrUnknownTask for an id never issued.
	Kill(id TaskID) (bool, error)

	// OnTaskDone registers listener to be called once for every background task that ends, in
	// registration order, after the task's exit facts are final and before its Done channel is
	// closed. Listeners run on a goroutine of the executor, never inside Start; they may call the
	// executor's methods (OwnerOf to route a notice, ReadOutput for the last output) but should
	// not block, since the task's Done waits for them. A panicking listener is recovered and
	// logged and does not stop the others. Listeners are not called once Close has begun. The
	// returned function unregisters listener; calling it more than once is harmless.
	OnTaskDone(listener TaskListener) (unsubscribe func())

	// Close stops the executor: it stops calling listeners, kills every running task (they end
	// TaskKilled) and every process a foreground run left behind, and waits until all of them are
	// gone. ctx bounds the wait for the grace period: when it is done first, the remaining
	// processes are sent SIGKILL at once and Close returns ctx's error after they are reaped.
	// After Close, Run and Start return ErrClosed, and the task table is empty: List returns
	// nothing, Get and OwnerOf report false, ReadOutput and Kill fail with ErrUnknownTask. Close is
	// idempotent: a second call waits for the first and returns what it returned.
	Close(ctx context.Context) error
}

// UnreadCounter is an optional ability of an [Executor], discovered by type assertion as
// database/sql/driver discovers its optional interfaces: how much output a background task has
// written that ReadOutput has not delivered yet.
type UnreadCounter interface {
	// Unread returns the number of bytes task id wrote to both streams that no ReadOutput has
	// delivered yet, bytes that will be reported as dropped included. It consumes nothing. It
	// returns an error matching ErrUnknownTask for an id never issued.
	Unread(id TaskID) (int64, error)
}
