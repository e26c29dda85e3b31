package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxDepth is how deeply list items and block quotes may nest. On
// every line goldmark asks each open container whether it goes on, and a
// list item measures the line's indentation to answer, so a file's cost
// grows with the number of lines times the depth times the indentation: 1
// MB of nested list items took seconds, one line of 500,000 list markers
// did not finish in minutes, and 24 MB of nested quotes took minutes and
// gigabytes. Past MaxDepth no container opens: the file is marked with a
// finding at the first one refused (see [File.Incomplete]) and the gates
// do not check it, since what goldmark made of it is not what GitHub
// shows. With the depth bounded, the work per line is bounded by the depth
// times the line, so a file's parse is linear in its size. GitHub's own
// renderer stops nesting far deeper; no real document comes near 32.
var MaxDepth = 32

// deepKey holds, in the parser context, the offset of the first container
// refused for being too deep.
var deepKey = parser.NewContextKey()

// blockParsers are goldmark's default block parsers with the containers
// (lists, list items, block quotes) bounded by [MaxDepth]. The priorities
// are goldmark's (parser.DefaultBlockParsers).
func blockParsers() []util.PrioritizedValue {
	return []util.PrioritizedValue{
		util.Prioritized(parser.NewSetextHeadingParser(), 100),
		util.Prioritized(parser.NewThematicBreakParser(), 200),
		util.Prioritized(bounded{parser.NewListParser()}, 300),
		util.Prioritized(bounded{parser.NewListItemParser()}, 400),
		util.Prioritized(parser.NewCodeBlockParser(), 500),
		util.Prioritized(parser.NewATXHeadingParser(), 600),
		util.Prioritized(parser.NewFencedCodeBlockParser(), 700),
		util.Prioritized(bounded{parser.NewBlockquoteParser()}, 800),
		util.Prioritized(parser.NewHTMLBlockParser(), 900),
		util.Prioritized(parser.NewParagraphParser(), 1000),
	}
}

// bounded is a container's block parser that opens nothing at a depth of
// MaxDepth containers or more.
type bounded struct{ parser.BlockParser }

// Open opens the container under parent, reading from reader, unless
// parent already lies MaxDepth containers deep; then it records the
// offset in pc and declines, so that the line is read as something else.
func (b bounded) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if containerDepth(parent) >= MaxDepth {
		if pc.Get(deepKey) == nil {
			_, seg := reader.PeekLine()
			pc.Set(deepKey, seg.Start)
		}
		return nil, parser.NoChildren
	}
	return b.BlockParser.Open(parent, reader, pc)
}

// containerDepth counts the list items and block quotes at and
// above n. It stops counting at MaxDepth, so it costs at most that.
func containerDepth(n ast.Node) int {
	d := 0
	for ; n != nil && d < MaxDepth; n = n.Parent() {
		switch n.Kind() {
		case ast.KindListItem, ast.KindBlockquote:
			d++
		}
	}
	return d
}
