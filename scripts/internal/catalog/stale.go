package catalog

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/report"
)

// chunk is a part of a catalogue page: the header, a section intro, or
// one entry (from its anchor to the next).
type chunk struct {
	name string // "service bash/executor", "event tools/execute", `section "## Events"`, "header"
	text string
	line int // 1-based first line
}

var anchorLine = regexp.MustCompile(`^<a id="((?:service|event)-[^"]*)"></a>$`)

// chunks splits a page at entry anchors and at section headings (level
// two and below) that do not directly follow an anchor.
func chunks(page string) []chunk {
	lines := strings.SplitAfter(page, "\n")
	out := []chunk{{name: "header", line: 1}}
	onlyAnchor := false
	for i, l := range lines {
		t := strings.TrimRight(l, "\n")
		cur := &out[len(out)-1]
		switch {
		case anchorLine.MatchString(t):
			out = append(out, chunk{name: anchorName(anchorLine.FindStringSubmatch(t)[1]), line: i + 1})
			onlyAnchor = true
		case strings.HasPrefix(t, "##") && !onlyAnchor && cur.text != "":
			out = append(out, chunk{name: fmt.Sprintf("section %q", t), line: i + 1})
		case t != "":
			onlyAnchor = false
		}
		out[len(out)-1].text += l
	}
	return out
}

// anchorName turns an anchor back into what it names.
func anchorName(id string) string {
	kind, rest, _ := strings.Cut(id, "-")
	return kind + " " + strings.ReplaceAll(rest, "--", "/")
}

// Stale compares the page on disk, old, with the page the code gives,
// fresh, both for the root-relative path rel, and returns a finding for
// each part that differs: an entry that changed, one the page lacks, one
// the code no longer has. Each finding is on the line where the part
// starts in old (or where it would go).
func Stale(rel string, old, fresh []byte) []report.Finding {
	oc, nc := chunks(string(old)), chunks(string(fresh))
	oldBy := map[string]chunk{}
	for _, c := range oc {
		oldBy[c.name] = c
	}
	newBy := map[string]bool{}
	var out []report.Finding
	prevLine := 1
	for _, c := range nc {
		newBy[c.name] = true
		o, ok := oldBy[c.name]
		switch {
		case !ok:
			out = append(out, report.Finding{Path: rel, Line: prevLine, Message: fmt.Sprintf("stale: %s is missing from the page", c.name)})
		case o.text != c.text:
			out = append(out, report.Finding{Path: rel, Line: o.line, Message: fmt.Sprintf("stale: %s differs from the code", c.name)})
		}
		if ok {
			prevLine = o.line
		}
	}
	for _, c := range oc {
		if !newBy[c.name] {
			out = append(out, report.Finding{Path: rel, Line: c.line, Message: fmt.Sprintf("stale: %s is on the page but not in the code", c.name)})
		}
	}
	if len(out) == 0 {
		// Same parts, different bytes: only their order can differ.
		out = append(out, report.Finding{Path: rel, Line: firstDiff(string(old), string(fresh)), Message: "stale: the page differs from the code"})
	}
	report.Sort(out)
	return out
}

// firstDiff returns the 1-based line of the first difference of a and b.
func firstDiff(a, b string) int {
	line := 1
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '\n' {
			line++
		}
	}
	return line
}
