package rescope

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/yuin/goldmark/ast"
)

// isPathByte reports whether c can be part of a module path or a URL
// around one, so that a path preceded by it is not a whole path.
func isPathByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~' || c == '/' || c == '@' || c == '+' || c == '%'
}

// isWordByte reports whether c continues a path element, so that a path
// followed by it is only the start of a longer name.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '~' || c == '+' || c == '%'
}

// textMatch is a whole-path occurrence of rule r at src[off:off+len(r.From)].
type textMatch struct {
	off int
	r   Rule
}

// textMatches finds the whole-path occurrences of From paths in
// src[start:end]: not preceded by a path character (so the path inside a
// URL such as https://x/y is left alone), and followed by the end, "/", or
// a character that cannot continue a path element (a "." counts as the
// end of a sentence only when no path character follows it). Where two
// rules match at one place the longer From wins. Matches are sorted.
func textMatches(src []byte, start, end int, rules Rules) []textMatch {
	var out []textMatch
	seg := src[start:end]
	for _, r := range rules {
		from := []byte(r.From)
		for i := 0; ; {
			k := bytes.Index(seg[i:], from)
			if k < 0 {
				break
			}
			off := start + i + k
			i += k + 1
			if off > 0 && isPathByte(src[off-1]) {
				continue
			}
			after := off + len(from)
			if after < end {
				c := src[after]
				if isWordByte(c) || c == '.' && after+1 < end && isPathByte(src[after+1]) {
					continue
				}
			}
			out = append(out, textMatch{off, r})
		}
	}
	slices.SortFunc(out, func(a, b textMatch) int {
		return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(len(b.r.From), len(a.r.From)))
	})
	// Keep the longest match at each offset and drop any that overlap it.
	var kept []textMatch
	for _, m := range out {
		if n := len(kept); n > 0 && m.off < kept[n-1].off+len(kept[n-1].r.From) {
			continue
		}
		kept = append(kept, m)
	}
	return kept
}

// codeRanges returns the byte ranges of the content lines of every code
// block of the Markdown file f: fenced and indented blocks alike.
func codeRanges(f *markdown.File) [][2]int {
	var out [][2]int
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				out = append(out, [2]int{seg.Start, seg.Stop})
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// mdEdits returns the edits of the Markdown file src at rel: the paths in
// its code blocks and, for a file under docs/, the paths in its prose.
func mdEdits(rel string, src []byte, rules Rules, li lineIndex) []edit {
	if !containsAny(src, rules, true) {
		return nil
	}
	f := markdown.Parse(rel, src)
	ranges := codeRanges(f)
	var edits []edit
	add := func(m textMatch, cat Category) {
		line, col := li.pos(m.off)
		old := pathAt(src, m.off, len(m.r.From))
		to, _, _ := rules.Map(old)
		edits = append(edits, edit{m.off, m.off + len(m.r.From), m.r.To, Change{Path: rel, Line: line, Col: col, Category: cat, Old: old, New: to}})
	}
	if strings.HasPrefix(rel, "docs/") {
		for _, m := range textMatches(src, 0, len(src), rules) {
			cat := CatProse
			for _, r := range ranges {
				if r[0] <= m.off && m.off < r[1] {
					cat = CatFence
				}
			}
			add(m, cat)
		}
		return edits
	}
	for _, r := range ranges {
		for _, m := range textMatches(src, r[0], r[1], rules) {
			add(m, CatFence)
		}
	}
	return edits
}

// pathAt returns the whole path starting at src[off] whose module part is
// n bytes long: the module path plus any "/elem" that follows.
func pathAt(src []byte, off, n int) string {
	end := off + n
	for end < len(src) && src[end] == '/' {
		k := end + 1
		for k < len(src) && (isWordByte(src[k]) || src[k] == '.' && k+1 < len(src) && isWordByte(src[k+1])) {
			k++
		}
		if k == end+1 {
			break
		}
		end = k
	}
	return string(src[off:end])
}
