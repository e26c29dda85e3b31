package persistentbash

import (
	"encoding/json"
	"strings"

	"github.com/dsh-go/dsh/tool-bash-persistent/internal/ptyshell"
	"github.com/dsh-go/dsh/tools"
)

// Facts are the facts of a bash result, carried in tools.Result.Structured (an MCP client reads
// them as structuredContent), the output included, so either block alone tells the whole story:
// the text is rendered from the same run, and the card reads these, never the text, so output
// that looks like a marker fools nobody.
type Facts struct {
	Outcome       string `json:"outcome" jsonschema:"completed, continuation (the command was incomplete), at-prompt, shell-exited, lost or timed-out."`
	Output        string `json:"output" jsonschema:"The command's output as the text block shows it: sanitized, and when clipped its head, the clip notice and its tail (the partial output of a timed-out call)."`
	ExitCode      *int   `json:"exitCode,omitempty" jsonschema:"The command's exit status, when it completed."`
	ShellExitCode *int   `json:"shellExitCode,omitempty" jsonschema:"The shell's exit status, when the shell exited."`
	ShellSignal   string `json:"shellSignal,omitempty" jsonschema:"The signal that killed the shell, when one did."`
	Reset         bool   `json:"reset,omitempty" jsonschema:"The shell was replaced: the next call starts a fresh one."`
	ResetCause    string `json:"resetCause,omitempty" jsonschema:"Set on the first result after the shell was reset (the text then starts with the reset notice): why the previous shell went (the previous call was cancelled or timed out, the shell exited or could no longer be followed); this command ran in a fresh shell."`
	OmittedChars  int64  `json:"omittedChars,omitempty" jsonschema:"Characters clipped from the middle of the output."`
	OmittedLines  int64  `json:"omittedLines,omitempty" jsonschema:"Lines clipped from the middle of the output."`
	StdinEOF      bool   `json:"stdinEOF,omitempty" jsonschema:"A program waiting for terminal input was sent end-of-file."`
	Sandbox       string `json:"sandbox,omitempty" jsonschema:"The sandbox the shell runs in, when one applies."`
	Trailer       int    `json:"trailer" jsonschema:"How many lines at the end of the text are the tool's own notices and markers (a reset notice is the first line of the text instead)."`
}

// outcomeName names r's outcome for the facts.
func outcomeName(r ptyshell.Result) string {
	switch r.Outcome {
	case ptyshell.Completed:
		return "completed"
	case ptyshell.Continuation:
		return "continuation"
	case ptyshell.ShellExited:
		return "shell-exited"
	case ptyshell.Lost:
		return "lost"
	}
	return "at-prompt"
}

// runFacts returns the facts of a finished run whose text starts with output; text is the whole
// result text.
func runFacts(r ptyshell.Result, reset bool, output, text string) Facts {
	f := Facts{Outcome: outcomeName(r), Output: output, Reset: reset, OmittedChars: r.Output.OmittedChars,
		OmittedLines: r.Output.OmittedLines, StdinEOF: r.StdinEOFs > 0, Trailer: trailerLines(output, text)}
	switch r.Outcome {
	case ptyshell.Completed:
		code := r.ExitCode
		f.ExitCode = &code
	case ptyshell.ShellExited:
		if r.Exit.Known && r.Exit.Signal != "" {
			f.ShellSignal = r.Exit.Signal
		} else if r.Exit.Known {
			code := r.Exit.Code
			f.ShellExitCode = &code
		}
	}
	return f
}

// trailerLines counts the lines of text after output (which text starts with, joined by a
// newline).
func trailerLines(output, text string) int {
	rest := strings.TrimPrefix(text, output)
	if output != "" {
		rest = strings.TrimPrefix(rest, "\n")
	}
	if rest == "" {
		return 0
	}
	return strings.Count(rest, "\n") + 1
}

// withFacts returns the text result with facts as its structured content.
func withFacts(text string, f Facts) (tools.Result, error) {
	return tools.Structured(tools.Text(text), f)
}

// withResetNotice returns the result of text and f (as withFacts), opened by the reset notice when
// the owner's previous shell was reset for reason prior ("": it was not); dir is where the
// shell that ran this command started.
func withResetNotice(prior, dir, text string, f Facts) (tools.Result, error) {
	if prior != "" {
		text = joinLines(resetNotice(prior, dir), text)
		f.ResetCause = prior
	}
	return withFacts(text, f)
}

// factsOf decodes the facts of res, reporting false when it has none.
func factsOf(res tools.Result) (Facts, bool) {
	var f Facts
	return f, len(res.Structured) > 0 && json.Unmarshal(res.Structured, &f) == nil
}
