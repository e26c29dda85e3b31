package termtext

import (
	"strings"
	"unicode/utf8"
)

// Collapse returns s with carriage-return redraws resolved to what a person would see last on
// each line: within a line, a CR not followed by LF returns to the line's start and what follows
// overwrites what was there, character by character (a shorter redraw leaves the end of a longer
// one visible, as on a terminal). CR LF is a line end and is kept. A progress bar or a spinner
// drawn a thousand times on one line thus costs one line. Run it on raw terminal output before
// [String], which turns the remaining CRs into line ends. Lines are resolved within s alone: a
// line split between two calls is resolved in two parts.
func Collapse(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) / 2)
	for len(s) > 0 {
		line, rest, found := strings.Cut(s, "\n")
		b.WriteString(collapseLine(line))
		if found {
			b.WriteByte('\n')
		}
		s = rest
	}
	return b.String()
}

// collapseLine resolves the redraws of one line without its LF. It works backwards from the last
// redraw: the last one shows whole, and an earlier one shows only where it was longer than every
// later one, so each segment is read once.
func collapseLine(line string) string {
	// A CR at the very end (CR LF, or a bar ended by CR) redraws nothing: keep it out of the
	// segments and put it back, so String still sees the CR LF.
	trail := ""
	for len(line) > 0 && line[len(line)-1] == '\r' {
		line, trail = line[:len(line)-1], trail+"\r"
	}
	i := strings.LastIndexByte(line, '\r')
	if i < 0 {
		return line + trail
	}
	shown := line[i+1:]
	width := utf8.RuneCountInString(shown)
	var tails []string // visible ends of earlier segments, latest first
	for rest := line[:i]; ; {
		j := strings.LastIndexByte(rest, '\r')
		seg := rest[j+1:]
		if len(seg) > width { // a segment of no more bytes than width runes cannot be longer
			if n := utf8.RuneCountInString(seg); n > width {
				tails = append(tails, seg[runeOffset(seg, width):])
				width = n
			}
		}
		if j < 0 {
			break
		}
		rest = rest[:j]
	}
	if len(tails) == 0 {
		return shown + trail
	}
	// Each tail starts where every later segment ended and runs to its own end, where the next
	// (earlier, longer) tail starts.
	return shown + strings.Join(tails, "") + trail
}

// runeOffset returns the byte offset of the n-th rune of s.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}
