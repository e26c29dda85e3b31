// Package report holds the finding type shared by the doc gates and prints
// findings in the project's one format: "PATH:LINE:COL: message", sorted by
// path and position, one per line.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
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
// zero and both LINE and COL when the line is zero.
func (f Finding) String() string {
	switch {
	case f.Line == 0:
		return fmt.Sprintf("%s: %s", f.Path, f.Message)
	case f.Col == 0:
		return fmt.Sprintf("%s:%d: %s", f.Path, f.Line, f.Message)
	default:
		return fmt.Sprintf("%s:%d:%d: %s", f.Path, f.Line, f.Col, f.Message)
	}
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
