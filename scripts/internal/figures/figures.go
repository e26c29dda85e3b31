// Package figures implements verify-md-figures: a measured figure quoted
// in the Markdown (a time per operation, a throughput, a speed-up, or a
// duration said to be measured) must name the command that produced it,
// so that a reader can run it again and a stale figure can be caught.
//
// The rule, precisely. A figure is a number or range ("3", "0.4–0.6",
// "6.7 to 7.1") followed by a measured unit:
//
//   - a rate or a cost per operation, any word over /op, /s or /sec
//     ("12 ns/op", "0 allocs/op", "130 MB/s", "2,000 files/s");
//   - a speed-up: "3×" (but not a dimension such as "40×160"), "3x faster",
//     "3 times slower";
//   - a duration (ns, µs, us, ms, s, sec, seconds, min, minutes) only when
//     the block says it was measured: a word such as took, measured, costs,
//     benchmark, wall, warm, cold, latency, median, faster, about, roughly
//     or "~" in the same paragraph, list item or table row (a table row also
//     reads its header row). A bare "default 120 s" is a contract value, not
//     a measurement; so is "takes the default, 2 s" (take is left out).
//
// Figures in code spans and code blocks are not read. A figure is backed
// when a command appears in a code span or a fenced code block of:
//
//  1. the paragraph, list item or table row that holds it;
//  2. the nearest paragraph or code block before it in the same section:
//     tables and other blocks in between are passed over, a heading ends
//     the search;
//  3. the code block right after it.
//
// A command is a line of code whose first word (past "$ " and VAR=value
// assignments) is a program run from a shell to measure something (go,
// time, hyperfine, bash, sh, make, npm, npx, node, python3, cargo, perf,
// env), a path ("./test", "/usr/bin/time") or a script ("bench.sh"), with
// at least one argument unless it is a path.
package figures

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

const (
	number  = `\d+(?:[.,]\d+)*`
	span    = number + `(?:\s*(?:–|-|to)\s*` + number + `)?`
	space   = `[ \x{00A0}\x{2009}\x{202F}]?`
	leftEnd = `(?:^|[^\w.,])`
)

var (
	// always are figures whatever the text around them says.
	always = regexp.MustCompile(leftEnd + `(` + span + space + `(?:[A-Za-zµμ]+/(?:op|s|sec)\b|×|x\s+(?:faster|slower)\b)|` + span + `\s+times\s+(?:faster|slower)\b)`)
	// durations are figures when the block says they were measured.
	durations = regexp.MustCompile(leftEnd + `(` + span + space + `(?:ns|µs|μs|us|ms|s|sec|secs|seconds?|min|minutes?)\b)`)
	measured  = regexp.MustCompile(`(?i)\b(?:took|measured|measures?|measuring|measurements?|costs?|costing|benchmark\w*|wall|warm|cold|latency|throughput|medians?|average|mean|p50|p9\d|faster|slower|speed-?up|about|around|roughly)\b|~|≈`)
)

// Figure is a measured figure in a block's text.
type Figure struct {
	Text string
	Off  int // byte offset in the file
}

// unit is a paragraph, list item text or table row: the text a figure is
// read from, with the source offset of every byte, and its code spans.
type unit struct {
	text    []byte
	offs    []int
	code    []string
	context string // extra text that may say "measured" (a table's header row)
}

// Figures returns the measured figures in u, by the rule in the package
// comment.
func (u *unit) figures() []Figure {
	var out []Figure
	add := func(re *regexp.Regexp) {
		for _, m := range re.FindAllSubmatchIndex(u.text, -1) {
			text := string(u.text[m[2]:m[3]])
			rest := bytes.TrimLeft(u.text[m[3]:], " ")
			if strings.HasSuffix(text, "×") && len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
				continue // a dimension such as 40×160
			}
			if re == durations && m[3] < len(u.text) && u.text[m[3]] == '/' {
				continue // "3 ns/op" is a figure already
			}
			out = append(out, Figure{Text: text, Off: u.offs[m[2]]})
		}
	}
	add(always)
	if measured.MatchString(string(u.text) + " " + strings.Join(u.code, " ") + " " + u.context) {
		add(durations)
	}
	return out
}

// Check returns a finding for every measured figure of f that names no
// command, and the number of figures it read.
func Check(f *markdown.File) ([]report.Finding, int) {
	leaves := flatten(f.Doc)
	var out []report.Finding
	n := 0
	for i, l := range leaves {
		for _, u := range units(f, l) {
			figs := u.figures()
			n += len(figs)
			if len(figs) == 0 || backed(f, u, leaves, i) {
				continue
			}
			for _, fig := range figs {
				out = append(out, f.Finding(fig.Off, fmt.Sprintf("figure %q names no command that measured it: put the command in a code span in the same paragraph, item or row, or in the paragraph or code block just before it", fig.Text)))
			}
		}
	}
	return out, n
}

