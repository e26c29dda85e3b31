// Package mdgo implements verify-md-go: every fenced Go block of the
// Markdown that is a complete program, or a complete file of any package
// (its first token is the package clause), must compile against the
// workspace. A block without a package clause is a fragment and is not
// compiled; to show code that must not compile, fence it as text.
package mdgo

import (
	"bytes"
	"go/scanner"
	"go/token"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/yuin/goldmark/ast"
)

// Block is one fenced Go block of a Markdown file.
type Block struct {
	Path string // the Markdown file, root-relative
	Line int    // the line of the opening fence
	Code []byte // the block's text as Go sees it
	// starts holds, for each line of Code, the file line and byte column
	// it starts at and how many padding bytes Code adds before it (a tab
	// expanded by the container's indentation).
	starts []lineStart
}

type lineStart struct{ line, col, pad int }

// Program reports whether b is a complete Go file: its first token, past
// comments, is the package clause.
func (b *Block) Program() bool {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(b.Code)), b.Code, nil, 0)
	_, tok, _ := s.Scan()
	return tok == token.PACKAGE
}

// Position returns the file line and column of the 1-based line and
// column of b's code, as the compiler reports them. A position outside
// the code is the opening fence.
func (b *Block) Position(line, col int) (int, int) {
	if line < 1 || line > len(b.starts) {
		return b.Line, 1
	}
	st := b.starts[line-1]
	return st.line, st.col + max(0, col-1-st.pad)
}

// Extract returns the fenced code blocks of f whose language (the first
// word of the info string) is "go", in file order.
func Extract(f *markdown.File) []*Block {
	var out []*Block
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fc, ok := n.(*ast.FencedCodeBlock)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		if lang := string(fc.Language(f.Src)); lang != "go" {
			return ast.WalkSkipChildren, nil
		}
		out = append(out, block(f, fc))
		return ast.WalkSkipChildren, nil
	})
	return out
}

func block(f *markdown.File, fc *ast.FencedCodeBlock) *Block {
	b := &Block{Path: f.Path}
	b.Line, _ = f.Position(fc.Info.Segment.Start) // a "go" block has an info string
	var code bytes.Buffer
	lines := fc.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		line, col := f.Position(seg.Start)
		b.starts = append(b.starts, lineStart{line: line, col: col, pad: seg.Padding})
		code.WriteString(strings.Repeat(" ", seg.Padding))
		code.Write(seg.Value(f.Src))
	}
	b.Code = code.Bytes()
	return b
}
