//go:build linux

package ptyshell

import (
	"os/exec"
	"strings"
	"testing"
)

// TestQuoteRoundTrip has real bash decode quoted strings back to the exact bytes.
func TestQuoteRoundTrip(t *testing.T) {
	checkLeaks(t)
	inputs := []string{
		"", "plain", "it's", `back\slash`, "tab\there", "ctrl-c\x03 ctrl-u\x15 ctrl-w\x17 ctrl-v\x16 esc\x1b del\x7f",
		"line1\nline2\r\n", "bang! !! !$", "utf-8: é — 日本", "high bytes \xff\xfe\x80", "$'nested'", `"double" $HOME ` + "`cmd`",
		"hex-looking \\x41 after", "\x01\x02\x1f",
	}
	for _, in := range inputs {
		var b strings.Builder
		quoteANSIC(&b, in)
		q := b.String()
		for i := 0; i < len(q); i++ {
			if q[i] < 0x20 || q[i] >= 0x7f || q[i] == '!' {
				t.Fatalf("quoted %q holds byte %#x", in, q[i])
			}
		}
		out, err := exec.Command("bash", "--noprofile", "--norc", "-c", "printf '%s' "+q).Output()
		if err != nil {
			t.Fatalf("bash on %q: %v", q, err)
		}
		if string(out) != in {
			t.Fatalf("round trip of %q via %q gave %q", in, q, out)
		}
	}
}

func TestWrapLineIsOnePrintableLine(t *testing.T) {
	checkLeaks(t)
	line := wrapLine(testNonce, "echo 'a\tb'\necho \x03")
	for i := 0; i < len(line); i++ {
		if line[i] < 0x20 || line[i] >= 0x7f {
			t.Fatalf("byte %#x at %d in %q", line[i], i, line)
		}
	}
	if !strings.Contains(line, startMarker(testNonce)) || !strings.Contains(line, endMarker(testNonce)) {
		t.Fatalf("markers missing: %q", line)
	}
	out, err := exec.Command("bash", "--noprofile", "--norc", "-c", line).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := startMarker(testNonce) + "\na\tb\n\x03\n" + endMarker(testNonce) + "0\n"
	if string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

// FuzzQuote checks that every string quotes to printable ASCII that bash would read as one
// $'…' word: no bare quote ends it early and no control byte is typed.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a'b", `\`, "\t\x03\n", "é\xff", "!", `\'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		quoteANSIC(&b, s)
		q := b.String()
		if !strings.HasPrefix(q, "$'") || !strings.HasSuffix(q, "'") {
			t.Fatalf("not a $'…' word: %q", q)
		}
		body := q[2 : len(q)-1]
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c < 0x20 || c >= 0x7f || c == '!' {
				t.Fatalf("byte %#x typed raw in %q", c, q)
			}
			if c == '\\' {
				i++ // the escaped character
				continue
			}
			if c == '\'' {
				t.Fatalf("unescaped quote at %d in %q", i, q)
			}
		}
	})
}
