// Package report holds the finding type shared by the doc gates and prints
// findings in the project's one format: "PATH:LINE:COL: message", sorted by
// path and position, one per line.
//
// A finding is always exactly one line, and its PATH cannot be confused
// with a position or another finding, whatever the file is called: a path
// that holds a ':', a character that does not print (a newline, a tab, any
// other control or format character, invalid UTF-8), a leading or trailing
// space, or a leading '"' is written as a Go string literal (see
// [QuotePath]), and the message has its non-printing characters escaped the
// same way. The JSON form needs neither.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Finding is one problem a gate found in a file. Path is relative to the
// repository root and uses '/' separators. Line and Col are 1-based; a zero
// Col means the finding names a whole line and no column is printed, and a
// zero Line means it names the whole file.
type Finding struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`

	// Destination is the link destination as written, for link findings.
	Destination string `json:"destination,omitempty"`
	// Reason classifies a link finding: "target", "anchor", "root", "case",
	// "empty" or "file" (a problem with the file itself).
	Reason string `json:"reason,omitempty"`
	// Suggestion is the nearest existing destination, when one is close.
	Suggestion string `json:"suggestion,omitempty"`
}

// String formats f as "PATH:LINE:COL: message", leaving out COL when it is
// zero and both LINE and COL when the line is zero. PATH is quoted as
// [QuotePath] says, and the message is cleaned by [OneLine], so the result
// is always one line.
func (f Finding) String() string {
	return Location(f.Path, f.Line, f.Col) + ": " + OneLine(f.Message)
}

// Location formats path, line and col as "PATH:LINE:COL", leaving out col
// when it is zero and both when line is zero. path is quoted as
// [QuotePath] says. Every gate that prints a position builds it here.
func Location(path string, line, col int) string {
	path = QuotePath(path)
	switch {
	case line == 0:
		return path
	case col == 0:
		return fmt.Sprintf("%s:%d", path, line)
	default:
		return fmt.Sprintf("%s:%d:%d", path, line, col)
	}
}

// QuotePath returns path as it goes at the start of a finding line: as it
// is, or as a Go string literal (strconv.Quote) when it could be misread.
// That is when path is empty or holds a ':' (which could forge a
// ":LINE:COL" or end the path early), a rune that unicode.IsPrint rejects
// (a newline, a tab, any other control or format character such as U+2028
// or U+202E), an invalid UTF-8 byte, a leading or trailing space, or a
// leading '"' (which would make a plain path look quoted). strconv.Unquote
// gives the path back.
func QuotePath(path string) string {
	if needsQuote(path) {
		return strconv.Quote(path)
	}
	return path
}

func needsQuote(path string) bool {
	return path == "" || path[0] == '"' || path[0] == ' ' || path[len(path)-1] == ' ' ||
		strings.ContainsRune(path, ':') || !utf8.ValidString(path) || strings.IndexFunc(path, notPrint) >= 0
}

func notPrint(r rune) bool { return !unicode.IsPrint(r) }

// OneLine returns msg with every rune that unicode.IsPrint rejects, and
// every invalid UTF-8 byte, written as its Go escape ("\n", "\t",
// "\u2028", "\x00"), so that a message quoting a file name or a line of a
// file stays on one line and cannot forge another finding.
func OneLine(msg string) string {
	if utf8.ValidString(msg) && strings.IndexFunc(msg, notPrint) < 0 {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		r, n := utf8.DecodeRuneInString(msg[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, msg[i])
		case !unicode.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(msg[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Compare orders findings a and b by path, line, column, then message, so
// that sorted output is the same on every run.
func Compare(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(a.Path, b.Path),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Col, b.Col),
		cmp.Compare(a.Message, b.Message),
	)
}

// Sort sorts findings in place in the order of Compare.
func Sort(findings []Finding) { slices.SortFunc(findings, Compare) }

// Print writes findings to w, one per line, in the order given. It returns
// the first write error.
func Print(w io.Writer, findings []Finding) error {
	for _, f := range findings {
		if _, err := fmt.Fprintln(w, f.String()); err != nil {
			return err
		}
	}
	return nil
}

// PrintJSON writes findings to w as one indented JSON array ("[]" when
// there are none), followed by a newline. It returns the first write error.
func PrintJSON(w io.Writer, findings []Finding) error {
	if findings == nil {
		findings = []Finding{}
	}
	b, err := json.MarshalIndent(findings, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
