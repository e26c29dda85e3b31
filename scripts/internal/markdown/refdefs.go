package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Link reference definitions are parsed by goldmark's
// parser.LinkReferenceParagraphTransformer when a paragraph closes. For a
// paragraph of n lines that opens with d definitions it takes time in d·n:
// each definition's label is read with text.(*blockReader).Value, which
// looks for the label's line by walking back from the paragraph's last
// line, and each removal of a definition's lines copies every line after
// it (goldmark v1.8.7, parser/link_ref.go and text/reader.go). A block of
// 200,000 definitions (4.8 MB) took 78 s to parse; 32 MiB of them would
// take hours.
//
// refDefs bounds that by how it calls goldmark's transformer, never by
// parsing definitions itself. A paragraph with few lines that could open a
// definition ("openers", at most refDirect) goes to goldmark's transformer
// whole, as before. Otherwise the paragraph is handed over in windows of
// refWindow lines: in a window, every definition that another definition
// follows is exactly what the whole paragraph gives, because goldmark reads
// no line past a definition before it starts the next one; so those are
// kept, and the next window starts at the last one. A window that holds
// fewer than two definitions (the run of definitions ends, or one runs
// past the window) is doubled as long as it holds at most refDirect
// openers, and what is left when it reaches the paragraph's end goes to
// goldmark's transformer whole. When it cannot grow, parsing stops there
// and the file is marked with a finding (see [File.Incomplete]) rather
// than risk a long parse or a wrong answer: that takes a definition whose
// label or title spans more than refDirect openers among more than
// refDirect of them. Every call to goldmark then costs at most refDirect
// per line it is handed, and each line is handed over a bounded number of
// times, so the whole is linear in the paragraph.
type refDefs struct{}

// The window and the bound; variables only so that tests can make them
// small.
var (
	refWindow = 64            // lines handed to goldmark per window
	refDirect = 2 * refWindow // opener lines up to which a paragraph is parsed whole
)

// incompleteKey holds, in the parser context, the offset of the first
// definition left unparsed.
var incompleteKey = parser.NewContextKey()

// Transform extracts the link reference definitions at the start of para,
// whose source reader gives, into pc, as goldmark's transformer does.
func (refDefs) Transform(para *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := para.Lines()
	n := lines.Len()
	src := reader.Source()
	if openers(src, lines, 0, n) <= refDirect {
		parser.LinkReferenceParagraphTransformer.Transform(para, reader, pc)
		return
	}
	s, w := 0, refWindow
	for n-s > w {
		defs, ok := probe(para, lines, s, s+w, reader)
		if !ok {
			break
		}
		if len(defs) < 2 {
			// The first definition may run past the window: widen it
			// while it holds few lines that could open a definition.
			if w *= 2; openers(src, lines, s, min(s+w, n)) > refDirect {
				break
			}
			continue
		}
		for _, d := range defs[:len(defs)-1] {
			para.Parent().InsertBefore(para.Parent(), para, d)
			pc.AddReference(parser.NewReference(d.Label, d.Destination, d.Title))
			s += d.Lines().Len()
		}
		w = refWindow
	}
	// para.Lines() is para's own storage, which SetLines overwrites.
	first, tooMany := lines.At(s).Start, openers(src, lines, s, n) > refDirect
	rest := text.NewSegments()
	rest.AppendAll(append([]text.Segment(nil), lines.Sliced(s, n)...))
	para.SetLines(rest)
	if tooMany {
		if _, set := pc.Get(incompleteKey).(int); !set {
			pc.Set(incompleteKey, first)
		}
		return
	}
	// Only the paragraph's first definition takes the paragraph's blank
	// line flag.
	blank := para.HasBlankPreviousLines()
	para.SetBlankPreviousLines(blank && s == 0)
	parser.LinkReferenceParagraphTransformer.Transform(para, reader, pc)
	para.SetBlankPreviousLines(blank)
}

// probe runs goldmark's transformer over lines [from, to) of para, on a
// detached copy with a context of its own, and returns the definitions it
// found, in order. ok is false unless they are the whole lines they
// consumed, from the start of the window, with the lines left over after
// them: anything else would mean the window was not cut as refDefs
// assumes.
func probe(para *ast.Paragraph, lines *text.Segments, from, to int, reader text.Reader) (defs []*ast.LinkReferenceDefinition, ok bool) {
	win := text.NewSegments()
	win.AppendAll(append([]text.Segment(nil), lines.Sliced(from, to)...))
	scratch := ast.NewParagraph()
	scratch.SetLines(win)
	scratch.SetBlankPreviousLines(from == 0 && para.HasBlankPreviousLines())
	doc := ast.NewDocument()
	doc.AppendChild(doc, scratch)
	parser.LinkReferenceParagraphTransformer.Transform(scratch, reader, parser.NewContext())
	used := 0
	for c := doc.FirstChild(); c != nil && c != scratch; c = c.NextSibling() {
		d, isDef := c.(*ast.LinkReferenceDefinition)
		if !isDef {
			return nil, false
		}
		defs = append(defs, d)
		used += d.Lines().Len()
	}
	left := 0
	if scratch.Parent() != nil {
		left = scratch.Lines().Len()
	}
	if used+left != to-from || (left > 0 && scratch.Lines().At(0) != lines.At(from+used)) {
		return nil, false
	}
	for _, d := range defs {
		doc.RemoveChild(doc, d)
	}
	return defs, true
}

// openers counts the lines [from, to) of lines whose text, after any
// spaces and tabs, starts with '[': the lines that could open a
// definition.
func openers(src []byte, lines *text.Segments, from, to int) int {
	n := 0
	for i := from; i < to; i++ {
		seg := lines.At(i)
		j := seg.Start
		for j < seg.Stop && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if j < seg.Stop && src[j] == '[' {
			n++
		}
	}
	return n
}

// newParser returns goldmark's default parser with [refDefs] in place of
// goldmark's link reference transformer, at its priority.
func newParser() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(blockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(util.Prioritized(refDefs{}, 100)),
	)
}
