package persistentbash

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-go/dsh/tool-bash-persistent/internal/ptyshell"
)

// Model-facing texts of a result.
const (
	// ResetText ends every result after which the owner's shell was replaced.
	ResetText = "The persistent bash shell was reset; the next bash call starts from the workspace with a fresh current directory and environment."
	// ContinuationText answers a command that left the shell at its continuation prompt.
	ContinuationText = "[the shell stopped at its continuation prompt, waiting for the rest of the command (an unclosed quote, here-document or trailing backslash); it was interrupted and the command did not run; the shell's state is kept]"
	// StdinEOFText notes that a program waiting for terminal input was sent end-of-file.
	StdinEOFText = "[stdin: the command waited for input on the terminal and was sent end-of-file; this tool cannot type input: pipe it in, use a here-document or a file, or run the program non-interactively]"
	// StdinInterruptText notes that a program kept waiting for input and was interrupted.
	StdinInterruptText = "[stdin: a program kept waiting for input on the terminal and was interrupted (SIGINT)]"
	// StdinKillText notes that a program still kept waiting for input and was killed.
	StdinKillText = "[stdin: a program still kept waiting for input on the terminal and was killed (SIGKILL)]"
	// RedirectedText says why a shell whose standard output left the terminal was reset.
	RedirectedText = "[the shell's standard output no longer goes to its terminal (exec >FILE, exec 1>&-), so the end of a command cannot be seen]"
	// UnreportedPromptText says why a shell back at its prompt without reporting it was reset.
	UnreportedPromptText = "[the shell returned to its prompt without reporting the end of the command: the builtins that report it no longer run (a function named builtin, enable -n, a DEBUG trap with extdebug)]"
	// ShellReadingText says why a shell that kept reading the terminal itself was reset.
	ShellReadingText = "[the shell itself kept reading the terminal after end-of-file and SIGINT]"
	// StoppedText says why a stopped shell was reset.
	StoppedText = "[the shell was stopped (suspend, SIGSTOP) and cannot run anything]"
	// CancelledCause is why the shell of a call cancelled while it ran was reset (the reset
	// notice of the next result says it).
	CancelledCause = "the previous call was cancelled"
)

// clipNotice is the line placed between the head and the tail of clipped output.
func clipNotice(chars, lines int64) string {
	return fmt.Sprintf("[output clipped: %d characters (%d lines) omitted from the middle; narrow the command (grep -n, head, tail, sed -n) to see them]", chars, lines)
}

// outputText joins head, clip notice and tail.
func outputText(o ptyshell.Output) string {
	if !o.Clipped() {
		return o.Head + o.Tail
	}
	var b strings.Builder
	b.WriteString(o.Head)
	if o.Head != "" && !strings.HasSuffix(o.Head, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(clipNotice(o.OmittedChars, o.OmittedLines))
	b.WriteByte('\n')
	b.WriteString(o.Tail)
	return b.String()
}

// joinLines joins the non-empty parts with newlines.
func joinLines(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	return b.String()
}

// render returns the model-facing text of a finished run. When the shell is gone (the text then
// ends with ResetText), reset is why, for the next result's notice; otherwise it is "".
func render(r ptyshell.Result) (text, reset string) {
	notes := stdinNotes(r)
	switch r.Outcome {
	case ptyshell.Completed:
		status := ""
		if r.ExitCode != 0 {
			status = "[exit code: " + strconv.Itoa(r.ExitCode) + "]"
		}
		return joinLines(outputText(r.Output), notes, status), ""
	case ptyshell.Continuation:
		return joinLines(outputText(r.Output), ContinuationText), ""
	case ptyshell.ShellExited:
		return joinLines(outputText(r.Output), notes, exitLine(r.Exit), ResetText), exitCause(r.Exit)
	case ptyshell.Lost:
		return joinLines(outputText(r.Output), notes, lostLine(r.Lost), ResetText), "the shell could no longer be followed (" + r.Lost.String() + ")"
	default: // AtPrompt
		return joinLines(outputText(r.Output), notes), ""
	}
}

func stdinNotes(r ptyshell.Result) string {
	var notes []string
	if r.StdinEOFs > 0 {
		notes = append(notes, StdinEOFText)
	}
	if r.Interrupted {
		notes = append(notes, StdinInterruptText)
	}
	if r.Killed {
		notes = append(notes, StdinKillText)
	}
	return strings.Join(notes, "\n")
}

// exitLine describes how the shell process ended.
func exitLine(e ptyshell.Exit) string {
	switch {
	case !e.Known:
		return "[shell exited]"
	case e.Signal != "":
		return "[shell killed by signal: " + e.Signal + "]"
	default:
		return "[shell exited: code " + strconv.Itoa(e.Code) + "]"
	}
}

// exitCause says how the shell process ended, for the reset notice.
func exitCause(e ptyshell.Exit) string {
	switch {
	case !e.Known:
		return "the shell exited"
	case e.Signal != "":
		return "the shell was killed by " + e.Signal
	default:
		return "the shell exited with code " + strconv.Itoa(e.Code)
	}
}

// lostLine says why a shell could no longer be followed.
func lostLine(r ptyshell.LostReason) string {
	switch r {
	case ptyshell.LostRedirected:
		return RedirectedText
	case ptyshell.LostPrompt:
		return UnreportedPromptText
	case ptyshell.LostReading:
		return ShellReadingText
	case ptyshell.LostStopped:
		return StoppedText
	}
	return "[the shell could no longer be followed]"
}

// timeoutText is the result of a call whose deadline passed: the partial output, then
// ResetText; partial is the partial output as outputText renders it.
func timeoutText(d time.Duration, partial string) string {
	return fmt.Sprintf("Your command timed out after %d seconds. Below is partial output:\n%s\n%s", seconds(d), partial, ResetText)
}

// timeoutCause is why a shell whose call passed its deadline d was reset, for the reset notice.
func timeoutCause(d time.Duration) string {
	return fmt.Sprintf("the previous command timed out after %d seconds", seconds(d))
}

// seconds is d in whole seconds, rounded half up.
func seconds(d time.Duration) int64 { return int64(math.Round(d.Seconds())) }

// resetNotice is the first line of the first result after the owner's shell was reset: why the
// old shell went (cause), and where the fresh one, which ran this command, started.
func resetNotice(cause, dir string) string {
	return "[shell reset: " + cause + "; this command ran in a fresh shell started in " + dir +
		", without the directory changes, variables, functions and aliases of earlier calls]"
}
