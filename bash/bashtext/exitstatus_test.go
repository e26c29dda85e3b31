package bashtext_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash/bashtext"
)

var exitStatusTests = []struct {
	name string
	text string
	want bashtext.ExitStatus
}{
	// Spec §8 item 9: no marker.
	{"empty text", "", bashtext.ExitStatus{}},
	{"no marker", "hello\nworld\n", bashtext.ExitStatus{Body: "hello\nworld\n"}},
	// Item 10: exit code marker.
	{"exit code", "out\n[exit code: 3]", bashtext.ExitStatus{Body: "out", ExitCode: 3}},
	{"exit code without leading newline", "[exit code: 3]", bashtext.ExitStatus{Body: "[exit code: 3]"}},
	{"exit code after text on the same line", "out [exit code: 3]", bashtext.ExitStatus{Body: "out [exit code: 3]"}},
	{"exit code with empty body", "\n[exit code: 3]", bashtext.ExitStatus{ExitCode: 3}},
	{"exit code zero", "out\n[exit code: 0]", bashtext.ExitStatus{Body: "out"}},
	{"body ending in a newline", "out\n\n[exit code: 1]", bashtext.ExitStatus{Body: "out\n", ExitCode: 1}},
	// Item 11: signal marker.
	{"signal", "out\n[killed by signal: SIGKILL]", bashtext.ExitStatus{Body: "out", Signal: "SIGKILL"}},
	{"signal without leading newline", "[killed by signal: SIGKILL]", bashtext.ExitStatus{Body: "[killed by signal: SIGKILL]"}},
	{"signal with empty body", "\n[killed by signal: SIGTERM]", bashtext.ExitStatus{Signal: "SIGTERM"}},
	// Item 12: only the final marker is consumed.
	{"timed-out line stays in the body", "partial\n[timed out after 100ms]\n[exit code: 124]", bashtext.ExitStatus{Body: "partial\n[timed out after 100ms]", ExitCode: 124}},
	{"earlier exit marker stays in the body", "a\n[exit code: 1]\n[exit code: 2]", bashtext.ExitStatus{Body: "a\n[exit code: 1]", ExitCode: 2}},
	{"exit marker before a signal marker", "a\n[exit code: 1]\n[killed by signal: SIGKILL]", bashtext.ExitStatus{Body: "a\n[exit code: 1]", Signal: "SIGKILL"}},
	// Edge cases: near misses are body.
	{"negative code", "out\n[exit code: -1]", bashtext.ExitStatus{Body: "out\n[exit code: -1]"}},
	{"plus sign", "out\n[exit code: +1]", bashtext.ExitStatus{Body: "out\n[exit code: +1]"}},
	{"empty code", "out\n[exit code: ]", bashtext.ExitStatus{Body: "out\n[exit code: ]"}},
	{"code with space", "out\n[exit code: 1 ]", bashtext.ExitStatus{Body: "out\n[exit code: 1 ]"}},
	{"no space after colon", "out\n[exit code:1]", bashtext.ExitStatus{Body: "out\n[exit code:1]"}},
	{"code that overflows int", "out\n[exit code: 99999999999999999999]", bashtext.ExitStatus{Body: "out\n[exit code: 99999999999999999999]"}},
	{"marker followed by a newline", "out\n[exit code: 3]\n", bashtext.ExitStatus{Body: "out\n[exit code: 3]\n"}},
	{"marker followed by a space", "out\n[exit code: 3] ", bashtext.ExitStatus{Body: "out\n[exit code: 3] "}},
	{"missing bracket", "out\n[exit code: 3", bashtext.ExitStatus{Body: "out\n[exit code: 3"}},
	{"empty signal", "out\n[killed by signal: ]", bashtext.ExitStatus{Body: "out\n[killed by signal: ]"}},
	{"signal with a bracket", "out\n[killed by signal: SIG]KILL]", bashtext.ExitStatus{Body: "out\n[killed by signal: SIG]KILL]"}},
	{"lower-case marker", "out\n[Exit Code: 3]", bashtext.ExitStatus{Body: "out\n[Exit Code: 3]"}},
	{"carriage return before the newline", "out\r\n[exit code: 3]", bashtext.ExitStatus{Body: "out\r", ExitCode: 3}},
	{"large code", "out\n[exit code: 2147483648]", bashtext.ExitStatus{Body: "out", ExitCode: 2147483648}},
	// Leading zeros are digits too: the code is what they spell.
	{"leading zeros are not a marker", "out\n[exit code: 007]", bashtext.ExitStatus{Body: "out\n[exit code: 007]"}},
	{"zero itself is", "out\n[exit code: 0]", bashtext.ExitStatus{Body: "out"}},
	{"signal name with spaces", "out\n[killed by signal: SIG X]", bashtext.ExitStatus{Body: "out", Signal: "SIG X"}},
}

func TestParseExitStatus(t *testing.T) {
	for _, tt := range exitStatusTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bashtext.ParseExitStatus(tt.text); got != tt.want {
				t.Errorf("ParseExitStatus(%q) = %+v, want %+v", tt.text, got, tt.want)
			}
		})
	}
}

// FuzzParseExitStatus checks the parser's invariants on any text: it never panics; Body is a start
// of the text; a parsed marker appended back to Body gives the text; without a marker Body is the
// text; and a marker appended to any text is parsed back off it.
func FuzzParseExitStatus(f *testing.F) {
	for _, tt := range exitStatusTests {
		f.Add(tt.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := bashtext.ParseExitStatus(text)
		checkExitStatus(t, text, got)

		withCode := text + "\n[exit code: 5]"
		if got := bashtext.ParseExitStatus(withCode); got != (bashtext.ExitStatus{Body: text, ExitCode: 5}) {
			t.Errorf("ParseExitStatus(%q) = %+v, want the text and exit code 5", withCode, got)
		}
		withSignal := text + "\n[killed by signal: SIGKILL]"
		if got := bashtext.ParseExitStatus(withSignal); got != (bashtext.ExitStatus{Body: text, Signal: "SIGKILL"}) {
			t.Errorf("ParseExitStatus(%q) = %+v, want the text and SIGKILL", withSignal, got)
		}
	})
}

func checkExitStatus(t *testing.T, text string, got bashtext.ExitStatus) {
	t.Helper()
	switch {
	case got.Signal != "":
		if got.ExitCode != 0 {
			t.Errorf("ParseExitStatus(%q) = %+v: a signal marker gives exit code 0", text, got)
		}
		if strings.ContainsAny(got.Signal, "]\n") {
			t.Errorf("ParseExitStatus(%q) = %+v: the signal name holds ] or a newline", text, got)
		}
		if back := got.Body + "\n[killed by signal: " + got.Signal + "]"; back != text {
			t.Errorf("ParseExitStatus(%q) = %+v, but the marker appended back gives %q", text, got, back)
		}
	case got.Body != text:
		rest, ok := strings.CutPrefix(text, got.Body+"\n[exit code: ")
		digits, closed := strings.CutSuffix(rest, "]")
		if !ok || !closed {
			t.Fatalf("ParseExitStatus(%q) = %+v: the text is not Body and an exit marker", text, got)
		}
		code, err := strconv.Atoi(digits)
		if err != nil || code != got.ExitCode || code < 0 || strings.ContainsAny(digits, "+-") {
			t.Errorf("ParseExitStatus(%q) = %+v: the marker's digits %q do not spell the code", text, got, digits)
		}
	default:
		if got.ExitCode != 0 {
			t.Errorf("ParseExitStatus(%q) = %+v: text without a marker gives exit code 0", text, got)
		}
	}
}
