package bash

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// TaskID names a background task. A backend issues ids that are unique for the life of the
// executor and never reused; the local backend issues "bash-1", "bash-2", … Ids are predictable on
// purpose: isolation between agents comes from [OwnerToken], not from secret ids.
type TaskID string

// OwnerToken identifies who started a background task (typically an agent session). Executors
// store it verbatim and never interpret it; the policy that compares tokens lives in the consumer.
// The empty token means "no owner".
type OwnerToken string

// Request is a command to run. Only Command is required; every other field may be left at its
// zero value to take the executor's default. [Executor.Resolve] returns the request with every
// default filled and every cap applied, so a caller can see what will run; Run and Start resolve
// whatever they are given the same way, so a request built by hand with zero limits is run with
// the defaults.
type Request struct {
	// Command is the bash source to run, as with bash -c. It must not be empty or blank.
	Command string
	// Workdir is the directory the command starts in. Empty means the executor's configured
	// working directory. It is passed through verbatim: it is not made absolute or checked.
	Workdir string
	// Timeout bounds a foreground run. Zero means the executor's default; a negative value is an
	// error. The effective value is capped by the executor's maximum. Background tasks have no
	// timeout.
	Timeout time.Duration
	// StdoutMaxBytes is a trusted caller's in-memory budget for stdout of a foreground run. Zero
	// means the executor's per-stream default. It is not capped: model-facing tools never set it.
	StdoutMaxBytes int
	// Stdin, when non-nil, is written to the command's standard input, which is then closed. A
	// non-nil empty slice gives an input that is closed at once. Nil means standard input is
	// /dev/null.
	Stdin []byte
	// Env holds extra variables. They win over the executor's scrubbing and terminal overrides:
	// a trusted caller may pass a credential-shaped name on purpose. Nil means none.
	Env map[string]string
	// Owner is the token stored on a background task; empty means the task has no owner. A
	// foreground run ignores it.
	Owner OwnerToken
	// Sandbox, when its Mode is set, replaces the executor's sandbox policy for this call as a
	// whole; the zero value takes the executor's. Like Env it is for trusted callers: a
	// model-facing tool sets it only once a person approved it.
	Sandbox Sandbox
	// TTY, when non-nil, runs a background task on a pseudo-terminal of that size: the terminal
	// is its stdin, stdout and stderr (so its output is all stdout, as a person sees it) and its
	// input stays open for [Interactive.Write]. OpenStdin makes a background task's stdin a pipe
	// that stays open (after Stdin, if set, was written) until [Interactive.CloseInput]. Run
	// ignores both. An executor that is not [Interactive] does not read them: check with
	// [InteractiveOf] first. An Interactive executor that cannot give them makes Start fail with
	// an error matching [ErrUnsupported].
	TTY       *TTY
	OpenStdin bool
	// Progress, when non-nil, is called during a foreground Run with the output so far: at most
	// every [ProgressInterval], only when the command wrote more since the last report, from a
	// goroutine of the executor's, and never once Run has returned. It must not block for long:
	// the next report waits for it. Background tasks ignore it; a backend that cannot watch its
	// output may never call it.
	Progress func(Progress)
}

// ProgressInterval is the shortest time between two calls of [Request.Progress].
const ProgressInterval = 250 * time.Millisecond

// Progress is what a foreground command has written so far: Bytes on stdout and stderr together,
// and LastLine, the last whole non-empty line of the stream that grew last: one the command
// ended with a newline or a carriage return (as a progress bar does), never a line still being
// written, which could show half of a value that redaction would recognise whole; without its
// line ending, valid UTF-8, at most [MaxProgressLine] bytes with the start cut off.
type Progress struct {
	Bytes    int64
	LastLine string
}

// MaxProgressLine bounds [Progress.LastLine] in bytes.
const MaxProgressLine = 256

// Spill describes the file that holds a stream beyond what is kept in memory. Path is empty when
// there is no usable file (never created, abandoned after a write error, or not sealed cleanly).
// Partial reports that the file holds only the first Bytes bytes of the stream, up to the
// executor's spill cap, rather than all of it. Bytes is what the file holds so far.
type Spill struct {
	Path    string
	Partial bool
	Bytes   int64
}

// Output is one collected stream (stdout or stderr) of a foreground run. The executor keeps the
// first bytes of the stream (Head) and the last bytes (Tail) and drops what lies between.
//
// When OmittedBytes is zero, Head followed by Tail is the whole stream and Spill is empty.
// Otherwise OmittedBytes bytes were dropped between them, and Spill names the file that holds the
// stream from byte 0 when one is available. Head and Tail are valid UTF-8: cuts never split a multi-byte character
// (the bytes of a split character are counted as omitted) and invalid input bytes are replaced
// with U+FFFD. TotalBytes is the number of bytes the command wrote to the stream.
type Output struct {
	Head         string
	Tail         string
	OmittedBytes int64
	TotalBytes   int64
	Spill        Spill
}

