package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestString checks what the one-shot tool's results lose: everything a terminal would act on
// (titles, clipboard writes, colours, hyperlinks, cursor moves, device queries), the controls,
// bare CRs; and what they keep: the text, tabs, newlines, valid UTF-8.
func TestString(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain text is kept", "hello\tworld\n", "hello\tworld\n"},
		{"window title (OSC 0)", "a\x1b]0;pwned\x07b", "ab"},
		{"clipboard write (OSC 52)", "a\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07b", "ab"},
		{"clipboard write ended by ST", "a\x1b]52;c;eA==\x1b\\b", "ab"},
		{"hyperlink (OSC 8)", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"colours (CSI)", "\x1b[1;31mred\x1b[0m", "red"},
		{"cursor moves and erases", "done\x1b[2K\x1b[1A\x1b[Hx", "donex"},
		{"device status query", "a\x1b[6nb", "ab"},
		{"DCS and APC", "\x1bPq#0\x1b\\a\x1b_apc\x07b", "ab"},
		{"NUL and other C0", "a\x00b\x07c\x08d\x7fe", "abcde"},
		{"C1 CSI (U+009B)", "a\u009b31mb", "a31mb"},
		{"bare CR (a progress bar)", "10%\r20%\r100%\n", "10%\n20%\n100%\n"},
		{"CRLF", "a\r\nb\r\n", "a\nb\n"},
		{"invalid UTF-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"escape cut off at the end", "a\x1b]52;c;eA", "a"},
		{"unicode kept", "héllo 世界 🙂\n", "héllo 世界 🙂\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := String(c.in); got != c.want {
				t.Fatalf("String(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// FuzzString checks that any input comes out as valid UTF-8 with no control a terminal acts
// on, that a second pass changes nothing, and that a Sanitizer fed the same bytes in two chunks
// gives the same text.
func FuzzString(f *testing.F) {
	for _, s := range []string{
		"plain\r\ntext", "\x1b[1;31mred\x1b[0m", "\x1b]52;c;eA==\x07", "\x1b]0;t\x1b\\", "\xe2\x82\xac\xff\xc3",
		"\x1bP\x1b\\\x1b", "a\r", "\x1b]0;" + strings.Repeat("y", 300), "\x00\x01\x02\x7f\u009b", "a\r\r\nb",
	} {
		f.Add(s, uint16(3))
	}
	f.Fuzz(func(t *testing.T, in string, cut uint16) {
		got := String(in)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		for _, r := range got {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("control %U in %q", r, got)
			}
		}
		if again := String(got); again != got {
			t.Fatalf("not idempotent: %q then %q", got, again)
		}
		i := int(cut) % (len(in) + 1)
		var b strings.Builder
		z := New(nil)
		emit := func(_ Event, text string, _ int) { b.WriteString(text) }
		z.Feed([]byte(in[:i]), emit)
		z.Feed([]byte(in[i:]), emit)
		z.Flush(emit)
		if b.String() != got {
			t.Fatalf("chunked at %d: %q, whole: %q", i, b.String(), got)
		}
	})
}

// TestPlainWord checks the word-at-a-time test against the byte table for every byte value in
// every position, next to plain and non-plain neighbours.
func TestPlainWord(t *testing.T) {
	for _, fill := range []byte{'a', '\n', 0x7e, 0x20} {
		for pos := 0; pos < 8; pos++ {
			for b := 0; b < 256; b++ {
				var w [8]byte
				for i := range w {
					w[i] = fill
				}
				w[pos] = byte(b)
				if got, want := plainWord(binaryWord(w)), plain[b]; got != want {
					t.Fatalf("word %q: plainWord %v, want %v", w[:], got, want)
				}
			}
		}
	}
}

func binaryWord(w [8]byte) uint64 {
	var x uint64
	for i := 7; i >= 0; i-- {
		x = x<<8 | uint64(w[i])
	}
	return x
}

// BenchmarkString measures String on 64 KiB of plain text (returned as it is) and of text full
// of colour escapes.
func BenchmarkString(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"plain", "the quick brown fox jumps over the lazy dog 0123456789\n"},
		{"colour", "\x1b[1;31mred\x1b[0m text \x1b[32mgreen\x1b[0m and é\r\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := strings.Repeat(c.line, 65536/len(c.line))
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				_ = String(s)
			}
		})
	}
}
