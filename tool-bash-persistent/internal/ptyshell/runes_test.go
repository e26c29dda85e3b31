//go:build linux

package ptyshell

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// refOffset is runeOffset the slow way.
func refOffset(s string, n int) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

func TestRuneHelpers(t *testing.T) {
	checkLeaks(t)
	cases := []struct {
		name string
		s    string
	}{
		{"empty", ""},
		{"short ASCII", "abc"},
		{"long ASCII", strings.Repeat("0123456789", 10)},
		{"UTF-8 after eight bytes", "12345678é9"},
		{"UTF-8 inside the first word", "ab€cdefghijk"},
		{"only multi-byte", "日本語のテキスト"},
		{"invalid bytes", "abc\xff\xfe def\xe2\x82"},
		{"mixed", strings.Repeat("x", 13) + "é" + strings.Repeat("y", 17) + "😀z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, want := runeCount(c.s), utf8.RuneCountInString(c.s); got != want {
				t.Errorf("runeCount = %d, want %d", got, want)
			}
			if got, want := runeCount([]byte(c.s)), utf8.RuneCountInString(c.s); got != want {
				t.Errorf("runeCount([]byte) = %d, want %d", got, want)
			}
			for n := 0; n <= utf8.RuneCountInString(c.s)+2; n++ {
				if got, want := runeOffset(c.s, n), refOffset(c.s, n); got != want {
					t.Errorf("runeOffset(%d) = %d, want %d", n, got, want)
				}
				if got, want := runeOffset([]byte(c.s), n), refOffset(c.s, n); got != want {
					t.Errorf("runeOffset([]byte, %d) = %d, want %d", n, got, want)
				}
			}
		})
	}
}

// FuzzRuneHelpers checks the word-at-a-time rune counting against the standard library on any
// bytes.
func FuzzRuneHelpers(f *testing.F) {
	f.Add("hello, world", 5)
	f.Add("12345678\xe2\x82\xac", 9)
	f.Add("\xff\xff\xff", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if got, want := runeCount(s), utf8.RuneCountInString(s); got != want {
			t.Fatalf("runeCount(%q) = %d, want %d", s, got, want)
		}
		n = max(n, 0) % (len(s) + 2)
		if got, want := runeOffset(s, n), refOffset(s, n); got != want {
			t.Fatalf("runeOffset(%q, %d) = %d, want %d", s, n, got, want)
		}
	})
}
