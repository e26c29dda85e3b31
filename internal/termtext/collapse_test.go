package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCollapse(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no cr", "a\nb\n", "a\nb\n"},
		{"bar", "10%\r50%\r100%\ndone\n", "100%\ndone\n"},
		{"shorter redraw keeps the end", "abcdef\rXY\n", "XYcdef\n"},
		{"three widths", "abcdefgh\rabcd\rX\n", "Xbcdefgh\n"},
		{"crlf kept", "a\r\nb\r\n", "a\r\nb\r\n"},
		{"trailing cr", "50%\r100%\r", "100%\r"},
		{"multibyte", "ééé\rx\n", "xéé\n"},
		{"empty redraw", "abc\r\rX", "Xbc"},
		{"lines independent", "aaa\rb\nccc\rd", "baa\ndcc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Collapse(tt.in); got != tt.want {
				t.Errorf("Collapse(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// overlay is the obvious model of a terminal line: runes written from column 0 after each CR.
func overlay(line string) string {
	var cells []rune
	col := 0
	for _, r := range line {
		if r == '\r' {
			col = 0
			continue
		}
		if col < len(cells) {
			cells[col] = r
		} else {
			cells = append(cells, r)
		}
		col++
	}
	return string(cells)
}

func FuzzCollapse(f *testing.F) {
	for _, s := range []string{"", "a\rb", "abc\rX\ny\r\n", "ééé\rx", "\r\r\r", "a\r\r\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		got := Collapse(s)
		if strings.Count(got, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Collapse(%q) = %q: line count changed", s, got)
		}
		inLines, outLines := strings.Split(s, "\n"), strings.Split(got, "\n")
		for i := range inLines {
			if want := overlay(inLines[i]); overlay(outLines[i]) != want || strings.Count(strings.TrimRight(outLines[i], "\r"), "\r") != 0 {
				t.Fatalf("Collapse(%q) line %d = %q, want it to show %q with no redraw left", s, i, outLines[i], want)
			}
		}
	})
}

// BenchmarkCollapse collapses a 10 MB progress-bar stream (a 60-column bar redrawn with CR,
// a newline every 1000 redraws); the goal is at least 200 MB/s. BenchmarkString on the same
// size is the baseline of the pass it runs before.
func BenchmarkCollapse(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 10<<20; i++ {
		pct := i % 100
		sb.WriteString("[" + strings.Repeat("#", pct*50/100) + strings.Repeat(".", 50-pct*50/100) + "] ")
		sb.WriteString(string(rune('0'+pct/10)) + string(rune('0'+pct%10)) + "%\r")
		if i%1000 == 999 {
			sb.WriteString("\n")
		}
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		_ = Collapse(in)
	}
}
