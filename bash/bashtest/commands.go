package bashtest

import (
	"fmt"
	"strings"
)

// The commands the kit runs, with what bash does with them. They are exported so that a fake
// executor (like the one in package bash's own tests) can simulate exactly these commands and be
// checked by the kit without a shell.
const (
	// CmdTrue exits 0 with no output.
	CmdTrue = "true"
	// CmdEcho writes "hi\n" to stdout and exits 0.
	CmdEcho = "echo hi"
	// CmdExit3 exits 3 with no output.
	CmdExit3 = "exit 3"
	// CmdStreams writes "out" (no newline) to stdout and "err\n" to stderr, and exits 3.
	CmdStreams = "printf out; echo err >&2; exit 3"
	// CmdSleep sleeps for 60 s; SIGTERM ends it.
	CmdSleep = "sleep 60"
	// CmdTrapTerm ignores SIGTERM (its sleep inherits that), writes "armed\n" and sleeps for 60 s;
	// only SIGKILL ends it.
	CmdTrapTerm = "trap '' TERM; echo armed; sleep 60"
	// CmdTrapExit writes "armed\n" and waits for a background sleep of 60 s; on SIGTERM it exits 0.
	CmdTrapExit = "trap 'exit 0' TERM; echo armed; sleep 60 & wait"
	// CmdSelfTerm sends SIGTERM to its own shell and dies of it.
	CmdSelfTerm = "kill -TERM $$"
	// CmdPwd writes its working directory, symbolic links resolved, and a newline.
	CmdPwd = "pwd -P"
	// CmdStdinEnv copies its standard input to stdout, then writes "[" + $BASHTEST_VAR + "]"
	// (see EnvVar) with no newline.
	CmdStdinEnv = `cat; printf '[%s]' "$BASHTEST_VAR"`
	// CmdLeaveChild leaves a sleep of 60 s running in the background, writes "done\n" and exits
	// 0 while the sleep still holds its stdout and stderr.
	CmdLeaveChild = "sleep 60 & echo done"
	// CmdOutErr writes "out\n" to stdout and "err\n" to stderr.
	CmdOutErr = "echo out; echo err >&2"
	// CmdErr writes "err\n" to stderr.
	CmdErr = "echo err >&2"
	// CmdPrintfOutErr writes "out" (no newline) to stdout and "err\n" to stderr.
	CmdPrintfOutErr = "printf out; echo err >&2"
	// CmdOut writes "out\n" to stdout.
	CmdOut = "echo out"
	// CmdPrintfOut writes "out" (no newline) to stdout.
	CmdPrintfOut = "printf out"
)

// EnvVar is the variable CmdStdinEnv prints; the kit passes it through Request.Env.
const EnvVar = "BASHTEST_VAR"

// GateCommand returns a command that writes "first\n", waits until a file exists at path
// (checking every 10 ms), then writes "second\n" and exits 0.
func GateCommand(path string) string {
	return fmt.Sprintf("echo first; while [ ! -e %s ]; do sleep 0.01; done; echo second", shellQuote(path))
}

// MarkerCommand returns a command that creates the file at path (writing "spawned\n" to it).
func MarkerCommand(path string) string {
	return fmt.Sprintf("echo spawned > %s", shellQuote(path))
}

// LinesCommand returns a command that writes Lines(n) to stdout, or to stderr when toStderr is set,
// and exits 0. n must be between 1 and 999,999.
func LinesCommand(n int, toStderr bool) string {
	cmd := fmt.Sprintf("seq -f 'line-%%06g' 1 %d", n)
	if toStderr {
		cmd += " >&2"
	}
	return cmd
}

// Lines returns the text LinesCommand(n, …) writes: n lines "line-000001\n", "line-000002\n", …,
// 12 bytes each.
func Lines(n int) string {
	var b strings.Builder
	b.Grow(12 * n)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line-%06d\n", i)
	}
	return b.String()
}

// shellQuote quotes s as one bash word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
