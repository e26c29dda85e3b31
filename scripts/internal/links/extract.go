// Package links implements verify-md-links: it finds every link, image,
// reference definition and raw-HTML <a href> / <img src> in Markdown files
// and checks that relative destinations reach an existing file or
// directory inside the root, with the exact path case, and that #fragments
// into Markdown files name a heading anchor or an explicit <a id> / <a name>
// of the target. External URLs are skipped; code spans and fences are not
// links.
package links

import (
	"html"
	"net/url"
	"regexp"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/yuin/goldmark/ast"
)

// Kind says where a destination was written.
type Kind int

// Kinds of destination.
const (
	KindLink       Kind = iota // [text](dest)
	KindImage                  // ![alt](dest)
	KindDefinition             // [label]: dest
	KindHTMLHref               // <a href="dest">
	KindHTMLSrc                // <img src="dest">
)

func (k Kind) noun() string {
	if k == KindImage || k == KindHTMLSrc {
		return "image"
	}
	return "link"
}

// Link is one destination found in a file.
type Link struct {
	Kind Kind
	Dest string // as written, without the <…> of a bracketed destination
	Off  int    // byte offset in the file: the '[' or '!' of a Markdown link, the value of an HTML attribute
}

// Split splits l's destination as its kind is read: a Markdown destination
// decodes backslash escapes and character references, an HTML attribute
// value only character references (HTML has no backslash escapes, so
// <a href="e\*f.md"> names e\*f.md).
func (l Link) Split() Dest {
	if l.Kind == KindHTMLHref || l.Kind == KindHTMLSrc {
		return SplitDecoded(html.UnescapeString(l.Dest))
	}
	return Split(l.Dest)
}

// Extract returns the destinations of f the gate checks, in document
// order: inline links and images, each reference definition once (links
// that use a definition are covered by it and not returned), and the href
// of <a> and src of <img> tags in raw HTML. Autolinks are always external
// and are not returned. Nothing inside a code span, code block or HTML
// comment is returned, and nothing inside an image's description: a link
// there renders as alt text, not as a link.
func Extract(f *markdown.File) []Link {
	var out []Link
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := n.(type) {
		case *ast.Link:
			if v.Reference == nil {
				out = append(out, Link{Kind: KindLink, Dest: string(v.Destination), Off: v.Pos()})
			}
		case *ast.Image:
			if v.Reference == nil {
				out = append(out, Link{Kind: KindImage, Dest: string(v.Destination), Off: v.Pos()})
			}
			return ast.WalkSkipChildren, nil
		case *ast.LinkReferenceDefinition:
			out = append(out, Link{Kind: KindDefinition, Dest: string(v.Destination), Off: definitionOff(f, v)})
		case *ast.HTMLBlock, *ast.RawHTML:
			for _, t := range markdown.HTMLTags(n, f.Src) {
				var attr string
				var kind Kind
				switch t.Name {
				case "a":
					attr, kind = "href", KindHTMLHref
				case "img":
					attr, kind = "src", KindHTMLSrc
				default:
					continue
				}
				if a, ok := t.Get(attr); ok {
					out = append(out, Link{Kind: kind, Dest: a.Raw, Off: a.Off})
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// definitionOff is the offset of the '[' that opens definition d.
func definitionOff(f *markdown.File, d *ast.LinkReferenceDefinition) int {
	off := d.Pos()
	if off < 0 {
		return 0
	}
	for i := off; i < len(f.Src) && i < off+4; i++ {
		if f.Src[i] == '[' {
			return i
		}
	}
	return off
}

// Anchors returns the fragment targets f defines, in document order: the
// GitHub slug of every heading (repeats numbered "-1", "-2", …) and the
// value of every id attribute and of every name attribute on an <a> tag in
// raw HTML. Headings and tags inside code or HTML comments, and tags
// inside an image's description (alt text), define nothing.
func Anchors(f *markdown.File) []string {
	var out []string
	var slugs markdown.Slugger
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := n.(type) {
		case *ast.Heading:
			out = append(out, slugs.Slug(markdown.HeadingText(v, f.Src)))
		case *ast.HTMLBlock, *ast.RawHTML:
			for _, t := range markdown.HTMLTags(n, f.Src) {
				if a, ok := t.Get("id"); ok && a.Value != "" {
					out = append(out, a.Value)
				}
				if a, ok := t.Get("name"); ok && t.Name == "a" && a.Value != "" {
					out = append(out, a.Value)
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock, *ast.Image:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// Dest is a destination split into the parts the checker needs.
type Dest struct {
	// External is set for destinations the gate does not check: any
	// "scheme:" (including a Windows drive such as "C:") and "//host".
	External bool
	// RootAbsolute is set when the path starts with '/': GitHub resolves it
	// against the repository root.
	RootAbsolute bool
	// Path is the percent-decoded part before the first '#' or '?'; it is
	// the raw text when the escapes are malformed.
	Path string
	// HasFragment is set when the destination has a '#'.
	HasFragment bool
	// Fragment is the percent-decoded text after the first '#', all of it:
	// a URL's fragment runs to its end, so "#a?b" names the anchor "a?b".
	Fragment string
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// Split splits the Markdown destination dest, as written, into a [Dest].
// Backslash escapes and character references are decoded first, as
// CommonMark does.
func Split(dest string) Dest { return SplitDecoded(markdown.Decode(dest)) }

// SplitDecoded splits the destination s, whose escapes of the markup it
// was written in are already decoded, into a [Dest], as a browser splits a
// URL: the path ends at the first '?' or '#', a query ends at the first
// '#' after it, and the fragment is everything after that '#'.
func SplitDecoded(s string) Dest {
	if strings.HasPrefix(s, "//") || schemeRE.MatchString(s) {
		return Dest{External: true}
	}
	var d Dest
	p := s
	if i := strings.IndexAny(p, "#?"); i >= 0 {
		p = s[:i]
	}
	if h := strings.IndexByte(s, '#'); h >= 0 {
		d.HasFragment = true
		d.Fragment = unescape(s[h+1:])
	}
	d.Path = unescape(p)
	d.RootAbsolute = strings.HasPrefix(d.Path, "/")
	return d
}

func unescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}