// Truncated reports whether bytes were dropped between o.Head and o.Tail.
func (o Output) Truncated() bool { return o.OmittedBytes > 0 }

// Text returns o.Head and o.Tail joined. It is the whole stream when o is not truncated; when it is,
// callers should render their own notice between the two parts instead.
func (o Output) Text() string { return o.Head + o.Tail }

// RunResult is the outcome of a foreground run.
//
// Exactly one cause is reported for an early end: TimedOut when the executor's own deadline fired
// first, Aborted when the caller's context was cancelled first, ProcessLimit when the executor
// stopped the command's tree for holding the process limit. A command that signals itself has
// none. TimedOut is reported however the process then ended: a command that traps SIGTERM and
// exits 0 after the deadline has TimedOut set and ExitCode 0.
type RunResult struct {
	// ExitCode is the exit status, or nil when the process was killed by a signal.
	ExitCode *int
	// Signal is the name of the signal that killed the process ("SIGTERM"), or empty.
	Signal string
	// TimedOut and Aborted say why the executor stopped the command, if it did.
	TimedOut bool
	Aborted  bool
	// ProcessLimit says the command's tree reached the number of processes its backend allows
	// and was stopped (a fork bomb); results shown to a model end with ProcessLimitMarker then.
	ProcessLimit bool
	// Timeout is the effective timeout that was applied.
	Timeout time.Duration
	Stdout  Output
	Stderr  Output
	// Sandbox says how the run was confined; nil when it was not.
	Sandbox *SandboxReport
}

// ProcessLimitMarker is the line a result ends with when the command's tree was stopped for
// reaching the process limit (RunResult.ProcessLimit, and a background task's last read).
const ProcessLimitMarker = "[process limit reached]"

// TaskStatus is the state of a background task. It leaves TaskRunning exactly once.
type TaskStatus string

// The states of a background task. A task is TaskKilled when it was killed through the executor,
// failed to spawn, or died by any signal; otherwise it ends TaskCompleted, whatever its exit code.
const (
	TaskRunning   TaskStatus = "running"
	TaskCompleted TaskStatus = "completed"
	TaskKilled    TaskStatus = "killed"
)

// TaskRead is the result of one consuming read of a background task's output.
//
// Delta holds the stdout bytes not delivered before, then, when stderr has new bytes, a section
// "[stderr]\n" followed by them; a newline is inserted before that section when the stdout part is
// not empty and does not end with one. The two streams are not interleaved in time. Delta is valid
// UTF-8: a multi-byte character at the end of what has been written so far is held back until it
// is complete.
//
// Where a stream's bytes were dropped from memory before they could be read (Lossy), its part of
// Delta says so on a line of its own, [DroppedMarker] of the bytes dropped, between what was kept
// before the gap (ended with a newline when it did not end with one) and what was kept after it,
// which resumes at the start of a line when the kept bytes hold a newline. So every line of a
// delta is a line the command printed or a marker, except that the line before a marker may be
// cut short.
type TaskRead struct {
	Task  *Task
	Delta string
	// Lossy reports that bytes written since the previous read were dropped from memory before
	// they could be read; OmittedBytes counts them (both streams together).
	Lossy        bool
	OmittedBytes int64
	// StdoutSpill and StderrSpill name the spill file of each stream once it has one.
	StdoutSpill Spill
	StderrSpill Spill
}

// TaskListener receives a background task when it finishes. It runs after the task's exit facts
// are final and before the task's Done channel is closed.
//
//catalog:event bash/task-done
//catalog:mode emit
type TaskListener func(task *Task)

// ErrClosed is returned by an executor's methods after Close has begun.
var ErrClosed = errors.New("bash: executor closed")

// ErrUnknownTask is matched (with errors.Is) by the error an executor returns for a task id it
// never issued. The error itself is an *UnknownTaskError.
var ErrUnknownTask = errors.New("unknown bash task")

// UnknownTaskError reports a task id that the executor never issued. Its message is
// `unknown bash task "<id>"`.
type UnknownTaskError struct {
	ID TaskID
}

// Error returns the message `unknown bash task "<id>"`.
func (e *UnknownTaskError) Error() string { return fmt.Sprintf("unknown bash task %q", string(e.ID)) }

// Is reports whether target is ErrUnknownTask.
func (e *UnknownTaskError) Is(target error) bool { return target == ErrUnknownTask }

// ErrAbortedBeforeSpawn is matched by the error Run returns when its context was already done:
// nothing was started. The message is "aborted before spawn: <cause>".
var ErrAbortedBeforeSpawn = errors.New("aborted before spawn")

// DroppedMarker returns the line that stands in a TaskRead's Delta where n bytes of a stream were
// dropped from memory before they could be read: "[… n bytes dropped …]" and a newline.
func DroppedMarker(n int64) string {
	return "[… " + strconv.FormatInt(n, 10) + " bytes dropped …]\n"
}
