package toolbash

import (
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtext"
	"github.com/dsh-go/dsh/internal/termtext"
)

// renderRun renders a foreground run the way the model reads it: stdout, then a "[stderr]"
// section when stderr is not empty, "(no output)" when both are, then the markers
// "[timed out after Nms]" (whenever the executor's deadline fired, however the command then
// ended), "[killed by signal: SIG]" or "[exit code: N]" (non-zero only), "[process limit reached]"
// (bash.ProcessLimitMarker: the executor stopped a tree that reached its process limit), and for a
// sandboxed run "[sandbox: not enforced: …]" (best effort) and "[sandbox: <what was denied>]" (a
// failure), one per line. The streams' text is taken from f, the facts of the same run, so it is rendered once.
func renderRun(res bash.RunResult, f RunFacts) string {
	body := f.Stdout.Text
	if errText := f.Stderr.Text; errText != "" {
		if body != "" && !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		body += "[stderr]\n" + errText
	}
	if body == "" {
		body = "(no output)"
	}
	var markers []string
	if res.TimedOut {
		markers = append(markers, fmt.Sprintf("[timed out after %dms]", res.Timeout.Milliseconds()))
	}
	switch {
	case res.Signal != "":
		markers = append(markers, "[killed by signal: "+res.Signal+"]")
	case res.ExitCode != nil && *res.ExitCode != 0:
		markers = append(markers, fmt.Sprintf("[exit code: %d]", *res.ExitCode))
	}
	if res.ProcessLimit {
		markers = append(markers, bash.ProcessLimitMarker)
	}
	markers = append(markers, bashtext.SandboxMarkers(res.Sandbox)...)
	if len(markers) == 0 {
		return body
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + strings.Join(markers, "\n")
}

// renderStream renders one collected stream, sanitized (termtext.String: no escape sequence or
// control a terminal would act on; the spill file keeps the raw bytes): the whole text, or, when
// bytes were dropped, the head, one truncation line and the tail, each sanitized on its own.
func renderStream(o bash.Output) string {
	if !o.Truncated() {
		return termtext.String(o.Text())
	}
	head := termtext.String(o.Head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return head + truncationLine(o) + "\n" + termtext.String(o.Tail)
}

// truncationLine says how many bytes were omitted and where the whole stream is.
func truncationLine(o bash.Output) string {
	where := "full output: (unavailable)"
	switch {
	case o.Spill.Path != "" && o.Spill.Partial:
		where = fmt.Sprintf("first %d bytes: %s", o.Spill.Bytes, o.Spill.Path)
	case o.Spill.Path != "":
		where = "full output: " + o.Spill.Path
	}
	return fmt.Sprintf("[output truncated: %d bytes omitted; %s]", o.OmittedBytes, where)
}

// statusLine renders a background task's state: "[status: running]",
// "[status: killed by SIG]" or "[status: killed]", "[status: completed, exit code: N]" (an
// unknown code reads as 0).
func statusLine(s taskFacts) string {
	switch s.status {
	case bash.TaskRunning:
		return "[status: running]"
	case bash.TaskKilled:
		if s.signal != "" {
			return "[status: killed by " + s.signal + "]"
		}
		return "[status: killed]"
	}
	return fmt.Sprintf("[status: completed, exit code: %d]", s.code)
}

// taskFacts is a snapshot of a task's state.
type taskFacts struct {
	status bash.TaskStatus
	code   int
	signal string
}

func factsOf(t *bash.Task) taskFacts {
	f := taskFacts{status: t.Status(), signal: t.Signal()}
	if code := t.ExitCode(); code != nil {
		f.code = *code
	}
	return f
}

// renderRead renders one bash_output read: the new output, sanitized like a foreground run's,
// or "(no new output)", a note when output was dropped from memory before it could be read
// (naming the spill files), and the status line taken before the read. output is the new
// output sanitized (termtext.String of read.Delta), as the result's facts carry it.
func renderRead(read bash.TaskRead, facts taskFacts, output string) string {
	text := output
	if text == "" {
		text = "(no new output)"
	}
	if read.Lossy {
		var paths []string
		for _, sp := range []bash.Spill{read.StdoutSpill, read.StderrSpill} {
			switch {
			case sp.Path != "" && sp.Partial:
				paths = append(paths, fmt.Sprintf("%s (first %d bytes)", sp.Path, sp.Bytes))
			case sp.Path != "":
				paths = append(paths, sp.Path)
			}
		}
		where := "(unavailable)"
		if len(paths) > 0 {
			where = strings.Join(paths, ", ")
		}
		text += "\n[some output was dropped from memory; full output: " + where + "]"
	}
	return text + "\n" + statusLine(facts)
}

// completionNotice is the text injected into the owning agent when its background task ends.
func completionNotice(id bash.TaskID, facts taskFacts) string {
	return fmt.Sprintf("background bash task %s finished %s. Read its output with bash_output.", id, statusLine(facts))
}
