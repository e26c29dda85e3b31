package markdown

import (
	"bytes"
	"html"
	"sort"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Tag is one start tag found in raw HTML.
type Tag struct {
	Name  string // lower-cased element name
	Off   int    // byte offset of '<' in the file
	Attrs []Attr
}

// Attr is one attribute of a [Tag].
type Attr struct {
	Name  string // lower-cased attribute name
	Raw   string // the value as written, without quotes
	Value string // the value with character references decoded
	Off   int    // byte offset of the value (or the name, when it has none) in the file
}

// Get returns the attribute named name (lower case) and whether t has it.
func (t Tag) Get(name string) (Attr, bool) {
	for _, a := range t.Attrs {
		if a.Name == name {
			return a, true
		}
	}
	return Attr{}, false
}

// HTMLTags returns the start tags in the raw HTML of node n, which must be
// an *ast.HTMLBlock or an *ast.RawHTML of a document parsed from src.
// Comments are skipped. Offsets are offsets into src. Other nodes give nil.
func HTMLTags(n ast.Node, src []byte) []Tag {
	var segs []text.Segment
	switch v := n.(type) {
	case *ast.HTMLBlock:
		for i := 0; i < v.Lines().Len(); i++ {
			segs = append(segs, v.Lines().At(i))
		}
		if v.HasClosure() {
			segs = append(segs, v.ClosureLine)
		}
	case *ast.RawHTML:
		for i := 0; i < v.Segments.Len(); i++ {
			segs = append(segs, v.Segments.At(i))
		}
	default:
		return nil
	}
	var c chunk
	for _, s := range segs {
		c.add(s.Value(src), s.Start)
	}
	tags := ScanTags(c.buf)
	for i := range tags {
		tags[i].Off = c.srcOff(tags[i].Off)
		for j := range tags[i].Attrs {
			tags[i].Attrs[j].Off = c.srcOff(tags[i].Attrs[j].Off)
		}
	}
	return tags
}

// chunk is text gathered from several source segments, with the map back
// to source offsets.
type chunk struct {
	buf    []byte
	starts []int // offset in buf where each segment starts
	srcs   []int // offset in the source of the same segment
}

func (c *chunk) add(b []byte, srcStart int) {
	c.starts = append(c.starts, len(c.buf))
	c.srcs = append(c.srcs, srcStart)
	c.buf = append(c.buf, b...)
}

func (c *chunk) srcOff(i int) int {
	k := sort.Search(len(c.starts), func(k int) bool { return c.starts[k] > i }) - 1
	if k < 0 {
		return i
	}
	return c.srcs[k] + i - c.starts[k]
}

// ScanTags returns the start tags in the HTML fragment b, skipping
// comments, end tags, declarations and processing instructions. Offsets are
// offsets into b. It is a tolerant scanner, not a validator: an
// unterminated tag or quoted value runs to the end of b. It runs in time
// linear in len(b).
func ScanTags(b []byte) []Tag {
	var tags []Tag
	i := 0
	for i < len(b) {
		lt := bytes.IndexByte(b[i:], '<')
		if lt < 0 {
			break
		}
		i += lt
		rest := b[i:]
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			end := bytes.Index(rest[4:], []byte("-->"))
			if end < 0 {
				return tags
			}
			i += 4 + end + 3
			continue
		case len(rest) > 1 && isASCIILetter(rest[1]):
			t, next := scanTag(b, i)
			tags = append(tags, t)
			i = next
		default:
			i++
		}
	}
	return tags
}

// scanTag reads the start tag whose '<' is at b[start] and returns it and
// the offset just past it.
func scanTag(b []byte, start int) (Tag, int) {
	i := start + 1
	j := i
	for j < len(b) && (isASCIILetter(b[j]) || isDigit(b[j]) || b[j] == '-') {
		j++
	}
	t := Tag{Name: string(bytes.ToLower(b[i:j])), Off: start}
	i = j
	for i < len(b) {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '>':
			return t, i + 1
		case '/':
			i++
			continue
		case '<':
			// A new tag starts before this one closed.
			return t, i
		}
		nameStart := i
		for i < len(b) && !isSpace(b[i]) && b[i] != '/' && b[i] != '>' && b[i] != '=' && b[i] != '<' {
			i++
		}
		if i == nameStart { // a stray '=' or quote
			i++
			continue
		}
		a := Attr{Name: string(bytes.ToLower(b[nameStart:i])), Off: nameStart}
		k := i
		for k < len(b) && isSpace(b[k]) {
			k++
		}
		if k < len(b) && b[k] == '=' {
			k++
			for k < len(b) && isSpace(b[k]) {
				k++
			}
			var raw []byte
			switch {
			case k < len(b) && (b[k] == '"' || b[k] == '\''):
				q := b[k]
				end := bytes.IndexByte(b[k+1:], q)
				a.Off = k + 1
				if end < 0 {
					raw = b[k+1:]
					k = len(b)
				} else {
					raw = b[k+1 : k+1+end]
					k = k + 1 + end + 1
				}
			default:
				a.Off = k
				s := k
				for k < len(b) && !isSpace(b[k]) && b[k] != '>' {
					k++
				}
				raw = b[s:k]
			}
			a.Raw = string(raw)
			a.Value = html.UnescapeString(a.Raw)
			i = k
		}
		t.Attrs = append(t.Attrs, a)
	}
	return t, len(b)
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool       { return '0' <= c && c <= '9' }
func isSpace(c byte) bool       { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
