package persistentbash

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/dsh-go/dsh/tools"
)

var exitCodeLine = regexp.MustCompile(`(?:^|\n)\[exit code: (\d{1,3})\]$`)

// presentResult shows a result on the call's terminal card: the text without its final
// "[exit code: N]" line, and N as the exit code (0 when the line is absent). A result that
// ends with the reset notice (the shell exited or the call timed out) has no exit code, and a
// failed call is shown as a console block on the generic card. The exit code is read back from
// the text, so output whose own last line is exactly "[exit code: N]" shows that code.
func presentResult(_ Args, r tools.Result) (tools.ResultView, bool) {
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		return tools.ResultView{}, false
	}
	text := r.Content[0].Text
	if r.IsError {
		return tools.ResultView{Content: []tools.Content{tools.ConsoleBlock(text)}}, true
	}
	if strings.HasSuffix(text, ResetText) {
		return tools.ResultView{Terminal: &tools.TerminalResult{Output: text}}, true
	}
	code := 0
	if m := exitCodeLine.FindStringSubmatchIndex(text); m != nil {
		code, _ = strconv.Atoi(text[m[2]:m[3]])
		text = text[:m[0]]
	}
	return tools.ResultView{Terminal: &tools.TerminalResult{Output: text, ExitCode: &code}}, true
}
