package markdown

import (
	"bytes"

	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/yuin/goldmark/ast"
)

// Unclosed returns a finding for each code fence and each HTML block of f
// that is never closed. Such a block silently swallows the rest of its
// container (often the rest of the file), so every link or paragraph in it
// goes unchecked and renders as code or raw HTML.
func Unclosed(f *File) []report.Finding {
	var out []report.Finding
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := n.(type) {
		case *ast.FencedCodeBlock:
			if !fenceClosed(f, v) {
				fd := f.Finding(v.Pos(), "code fence is never closed; the rest of its block renders as code")
				fd.Reason = "file"
				out = append(out, fd)
			}
			return ast.WalkSkipChildren, nil
		case *ast.HTMLBlock:
			if end := htmlBlockEnd(v.HTMLBlockType); end != nil && !htmlClosed(f, v, end) {
				want := end[0]
				if l := v.Lines(); v.HTMLBlockType == ast.HTMLBlockType1 && l.Len() > 0 {
					seg := l.At(0)
					first := bytes.ToLower(seg.Value(f.Src))
					for _, e := range end {
						if bytes.Contains(first, append([]byte("<"), e[2:len(e)-1]...)) {
							want = e
							break
						}
					}
				}
				fd := f.Finding(v.Pos(), "HTML block is never closed (no "+string(want)+"); the rest of its block is raw HTML")
				fd.Reason = "file"
				out = append(out, fd)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// fenceClosed reports whether the line after the body of fence b is a
// closing fence: the same character, at least as long as the opener, with
// only container markers before it and only spaces after it.
func fenceClosed(f *File, b *ast.FencedCodeBlock) bool {
	open := b.Pos()
	if open < 0 || open >= len(f.Src) {
		return true
	}
	c := f.Src[open]
	if c != '`' && c != '~' {
		return true // not where we expect the opener; do not guess
	}
	n := 0
	for open+n < len(f.Src) && f.Src[open+n] == c {
		n++
	}
	openLine, _ := f.Position(open)
	next := openLine + 1
	if l := b.Lines(); l.Len() > 0 {
		last, _ := f.Position(l.At(l.Len() - 1).Start)
		next = last + 1
	}
	if next > f.Lines() {
		return false
	}
	line := f.Line(next)
	line = bytes.TrimLeft(line, " \t>")
	k := 0
	for k < len(line) && line[k] == c {
		k++
	}
	return k >= n && len(bytes.TrimSpace(line[k:])) == 0
}

// htmlBlockEnd returns the markers that close an HTML block of type t
// (CommonMark types 1 to 5), or nil for types 6 and 7, which end at a blank
// line and so are never left open.
func htmlBlockEnd(t ast.HTMLBlockType) [][]byte {
	switch t {
	case ast.HTMLBlockType1:
		return [][]byte{[]byte("</script>"), []byte("</pre>"), []byte("</style>"), []byte("</textarea>")}
	case ast.HTMLBlockType2:
		return [][]byte{[]byte("-->")}
	case ast.HTMLBlockType3:
		return [][]byte{[]byte("?>")}
	case ast.HTMLBlockType4:
		return [][]byte{[]byte(">")}
	case ast.HTMLBlockType5:
		return [][]byte{[]byte("]]>")}
	}
	return nil
}

func htmlClosed(f *File, b *ast.HTMLBlock, ends [][]byte) bool {
	if b.HasClosure() {
		return true
	}
	l := b.Lines()
	if l.Len() == 0 {
		return true
	}
	seg := l.At(l.Len() - 1)
	last := bytes.ToLower(seg.Value(f.Src))
	for _, e := range ends {
		if bytes.Contains(last, e) {
			return true
		}
	}
	return false
}
