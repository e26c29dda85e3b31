package rescope

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/dsh-go/dsh/scripts/internal/report"
)

// Category is a kind of site, as the report groups them.
type Category string

// The categories, in report order.
const (
	CatGoMod    Category = "go.mod"
	CatGoWork   Category = "go.work"
	CatImport   Category = "Go import path"
	CatQuoted   Category = "Go quoted string"
	CatGofmt    Category = "Go formatting"
	CatFence    Category = "Markdown code"
	CatProse    Category = "Markdown prose (docs/)"
	CatChecksum Category = "go.sum (regenerate)"
)

// Categories lists every category in report order.
var Categories = []Category{CatGoMod, CatGoWork, CatImport, CatQuoted, CatGofmt, CatFence, CatProse, CatChecksum}

// Change is one site a rename changes: where it is in the file as it is
// now, what kind of site, and the path before and after. A CatGofmt change
// has no paths: the file needs gofmt after a rename. A CatChecksum change
// is never written: it names a go.sum line to regenerate.
type Change struct {
	Path     string // root-relative, '/' separators
	Line     int    // 1-based
	Col      int    // 1-based byte column
	Category Category
	Detail   string // e.g. "require" for a go.mod site
	Old, New string
}

// String formats c as "PATH:LINE:COL: category[ detail]: old -> new", as
// a finding line (see [report.Finding.String]).
func (c Change) String() string {
	what := string(c.Category)
	if c.Detail != "" {
		what += " " + c.Detail
	}
	msg := fmt.Sprintf("%s: %s -> %s", what, c.Old, c.New)
	switch c.Category {
	case CatGofmt:
		msg = what + ": needs gofmt after the rename (import order)"
	case CatChecksum:
		msg = fmt.Sprintf("%s: %s is an upstream module path; regenerate this file (go mod tidy, or go work sync)", what, c.Old)
	}
	return report.Finding{Path: c.Path, Line: c.Line, Col: c.Col, Message: msg}.String()
}

func compareChanges(a, b Change) int {
	return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col), cmp.Compare(a.Old, b.Old))
}

// edit replaces src[off:end] with repl.
type edit struct {
	off, end int
	repl     string
	change   Change
}

// splice applies edits (non-overlapping, any order) to src and returns a
// new slice; src is not modified.
func splice(src []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return cmp.Compare(a.off, b.off) })
	var out bytes.Buffer
	out.Grow(len(src) + 64*len(edits))
	last := 0
	for _, e := range edits {
		out.Write(src[last:e.off])
		out.WriteString(e.repl)
		last = e.end
	}
	out.Write(src[last:])
	return out.Bytes()
}

// lineIndex maps byte offsets of one file to lines and columns.
type lineIndex []int

func newLineIndex(src []byte) lineIndex {
	idx := lineIndex{0}
	for i, b := range src {
		if b == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (li lineIndex) pos(off int) (line, col int) {
	i := sort.Search(len(li), func(i int) bool { return li[i] > off }) - 1
	return i + 1, off - li[i] + 1
}
