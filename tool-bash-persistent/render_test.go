//go:build linux

package persistentbash

import (
	"testing"
	"unicode/utf8"

	"github.com/dsh-go/dsh/tool-bash-persistent/internal/ptyshell"
)

func TestRender(t *testing.T) {
	checkLeaks(t)
	clipped := ptyshell.Output{Head: "1\n2\n", Tail: "9\n10", OmittedChars: 12, OmittedLines: 6}
	cases := []struct {
		name  string
		r     ptyshell.Result
		want  string
		reset string
	}{
		{"empty success", ptyshell.Result{}, "", ""},
		{"output", ptyshell.Result{Output: ptyshell.Output{Head: "hi"}}, "hi", ""},
		{"status only", ptyshell.Result{ExitCode: 7}, "[exit code: 7]", ""},
		{"output and status", ptyshell.Result{Output: ptyshell.Output{Head: "x"}, ExitCode: 2}, "x\n[exit code: 2]", ""},
		{"clipped", ptyshell.Result{Output: clipped}, "1\n2\n" + clipNotice(12, 6) + "\n9\n10", ""},
		{"clipped mid-line", ptyshell.Result{Output: ptyshell.Output{Head: "ab", Tail: "yz", OmittedChars: 3}}, "ab\n" + clipNotice(3, 0) + "\nyz", ""},
		{"stdin notes before the status", ptyshell.Result{StdinEOFs: 1, Interrupted: true, ExitCode: 130}, StdinEOFText + "\n" + StdinInterruptText + "\n[exit code: 130]", ""},
		{"at prompt", ptyshell.Result{Outcome: ptyshell.AtPrompt, Output: ptyshell.Output{Head: "partial"}}, "partial", ""},
		{"continuation", ptyshell.Result{Outcome: ptyshell.Continuation}, ContinuationText, ""},
		{"exit code", ptyshell.Result{Outcome: ptyshell.ShellExited, Output: ptyshell.Output{Head: "bye"}, Exit: ptyshell.Exit{Known: true, Code: 9}}, "bye\n[shell exited: code 9]\n" + ResetText, "the shell exited with code 9"},
		{"signal", ptyshell.Result{Outcome: ptyshell.ShellExited, Exit: ptyshell.Exit{Known: true, Signal: "SIGTERM"}}, "[shell killed by signal: SIGTERM]\n" + ResetText, "the shell was killed by SIGTERM"},
		{"unknown exit", ptyshell.Result{Outcome: ptyshell.ShellExited}, "[shell exited]\n" + ResetText, "the shell exited"},
		{"lost: redirected", ptyshell.Result{Outcome: ptyshell.Lost, Lost: ptyshell.LostRedirected, Output: ptyshell.Output{Head: "before"}}, "before\n" + RedirectedText + "\n" + ResetText, "the shell could no longer be followed (output redirected)"},
		{"lost: prompt", ptyshell.Result{Outcome: ptyshell.Lost, Lost: ptyshell.LostPrompt}, UnreportedPromptText + "\n" + ResetText, "the shell could no longer be followed (prompt not reported)"},
		{"lost: reading", ptyshell.Result{Outcome: ptyshell.Lost, Lost: ptyshell.LostReading, StdinEOFs: 3, Interrupted: true}, StdinEOFText + "\n" + StdinInterruptText + "\n" + ShellReadingText + "\n" + ResetText, "the shell could no longer be followed (shell kept reading)"},
		{"lost: stopped", ptyshell.Result{Outcome: ptyshell.Lost, Lost: ptyshell.LostStopped}, StoppedText + "\n" + ResetText, "the shell could no longer be followed (shell stopped)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, reset := render(c.r)
			if got != c.want || reset != c.reset {
				t.Fatalf("got %q reset %q, want %q %q", got, reset, c.want, c.reset)
			}
		})
	}
	if got := timeoutText(1500*1e6, outputText(ptyshell.Output{Head: "p"})); got != "Your command timed out after 2 seconds. Below is partial output:\np\n"+ResetText {
		t.Fatalf("timeout text %q", got)
	}
	if got := timeoutText(10*1e6, outputText(ptyshell.Output{})); got != "Your command timed out after 0 seconds. Below is partial output:\n\n"+ResetText {
		t.Fatalf("timeout text %q", got)
	}
}

// FuzzPresentResult checks the result presenter on any text: no panic, and a completed run's
// exit code reads back from what render produced unless the output itself ends in a line that
// looks like an exit-code line.
func FuzzPresentResult(f *testing.F) {
	for _, s := range []string{"", "hi", "x\n[exit code: 7]", "[exit code: 300]", "\n", ResetText} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(9))
	}
	f.Fuzz(func(t *testing.T, out string, code uint8) {
		if !utf8.ValidString(out) {
			return
		}
		res := ptyshell.Result{Outcome: ptyshell.Completed, Output: ptyshell.Output{Head: out}, ExitCode: int(code)}
		text, reset := render(res)
		r, err := withFacts(text, runFacts(res, reset != "", outputText(res.Output), text))
		if err != nil {
			t.Fatal(err)
		}
		v, ok := presentResult(Args{Command: "x"}, r)
		if !ok || v.Terminal == nil {
			t.Fatalf("no terminal view for %q", text)
		}
		// Whatever the output looks like (a forged "[exit code: N]" line included), the card
		// shows the command's own output and code.
		if v.Terminal.ExitCode == nil || *v.Terminal.ExitCode != int(code) || v.Terminal.Output != out {
			t.Fatalf("read back %+v from %q, want code %d output %q", v.Terminal, text, code, out)
		}
	})
}
