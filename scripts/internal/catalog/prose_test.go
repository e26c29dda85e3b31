package catalog

import (
	"go/doc/comment"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/dsh-go/dsh/scripts/internal/wrap"
	"github.com/yuin/goldmark/ast"
)

func TestProse(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"paragraph joined", "Run runs spec\nin the foreground.\n", "Run runs spec in the foreground."},
		{"paragraphs", "One.\n\nTwo\nlines.\n", "One.\n\nTwo lines."},
		{"markup escaped", "A *b* [c] <d> & e~f | g\\h\n", `A \*b\* \[c\] \<d\> \& e\~f \| g\\h`},
		{"code span kept", "Use `a <b> *c*` here.\n", "Use `a <b> *c*` here."},
		{"double backquote run kept", "Run ``a ` b`` now.\n", "Run “a \\` b“ now."},
		{"unmatched backquote escaped", "A ` alone.\n", "A \\` alone."},
		{"underscore inside a word kept", "snake_case and _x_ and a_\n", `snake_case and \_x\_ and a\_`},
		{"leading hash escaped", "#1 is first.\n", `\#1 is first.`},
		{"leading dash escaped", "- no list\n", `\- no list`},
		{"leading number escaped", "3. not a list\n", "3\\. not a list"},
		{"bullet list", "Cases:\n  - one\n  - two\n    wrapped\n", "Cases:\n\n- one\n- two wrapped"},
		{"numbered list", "Steps:\n 1. first\n 2. second\n", "Steps:\n\n1. first\n2. second"},
		{"loose list", "Cases:\n  - one\n\n  - two\n", "Cases:\n\n- one\n\n- two"},
		{"code block", "Example:\n\n\tx := `a`\n\t```\n", "Example:\n\n````\nx := `a`\n```\n````"},
		{"heading", "Intro.\n\n# Errors\n\nText.\n", "Intro.\n\n**Errors**\n\nText."},
		{"url", "See https://go.dev/x_y.\n", "See <https://go.dev/x_y>."},
		{"link definition", "See [the spec].\n\n[the spec]: https://go.dev/ref/spec\n", "See [the spec](https://go.dev/ref/spec)."},
		{"doc link without context", "Calls [io.Reader] and [fmt.Println].\n", "Calls `io.Reader` and `fmt.Println`."},
		{"carriage returns", "One\r\ntwo.\r\n", "One two."},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Prose(tt.in); got != tt.want {
				t.Errorf("Prose(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzProse checks the promises of the prose renderer on any doc text:
// it is deterministic, every paragraph of its Markdown is one physical
// line, it never lets raw HTML through, and it shows every character of
// the doc comment (whitespace and backquotes aside, which Markdown is
// free to use for layout and code spans).
func FuzzProse(f *testing.F) {
	for _, s := range []string{
		"Run runs spec.\n",
		"A *b* [c] <d> & e~f | g\\h `code` _x_\n",
		"Cases:\n  - one\n  - two\n\n 1. a\n 2. b\n",
		"# Heading\n\n\tcode ``` here\n\nSee https://x.y/z and [io.Reader].\n",
		"[a]: http://x\n\nSee [a].\n",
		"- \n# \n1) x\n+ y\n= z\n***\n",
		"``quoted'' and ```triple```\n",
		"<a href=\"x\">y</a>\n\n<div>\nz\n</div>\n",
		"www.example.com/a_b*c and foo@bar.com\n",
		"line one\\\nline two  \nline three\n",
		"&amp; &#42; &copy;\n",
		"   \n\t\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := Prose(text)
		if again := Prose(text); again != got {
			t.Fatalf("not deterministic:\n%q\n%q", got, again)
		}
		md := markdown.Parse("prose.md", []byte(got))
		if fs := wrap.Check(md); len(fs) > 0 {
			t.Fatalf("Prose(%q) = %q has a multi-line paragraph: %v", text, got, fs)
		}
		_ = ast.Walk(md.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			switch n.(type) {
			case *ast.RawHTML, *ast.HTMLBlock:
				t.Fatalf("Prose(%q) = %q lets raw HTML through", text, got)
			}
			return ast.WalkContinue, nil
		})
		if !utf8.ValidString(text) || strings.ContainsRune(text, 0) {
			return // goldmark replaces invalid bytes and NUL: nothing to compare
		}
		want := squeeze(docVisible(text))
		if have := squeeze(mdVisible(md)); have != want {
			t.Fatalf("Prose(%q) = %q\nshows  %q\nwanted %q", text, got, have, want)
		}
	})
}

// docVisible returns the text a reader of the doc comment sees.
func docVisible(text string) string {
	text = strings.ReplaceAll(text, "\r", "\n")
	var b strings.Builder
	var texts func([]comment.Text)
	texts = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case comment.Plain:
				b.WriteString(string(t))
			case comment.Italic:
				b.WriteString(string(t))
			case *comment.Link:
				if t.Auto && autolinkSafe(t.URL) {
					b.WriteString(t.URL)
				} else {
					texts(t.Text)
				}
			case *comment.DocLink:
				texts(t.Text)
			}
		}
	}
	for _, blk := range new(comment.Parser).Parse(text).Content {
		switch blk := blk.(type) {
		case *comment.Paragraph:
			texts(blk.Text)
		case *comment.Heading:
			texts(blk.Text)
		case *comment.Code:
			b.WriteString(blk.Text)
		case *comment.List:
			for _, it := range blk.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						texts(p.Text)
					}
				}
			}
		}
	}
	return b.String()
}

// mdVisible returns the text a reader of the rendered Markdown sees.
func mdVisible(f *markdown.File) string {
	var b strings.Builder
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.CodeSpan:
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					b.Write(t.Segment.Value(f.Src))
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			b.WriteString(decodeInline(string(n.Segment.Value(f.Src))))
		case *ast.AutoLink:
			b.Write(n.Label(f.Src))
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock:
			lines := n.Lines()
			for i := range lines.Len() {
				seg := lines.At(i)
				b.Write(seg.Value(f.Src))
			}
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

var entityRE = regexp.MustCompile(`^&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});`)

// decodeInline decodes the raw text of a Markdown text node as CommonMark
// does: a backslash before ASCII punctuation makes it literal, and an
// unescaped character reference is replaced by its character.
func decodeInline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0:
			b.WriteByte(s[i+1])
			i++
		case c == '&':
			if m := entityRE.FindString(s[i:]); m != "" {
				b.WriteString(markdown.Decode(m))
				i += len(m) - 1
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// squeeze drops whitespace and backquotes.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '`' {
			return -1
		}
		return r
	}, s)
}
