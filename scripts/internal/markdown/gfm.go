package markdown

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// gfm is GitHub Flavored Markdown as goldmark's extension.GFM gives it
// (autolink literals, tables, strikethrough, task lists), except that a
// task list marker follows GitHub's rule; see [taskCheckBox].
var gfm = []goldmark.Extender{extension.Linkify, extension.Table, extension.Strikethrough, taskList{}}

// taskList is goldmark's task list extension with [taskCheckBox] as its
// marker parser.
type taskList struct{}

// Extend adds the task list marker parser, ahead of the link parser as
// goldmark's own extension does, and the renderer of its checkbox to m.
func (taskList) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(
		util.Prioritized(taskCheckBox{extension.NewTaskCheckBoxParser()}, 0),
	))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(
		util.Prioritized(extension.NewTaskCheckBoxHTMLRenderer(), 500),
	))
}

// taskCheckBox is goldmark's task list marker parser held to GitHub's rule:
// "[ ]" or "[x]" at the start of a list item opens a task only when
// whitespace or the end of the line follows it. goldmark alone also takes
// "[x]" followed by anything else, so "- [x](a.md)", which GitHub renders
// as a link, would lose its link to a checkbox and escape the link gate.
type taskCheckBox struct{ parser.InlineParser }

// Parse returns nil, leaving the bracket to the link parser, when the
// three-byte marker in block is followed by something other than
// whitespace; otherwise it defers to goldmark's parser, with parent and pc.
func (p taskCheckBox) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if len(line) > 3 && !util.IsSpace(line[3]) {
		return nil
	}
	return p.InlineParser.Parse(parent, block, pc)
}
