// Package supervisor keeps, on Linux, the promise that no process a program started outlives the
// program, even when it is killed without a chance to clean up (SIGKILL, an OOM kill, a crash).
// The process that was started stays as a small supervisor; the program runs as its worker
// child. Both are child subreapers, so everything the worker starts, escapees included, stays
// below one of them whatever it does to its session, group or environment. When either dies, the
// other stops everything below it and exits.
//
// A program opts in by calling Main first thing in main. Outside Linux there is no subreaper to
// keep things below the program: Main returns at once and nothing is promised.
package supervisor

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// markerVar marks the worker: "PID:STARTTIME" of the supervisor that started it. Its DSH_ prefix
// keeps it out of every command's environment (internal/envpolicy scrubs the prefix); the
// worker also removes it from its own environment at once.
const markerVar = "DSH_SUPERVISOR"

// watchFD is the worker's end of the supervisor's pipe: it reads end of file when the
// supervisor is gone, since the supervisor holds the only writing end.
const watchFD = 3

// Grace is how long the side that survives waits after the soft signals (SIGTERM and SIGCONT)
// before SIGKILL, when it stops everything below it: short enough that every process is gone
// within a second of the other side's death.
const Grace = 250 * time.Millisecond

// ExitOrphaned is the exit status of a worker whose supervisor died: it stopped everything it
// started, then exited.
const ExitOrphaned = 125

// Main runs this program under a supervisor (Linux). Call it first thing in main, before the
// program starts anything or reads its input: the supervisor re-executes the program
// (/proc/self/exe) with the same arguments, environment and standard streams, in a session of
// its own (it has no controlling terminal), and forwards to it the signals it receives (those of
// Terminating, and SIGUSR1, SIGUSR2 and SIGWINCH).
//
// In the worker Main returns nil, and the program runs as usual. When the supervisor dies, the
// worker stops every process below it (SIGTERM and SIGCONT, SIGKILL after Grace) and exits with
// ExitOrphaned. In the supervisor Main does not return: once the worker has exited, it stops
// whatever is left below it the same way and exits as the worker did (the same status; killed
// by the same signal for SIGKILL, SIGTERM, SIGINT and SIGHUP, 128 + its number for another).
//
// Main returns an error when the supervisor cannot be set up (becoming a subreaper, starting the
// worker), so that the caller stops rather than going on without the promise; or, in a process
// whose environment names a supervisor (the DSH_SUPERVISOR variable), when its parent is not
// that supervisor. Outside Linux it returns nil at once and promises nothing.
func Main() error { return main() }

// Terminating returns the signals that end a Go program by default and that a program can catch:
// SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS, SIGTERM,
// and SIGSTKFLT on Linux or SIGEMT on darwin and freebsd. A harness that must clean up on
// termination handles all of them as it handles SIGTERM. (A fault the program itself causes is
// still a crash: only the signals sent to it are caught. SIGPIPE ends a Go program only when it
// writes to a closed standard output; it is left out.)
func Terminating() []os.Signal {
	return append([]os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGILL,
		syscall.SIGTRAP, syscall.SIGABRT, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGSEGV,
		syscall.SIGSYS, syscall.SIGTERM}, extraTerminating...)
}

// name is how the supervisor and the worker name themselves on stderr: the program's name.
func name() string { return filepath.Base(os.Args[0]) }
