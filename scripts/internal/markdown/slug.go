package markdown

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"
)

// Slug returns the anchor GitHub gives a heading whose rendered text is s:
// s is lower-cased, each space becomes '-', and of every other rune only
// those [KeptInSlug] accepts remain. Runs of '-' are not collapsed, so
// "a — b" gives "a--b". Go lower-cases a few runes differently from
// JavaScript (a final sigma stays σ; U+0130 'İ' becomes 'i' without a
// combining dot); no heading in this repository needs those. Slug is
// idempotent: Slug(Slug(s)) == Slug(s).
func Slug(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case KeptInSlug(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// KeptInSlug reports whether the rune r of a lower-cased heading stays in
// its anchor. The rule is made of Unicode properties, not lists: r stays
// when it is Alphabetic (the letters L, the letter numbers Nl and
// Other_Alphabetic, which holds the enclosed and squared Latin letters
// such as Ⓐ and 🄰), a Mark (M), a decimal digit (Nd), connector
// punctuation (Pc, such as '_'), a Join_Control (ZWJ, ZWNJ) or '-'. A
// Variation_Selector is dropped although it is a mark, because GitHub
// drops it ("🛠️ Development" gives "-development"; see the RFC
// docs/rfc/implemented/2026-12-04-doc-gates-github-exact.md).
func KeptInSlug(r rune) bool {
	switch {
	case r == '-' || r == '_':
		return true
	case r < 0x80:
		return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || 'A' <= r && r <= 'Z'
	case unicode.Is(unicode.Variation_Selector, r):
		return false
	}
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic, unicode.M, unicode.Nd, unicode.Pc, unicode.Join_Control)
}

// Slugger hands out unique heading anchors for one document, as GitHub
// does: the first heading with a given slug gets it bare, later ones get
// "-1", "-2", … skipping any candidate already taken, so "Repeat",
// "Repeat-1", "Repeat" give "repeat", "repeat-1", "repeat-2". The zero
// value is ready to use; a Slugger is not safe for concurrent use.
type Slugger struct {
	occupied map[string]int
}

// Slug returns the unique anchor for a heading whose rendered text is text,
// and marks it taken.
func (s *Slugger) Slug(text string) string {
	if s.occupied == nil {
		s.occupied = make(map[string]int)
	}
	base := Slug(text)
	slug := base
	n, seen := s.occupied[base]
	for seen {
		n++
		slug = base + "-" + strconv.Itoa(n)
		_, seen = s.occupied[slug]
	}
	if slug != base {
		s.occupied[base] = n
	}
	s.occupied[slug] = 0
	return slug
}

// HeadingText returns the text GitHub makes heading h's anchor from, for a
// document parsed from src: text and code spans give their characters,
// links and emphasis their children's text, a hard line break one space;
// images (whose alt text is an attribute, not text), raw HTML, footnote
// references and the line join of a setext heading give nothing. Backslash escapes and character references are
// decoded.
func HeadingText(h ast.Node, src []byte) string {
	var b strings.Builder
	inlineText(&b, h, src)
	return b.String()
}

func inlineText(b *strings.Builder, n ast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch v := c.(type) {
		case *ast.Text:
			b.Write(decode(v.Segment.Value(src)))
			if v.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			if v.IsCode() || v.IsRaw() {
				b.Write(v.Value)
			} else {
				b.Write(decode(v.Value))
			}
		case *ast.CodeSpan:
			for t := v.FirstChild(); t != nil; t = t.NextSibling() {
				switch tv := t.(type) {
				case *ast.Text:
					val := tv.Segment.Value(src)
					if tv.SoftLineBreak() || tv.HardLineBreak() {
						val = append(append([]byte(nil), val...), ' ')
					}
					b.Write(val)
				case *ast.String:
					b.Write(tv.Value)
				}
			}
		case *ast.AutoLink:
			b.Write(v.Label(src))
		case *ast.RawHTML, *ast.Image:
			// Raw HTML renders as markup, and an image's alt text is an
			// attribute: neither is the heading's text.
		case *east.FootnoteLink:
			// A footnote reference renders as a superscript number that
			// GitHub leaves out of the anchor.
		default:
			inlineText(b, c, src)
		}
	}
}

// decode resolves backslash escapes and character references in raw
// inline text, as a renderer would.
func decode(raw []byte) []byte {
	if !containsAny(raw, '\\', '&') {
		return raw
	}
	return util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(raw)))
}

// Decode returns s with backslash escapes and character references
// resolved, as CommonMark does for link destinations.
func Decode(s string) string { return string(decode([]byte(s))) }

func containsAny(b []byte, c1, c2 byte) bool {
	for _, c := range b {
		if c == c1 || c == c2 {
			return true
		}
	}
	return false
}
