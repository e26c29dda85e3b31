package markdown

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// plain is md with goldmark's own link reference transformer: what refDefs
// must reproduce.
var plain = goldmark.New(goldmark.WithExtensions(append(gfm, extension.Footnote)...))

// dump writes the tree of doc over src as text: every node's kind, block
// lines and blank-line flag, and the values that link checking reads.
func dump(doc ast.Node, src []byte) string {
	var b strings.Builder
	depth := 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			depth--
			return ast.WalkContinue, nil
		}
		fmt.Fprintf(&b, "%s%s", strings.Repeat(" ", depth), n.Kind())
		depth++
		if n.Type() == ast.TypeBlock {
			fmt.Fprintf(&b, " blank=%v", n.HasBlankPreviousLines())
			for i := 0; i < n.Lines().Len(); i++ {
				s := n.Lines().At(i)
				fmt.Fprintf(&b, " [%d:%d+%d]", s.Start, s.Stop, s.Padding)
			}
		}
		switch v := n.(type) {
		case *ast.LinkReferenceDefinition:
			fmt.Fprintf(&b, " pos=%d label=%q dest=%q title=%q", v.Pos(), v.Label, v.Destination, v.Title)
		case *ast.Link:
			fmt.Fprintf(&b, " dest=%q title=%q ref=%v", v.Destination, v.Title, v.Reference != nil)
		case *ast.Image:
			fmt.Fprintf(&b, " dest=%q title=%q", v.Destination, v.Title)
		case *ast.Text:
			fmt.Fprintf(&b, " %q", v.Segment.Value(src))
		case *east.TaskCheckBox:
			fmt.Fprintf(&b, " %v", v.IsChecked)
		}
		b.WriteByte('\n')
		return ast.WalkContinue, nil
	})
	return b.String()
}

// sameAsGoldmark parses src with refDefs and with goldmark's transformer
// and reports the first difference. A parse refDefs marks incomplete is
// not compared; complete is false for it.
func sameAsGoldmark(t *testing.T, src []byte) (complete bool) {
	t.Helper()
	f := Parse("t.md", src)
	if f.Incomplete != nil {
		return false
	}
	want := dump(plain.Parser().Parse(text.NewReader(src), parser.WithContext(parser.NewContext())), src)
	if got := dump(f.Doc, src); got != want {
		t.Fatalf("refDefs parses %q differently from goldmark:\n got:\n%s\nwant:\n%s", src, got, want)
	}
	return true
}

// small sets the window to w lines (and the bound to 2w) for the rest of
// the test, so that short inputs exercise every path.
func small(t testing.TB, w int) {
	oldW, oldD := refWindow, refDirect
	refWindow, refDirect = w, 2*w
	t.Cleanup(func() { refWindow, refDirect = oldW, oldD })
}

// defLines are the lines the fuzz target builds documents from: the shapes
// of a definition (title on the same or the next line, destination on the
// next line, a label over two lines, an unclosed title or label), and what
// ends or interrupts a run of them.
var defLines = []string{
	"[a]: a.md", "[b]: b.md \"title\"", "\"next-line title\"", "'single", "quoted'", "(paren title)",
	"[c]:", "  c.md", "[multi", "label]: m.md", "\"unclosed title", "[unclosed label",
	"text that ends the run", "[x](inline.md) text", "[a]: duplicate.md", "   [ind]: ind.md 'i'",
	"\t[tab]: tab.md", "", "> [q]: q.md", "- [l]: l.md", "[^1]: footnote", "[ref] use [b]",
	"[d]: <d e.md> (t)", "[e]: e.md \"t\" junk", "| a | b |", "|---|---|", "[f]: f.md\\", "***",
}

