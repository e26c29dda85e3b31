package bashlocal

import (
	"fmt"

	"github.com/dsh-go/dsh/internal/proctree"
	"github.com/dsh-go/dsh/internal/supervisor"
)

// Supervise keeps, on Linux, the promise that no command outlives the program that runs it, even
// when the program is killed without a chance to call Close (SIGKILL, an OOM kill, a crash). Call
// it first thing in main, before the program starts anything or reads its input:
//
//	func main() {
//		if err := bashlocal.Supervise(); err != nil {
//			log.Fatal(err) // going on would silently lose the promise
//		}
//		... // the program, as before
//	}
//
// The process that was started stays as a small supervisor: it re-executes the program
// (/proc/self/exe) with the same arguments, environment and standard streams, as its child in a
// session of its own, forwards the signals it receives (SIGHUP, SIGINT, SIGQUIT, SIGTERM, the
// other signals that end a Go program, SIGUSR1, SIGUSR2, SIGWINCH), and exits as the program
// did. Both are child subreapers, so every command and everything a command starts stays below
// one of them. When the program dies, the supervisor stops everything below it; when the
// supervisor dies, the program stops everything below it and exits with status 125. Either way
// the soft signals come first and SIGKILL 250 ms later, so that everything is gone within a
// second. Stopping everything below means every descendant, not only the commands: a program
// whose own children must survive it should not call Supervise.
//
// In the program (the supervisor's child) Supervise returns nil; in the supervisor it never
// returns. It returns an error when the supervisor cannot be set up, or when the environment
// names a supervisor (DSH_SUPERVISOR) that is not this process's parent. Outside Linux it
// returns nil at once and nothing is promised: there is no child subreaper to keep escapees
// below the program.
func Supervise() error {
	if err := supervisor.Main(); err != nil {
		return fmt.Errorf("bashlocal: %w", err)
	}
	return nil
}

// HideFromCommands makes this process's /proc files unreadable to the commands it runs (Linux):
// without it, any command can print the harness's own environment, unscrubbed, with
// `cat /proc/$PPID/environ`, and read its memory and open files the same way. It marks the
// process non-dumpable (prctl PR_SET_DUMPABLE 0), which also turns off its core dumps and
// tracing by its own user; its command line and /proc/PID/stat stay readable. The setting is
// process-wide and lasts; the commands themselves are dumpable again after execve, so the
// executor still reads their environment to find escapees. Call it once, early. It returns the
// error of prctl(2); outside Linux it does nothing and returns nil (darwin and freebsd show a
// process's environment to its user through sysctl, which no call turns off).
func HideFromCommands() error {
	if err := proctree.SetDumpable(false); err != nil {
		return fmt.Errorf("bashlocal: make the process non-dumpable: %w", err)
	}
	return nil
}