// backed reports whether a figure of u, in leaves[i], names its command.
func backed(f *markdown.File, u *unit, leaves []ast.Node, i int) bool {
	if hasCommand(u.code) {
		return true
	}
	for j := i - 1; j >= 0; j-- {
		switch leaves[j].(type) {
		case *ast.Heading:
			j = -1
		case *ast.Paragraph, *ast.TextBlock, *ast.FencedCodeBlock, *ast.CodeBlock:
			if hasCommand(commands(f, leaves[j])) {
				return true
			}
			j = -1
		}
	}
	if i+1 < len(leaves) {
		switch leaves[i+1].(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			return hasCommand(commands(f, leaves[i+1]))
		}
	}
	return false
}

// flatten lists the leaf blocks of doc in document order: paragraphs,
// text blocks, code blocks, headings, tables, HTML blocks and breaks.
func flatten(doc ast.Node) []ast.Node {
	var out []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n.Type() != ast.TypeBlock {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.Document, *ast.List, *ast.ListItem, *ast.Blockquote:
			return ast.WalkContinue, nil
		}
		if n.Kind().String() == "Footnote" || n.Kind().String() == "FootnoteList" {
			return ast.WalkContinue, nil
		}
		out = append(out, n)
		return ast.WalkSkipChildren, nil
	})
	return out
}

// units returns the units a leaf block is read as: a paragraph is one, a
// table is one per row (each reading its header row too), anything else
// none.
func units(f *markdown.File, leaf ast.Node) []*unit {
	switch leaf.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return []*unit{inline(f, leaf)}
	case *east.Table:
		var rows []*unit
		header := ""
		for row := leaf.FirstChild(); row != nil; row = row.NextSibling() {
			u := &unit{}
			for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
				c := inline(f, cell)
				u.text = append(append(u.text, c.text...), " | "...)
				u.offs = append(append(u.offs, c.offs...), c.end(), c.end(), c.end())
				u.code = append(u.code, c.code...)
			}
			if _, ok := row.(*east.TableHeader); ok {
				header = string(u.text) + " " + strings.Join(u.code, " ")
			}
			u.context = header
			rows = append(rows, u)
		}
		return rows
	}
	return nil
}

// end is the offset just past u's text, for separators added after it.
func (u *unit) end() int {
	if len(u.offs) == 0 {
		return 0
	}
	return u.offs[len(u.offs)-1] + 1
}

// inline reads the inline text of n: text (link text included) with the
// source offset of each byte, and code spans apart. A code span or a
// line break reads as a space, so words on either side stay apart.
func inline(f *markdown.File, n ast.Node) *unit {
	u := &unit{}
	sep := func(off int) { u.text = append(u.text, ' '); u.offs = append(u.offs, off) }
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.CodeSpan:
			var b strings.Builder
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if tx, ok := t.(*ast.Text); ok {
					b.Write(tx.Segment.Value(f.Src))
				}
			}
			u.code = append(u.code, b.String())
			sep(u.end())
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML, *ast.AutoLink:
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			seg := c.Segment
			u.text = append(u.text, f.Src[seg.Start:seg.Stop]...)
			for off := seg.Start; off < seg.Stop; off++ {
				u.offs = append(u.offs, off)
			}
			if c.SoftLineBreak() || c.HardLineBreak() {
				sep(seg.Stop)
			}
		}
		return ast.WalkContinue, nil
	})
	return u
}

// commands returns the code of a paragraph's code spans, or the lines of
// a code block.
func commands(f *markdown.File, leaf ast.Node) []string {
	switch leaf.(type) {
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		var out []string
		lines := leaf.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			out = append(out, string(seg.Value(f.Src)))
		}
		return out
	}
	return inline(f, leaf).code
}

// shells are the programs a command that measures something starts with.
var shells = map[string]bool{"go": true, "time": true, "hyperfine": true, "bash": true, "sh": true, "make": true, "npm": true, "npx": true, "node": true, "python3": true, "python": true, "cargo": true, "perf": true, "env": true}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// hasCommand reports whether any of code is a command line.
func hasCommand(code []string) bool {
	for _, c := range code {
		if IsCommand(c) {
			return true
		}
	}
	return false
}

// IsCommand reports whether the line of code s is a command, by the rule
// in the package comment.
func IsCommand(s string) bool {
	words := strings.Fields(strings.TrimPrefix(strings.TrimSpace(s), "$ "))
	for len(words) > 0 && assignment.MatchString(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		return false
	}
	first := words[0]
	switch {
	case strings.HasPrefix(first, "./") || strings.HasPrefix(first, "/"):
		return true
	case len(words) < 2:
		return false
	}
	return shells[first] || strings.HasSuffix(first, ".sh")
}
