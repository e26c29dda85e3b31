//go:build linux

package ptyshell

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-go/dsh/internal/termtext"
)

const (
	testToken = "tok123"
	testPid   = 42
	testID    = ";aid=" + testToken + ";pid=42" // what the shell's markers end with
)

// sanitizeChunks feeds chunks to a fresh sanitizer, flushes it, and returns the stream as
// strings: text runs merged, prompts as "<P:status>", continuation prompts as "<C>".
func sanitizeChunks(chunks ...string) string {
	z := termtext.New(newMarkers(testToken, testPid).match)
	var b strings.Builder
	emit := func(kind eventKind, text string, status int) {
		switch kind {
		case evText:
			b.WriteString(text)
		case evPrompt:
			fmt.Fprintf(&b, "<P:%d>", status)
		case evCont:
			b.WriteString("<C>")
		case evShown:
			b.WriteString("<A>")
		case evSync:
			fmt.Fprintf(&b, "<S:%d>", status)
		}
	}
	for _, c := range chunks {
		z.Feed([]byte(c), emit)
	}
	z.Flush(emit)
	return b.String()
}

func TestSanitizer(t *testing.T) {
	checkLeaks(t)
	prompt := "\x1b]133;D;0" + testID + "\x07dsh> "
	cases := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"plain text", []string{"hello\tworld\n"}, "hello\tworld\n"},
		{"CRLF and lone CR", []string{"a\r\nb\rc\n"}, "a\nb\nc\n"},
		{"CRLF split across chunks", []string{"a\r", "\nb"}, "a\nb"},
		{"CR at the end of the stream", []string{"a\r"}, "a\n"},
		{"CRLF through a terminal that adds a CR", []string{"a\r\r\nb\r\r\n\r\r\nc"}, "a\nb\n\nc"},
		{"CR run split across chunks", []string{"a\r", "\r", "\nb"}, "a\nb"},
		{"CR run without LF", []string{"10%\r\r20%\r"}, "10%\n20%\n"},
		{"CR then escape", []string{"a\r\x1b[Kb"}, "a\nb"},
		{"CSI removed", []string{"\x1b[1;31mred\x1b[0m"}, "red"},
		{"CSI split across chunks", []string{"x\x1b[3", "8;5;1", "mred"}, "xred"},
		{"private CSI", []string{"\x1b[?2004hon\x1b[?2004l"}, "on"},
		{"prompt marker", []string{"out\n" + prompt}, "out\n<P:0>dsh> "},
		{"prompt marker split everywhere", strings.Split("out\n"+prompt, ""), "out\n<P:0>dsh> "},
		{"prompt status", []string{"\x1b]133;D;127" + testID + "\x07"}, "<P:127>"},
		{"prompt marker with ST", []string{"\x1b]133;D;3" + testID + "\x1b\\"}, "<P:3>"},
		{"prompt marker with ST split", []string{"\x1b]133;D;3" + testID + "\x1b", "\\x"}, "<P:3>x"},
		{"foreign prompt marker dropped", []string{"\x1b]133;D;0\x07a\x1b]133;D;0;aid=other\x07b"}, "ab"},
		{"prompt marker without a status", []string{"\x1b]133;D" + testID + "\x07x"}, "x"}, // prefix and suffix overlap
		{"bad status dropped", []string{"\x1b]133;D;256" + testID + "\x07\x1b]133;D;x" + testID + "\x07"}, ""},
		{"continuation marker", []string{"\x1b]133;dsh-ps2" + testID + "\x07> "}, "<C>> "},
		{"primary prompt shown", []string{"\x1b]133;A" + testID + "\x07dsh> "}, "<A>dsh> "},
		{"another process's markers dropped", []string{"\x1b]133;D;0;aid=" + testToken + ";pid=43\x07a\x1b]133;A;aid=" + testToken + ";pid=4\x07b\x1b]133;dsh-ps2;aid=" + testToken + ";pid=420\x07c"}, "abc"},
		{"barrier", []string{"a\x18\x1b]dsh-sync;" + testToken + ";12\x07b"}, "a<S:12>b"},
		{"barrier ends an unfinished escape", []string{"\x1b]0;title", "\x18\x1b]dsh-sync;" + testToken + ";3\x07x"}, "<S:3>x"},
		{"foreign barrier dropped", []string{"\x1b]dsh-sync;other;1\x07\x1b]dsh-sync;" + testToken + ";-1\x07"}, ""},
		{"other OSC dropped", []string{"\x1b]0;title\x07a\x1b]8;;http://x\x1b\\b"}, "ab"},
		{"DCS and APC dropped", []string{"\x1bPq#0;2;0;0;0\x1b\\a\x1b_apc\x07b"}, "ab"},
		{"two-byte escapes", []string{"\x1b7a\x1b8b\x1bcc\x1b=d"}, "abcd"},
		{"charset designation", []string{"\x1b(Ba\x1b)0b"}, "ab"},
		{"trailing ESC carried", []string{"a\x1b", "[31mb"}, "ab"},
		{"trailing ESC dropped at flush", []string{"a\x1b"}, "a"},
		{"CAN cancels an escape", []string{"\x1b[12\x18x"}, "x"},
		{"ESC inside CSI starts a new escape", []string{"\x1b[1\x1b[2mx"}, "x"},
		{"malformed CSI", []string{"\x1b[1\nx"}, "x"},
		{"ESC inside OSC restarts", []string{"\x1b]0;t\x1b[31mx"}, "x"},
		{"bell and controls", []string{"a\x07b\x00c\x08d\x7fe\x01f"}, "abcdef"},
		{"invalid UTF-8", []string{"a\xffb\xc3"}, "a\uFFFDb\uFFFD"},
		{"UTF-8 split across chunks", []string{"\xe2", "\x82", "\xac!"}, "€!"},
		{"UTF-8 split then invalid", []string{"\xe2\x82", "x"}, "\uFFFD\uFFFDx"},
		{"C1 controls dropped", []string{"a\u009bb\u0085c"}, "abc"},
		{"over-long OSC discarded through its end", []string{"a\x1b]0;" + strings.Repeat("x", 10_000) + "\x07b"}, "ab"},
		{"over-long OSC split ST", []string{"a\x1b]0;" + strings.Repeat("x", 500) + "\x1b", "\\b"}, "ab"},
		{"over-long look-alike marker", []string{"\x1b]133;D;0" + testID + strings.Repeat("x", 300) + "\x07"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sanitizeChunks(c.chunks...); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// FuzzSanitizer checks that any byte stream gives clean text, and the same text and events
// whatever the chunking.
func FuzzSanitizer(f *testing.F) {
	for _, s := range []string{
		"plain\r\ntext", "\x1b[1;31mred\x1b[0m", "\x1b]133;D;0" + testID + "\x07dsh> ",
		"\x1b]133;dsh-ps2" + testID + "\x1b\\", "\xe2\x82\xac\xff\xc3", "\x1bP\x1b\\\x1b", "a\r",
		"\x1b]0;" + strings.Repeat("y", 300), "\x00\x01\x02\x7f\u009b",
	} {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		whole := sanitizeChunks(string(data))
		i := int(cut) % (len(data) + 1)
		split := sanitizeChunks(string(data[:i]), string(data[i:]))
		if whole != split {
			t.Fatalf("chunking at %d changes the result: %q vs %q", i, whole, split)
		}
		if !utf8.ValidString(whole) {
			t.Fatalf("invalid UTF-8: %q", whole)
		}
		for _, r := range whole {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("control %U in %q", r, whole)
			}
		}
	})
}

// BenchmarkSanitize measures the sanitizer alone on 256 KiB batches (the reader's size): plain
// lines, and text full of colour escapes.
func BenchmarkSanitize(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"plain", "the quick brown fox jumps over the lazy dog 0123456789\n"},
		{"colour", "\x1b[1;31mred\x1b[0m text \x1b[32mgreen\x1b[0m and é\r\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			data := []byte(strings.Repeat(c.line, readBatch/len(c.line)))
			z := termtext.New(newMarkers(testToken, testPid).match)
			emit := func(eventKind, string, int) {}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				z.Feed(data, emit)
			}
		})
	}
}