func docFrom(data []byte) []byte {
	var lines []string
	for _, c := range data {
		lines = append(lines, defLines[int(c)%len(defLines)])
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// TestRefDefsMatchGoldmark checks that refDefs gives goldmark's own parse
// on documents that take every path: a whole paragraph, windows, a
// definition cut by a window's end, the run ending in a window.
func TestRefDefsMatchGoldmark(t *testing.T) {
	var cases [][]byte
	// Long runs with a multi-line definition at every offset of a
	// window, then prose, with the real window.
	for off := range 70 {
		var b strings.Builder
		for i := range 300 {
			if i == off || i == off+130 {
				fmt.Fprintf(&b, "[t%d]:\n  t.md\n  \"title\n  over lines\"\n", i)
				continue
			}
			fmt.Fprintf(&b, "[r%d]: r%d.md\n", i, i)
		}
		b.WriteString("[prose](x.md) ends the run\nand goes on\n")
		cases = append(cases, []byte(b.String()))
	}
	for i, src := range cases {
		if !sameAsGoldmark(t, src) {
			t.Errorf("case %d: marked incomplete", i)
		}
	}
	small(t, 2)
	for _, seed := range refDefsSeeds {
		sameAsGoldmark(t, docFrom(seed))
	}
}

var refDefsSeeds = [][]byte{
	{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 12},
	{0, 0, 0, 0, 0, 6, 7, 0, 0, 0, 0, 0, 12},
	{0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0},
	{0, 0, 0, 0, 8, 9, 0, 0, 0, 0, 0, 0},
	{0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0},
	{0, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0},
	{0, 0, 0, 0, 0, 25, 2, 0, 0, 0, 0},
	{0, 0, 0, 0, 0, 0, 13, 13, 13, 13, 13},
	{0, 14, 0, 15, 16, 0, 22, 0, 26, 0, 0, 0, 19},
	{0, 0, 0, 0, 3, 4, 0, 0, 0, 0, 5, 0},
}

// FuzzRefDefsMatchGoldmark checks refDefs against goldmark's transformer
// on documents built from defLines, with a window of two lines.
func FuzzRefDefsMatchGoldmark(f *testing.F) {
	for _, s := range refDefsSeeds {
		f.Add(s)
	}
	small(f, 2)
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsGoldmark(t, docFrom(data))
	})
}

// longDef returns a definition at [long] whose title runs over lines
// more lines, each starting with prefix, between head and tail
// definitions.
func longDef(head, lines int, prefix string, tail int) []byte {
	var b strings.Builder
	for i := range head {
		fmt.Fprintf(&b, "[h%d]: h.md\n", i)
	}
	b.WriteString("[long]: long.md \"a title\n")
	for range lines {
		b.WriteString(prefix + " goes on\n")
	}
	b.WriteString("and ends\"\n")
	for i := range tail {
		fmt.Fprintf(&b, "[t%d]: t.md\n", i)
	}
	return []byte(b.String())
}

// TestRefDefsLongDefinition checks that a definition longer than a window
// is found by widening it, as goldmark finds it.
func TestRefDefsLongDefinition(t *testing.T) {
	for _, src := range [][]byte{
		longDef(3, 70, "title", 300),
		longDef(3, 1000, "title", 300),
		longDef(100, 100, "[still the title]", 300),
		longDef(3, 70, "title", 0),
	} {
		if !sameAsGoldmark(t, src) {
			t.Errorf("%.40q…: marked incomplete", src)
		}
	}
}

// TestRefDefsIncomplete checks that definitions that cannot be parsed in
// bounded time give a finding at the first one left, and that the
// definitions before it are still parsed.
func TestRefDefsIncomplete(t *testing.T) {
	f := Parse("t.md", longDef(3, 200, "[in the title]", 300))
	if f.Incomplete == nil {
		t.Fatal("no finding for a title over 200 lines that start with '['")
	}
	if got := f.Incomplete.String(); !strings.HasPrefix(got, "t.md:3:1: the link reference definitions from here on are too costly to parse") {
		t.Errorf("finding = %s", got)
	}
	var labels []string
	for c := f.Doc.FirstChild(); c != nil; c = c.NextSibling() {
		if d, ok := c.(*ast.LinkReferenceDefinition); ok {
			labels = append(labels, string(d.Label))
		}
	}
	if strings.Join(labels, " ") != "h0 h1" {
		t.Errorf("definitions parsed before the finding: %q, want h0 and h1", labels)
	}
}
