package persistentbash

import (
	"strings"

	"github.com/dsh-go/dsh/tools"
)

// presentResult shows a result on the call's terminal card: the text without the tool's own
// trailing lines (as many as its facts say), and the command's exit code from its facts (none
// when the shell was reset or the call timed out). A failed call is a console block on the
// generic card; a result without facts gets no presentation: the text alone is no evidence.
func presentResult(_ Args, r tools.Result) (tools.ResultView, bool) {
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		return tools.ResultView{}, false
	}
	text := r.Content[0].Text
	if r.IsError {
		return tools.ResultView{Content: []tools.Content{tools.ConsoleBlock(text)}}, true
	}
	f, ok := factsOf(r)
	if !ok {
		return tools.ResultView{}, false
	}
	view := &tools.TerminalResult{Output: withoutLastLines(text, f.Trailer), ExitCode: f.ExitCode, Signal: f.ShellSignal, TimedOut: f.Outcome == "timed-out"}
	if f.Reset || f.Outcome == "timed-out" {
		view.Output = text // the reset notice belongs on the card
		view.ExitCode = nil
	}
	return tools.ResultView{Terminal: view}, true
}

// withoutLastLines returns text without its last n lines (and the newline before them).
func withoutLastLines(text string, n int) string {
	for ; n > 0 && text != ""; n-- {
		i := strings.LastIndexByte(text, '\n')
		if i < 0 {
			return ""
		}
		text = text[:i]
	}
	return text
}
