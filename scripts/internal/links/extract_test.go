package links

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		dest string
		want Dest
	}{
		{"b.md", Dest{Path: "b.md"}},
		{"b.md#part-two", Dest{Path: "b.md", HasFragment: true, Fragment: "part-two"}},
		{"#x", Dest{HasFragment: true, Fragment: "x"}},
		{"#", Dest{HasFragment: true}},
		{"b.md#", Dest{Path: "b.md", HasFragment: true}},
		{"b.md?plain=1#L5", Dest{Path: "b.md", HasFragment: true, Fragment: "L5"}},
		// A fragment runs to the end: '?' after '#' is part of it.
		{"b.md#part-two?x=1", Dest{Path: "b.md", HasFragment: true, Fragment: "part-two?x=1"}},
		{"#query-params?", Dest{HasFragment: true, Fragment: "query-params?"}},
		{"other.md#this?y", Dest{Path: "other.md", HasFragment: true, Fragment: "this?y"}},
		{"b.md?q#f?g#h", Dest{Path: "b.md", HasFragment: true, Fragment: "f?g#h"}},
		{"#a%3Fb", Dest{HasFragment: true, Fragment: "a?b"}},
		{"#top", Dest{HasFragment: true, Fragment: "top"}},
		{"?q", Dest{}},
		{"My%20File.md", Dest{Path: "My File.md"}},
		{"a%2Fb.md", Dest{Path: "a/b.md"}},
		{"%zz.md", Dest{Path: "%zz.md"}},
		{"b.md#caf%C3%A9", Dest{Path: "b.md", HasFragment: true, Fragment: "café"}},
		{"b.md#%zz", Dest{Path: "b.md", HasFragment: true, Fragment: "%zz"}},
		{"/docs/x.md", Dest{Path: "/docs/x.md", RootAbsolute: true}},
		{"//cdn.example/x.png", Dest{External: true}},
		{"https://example.com/a#frag", Dest{External: true}},
		{"mailto:a@b.c", Dest{External: true}},
		{"C:/x.md", Dest{External: true}},
		{"x+y.z-1:rest", Dest{External: true}},
		{"1http:x", Dest{Path: "1http:x"}},
		{`a\_b.md`, Dest{Path: "a_b.md"}},
		{"a&amp;b.md", Dest{Path: "a&b.md"}},
		{"&#35;frag", Dest{HasFragment: true, Fragment: "frag"}},
		{"", Dest{}},
	}
	for _, tt := range tests {
		if got := Split(tt.dest); got != tt.want {
			t.Errorf("Split(%q) = %+v, want %+v", tt.dest, got, tt.want)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"b.md#x", "#", "?#?", "%zz", "//x", "a:b", "/x#y?z", `\#`, "&#0;", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dest string) {
		d := Split(dest)
		if d.External && (d.Path != "" || d.HasFragment) {
			t.Fatalf("Split(%q) = %+v: an external destination has no parts", dest, d)
		}
		decoded := markdown.Decode(dest)
		if !d.External && d.HasFragment != strings.Contains(decoded, "#") {
			t.Fatalf("Split(%q) = %+v: HasFragment disagrees with the decoded text %q", dest, d, decoded)
		}
		if d.RootAbsolute != strings.HasPrefix(d.Path, "/") {
			t.Fatalf("Split(%q) = %+v: RootAbsolute disagrees with Path", dest, d)
		}
		if !d.External && !strings.ContainsAny(decoded, "%") && strings.ContainsAny(d.Path, "#?") {
			t.Fatalf("Split(%q) = %+v: the path part runs past '#' or '?'", dest, d)
		}
	})
}

// describeLinks renders links as "kind:line:col:dest" for comparison.
func describeLinks(f *markdown.File, links []Link) string {
	var parts []string
	for _, l := range links {
		line, col := f.Position(l.Off)
		parts = append(parts, fmt.Sprintf("%d:%d:%d:%s", l.Kind, line, col, l.Dest))
	}
	return strings.Join(parts, " ")
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"inline link", "see [a](b.md) x", "0:1:5:b.md"},
		{"image", "![alt](p.png)", "1:1:1:p.png"},
		{"bracketed destination", "[a](<My File.md>)", "0:1:1:My File.md"},
		{"title ignored", `[a](b.md "title")`, "0:1:1:b.md"},
		{"reference definition once, uses skipped", "[u][r] and [r] and [v][]\n\n[r]: gone.md\n[v]: <two.md>\n", "2:3:1:gone.md 2:4:1:two.md"},
		{"unused definition checked", "[r]: unused.md\n", "2:1:1:unused.md"},
		{"indented definition", "   [r]: x.md\n", "2:1:4:x.md"},
		{"definition under a paragraph line is text", "para\n[r]: x.md\n", ""},
		{"table cell on its row", "| a | b |\n|---|---|\n| [t](t.md) | z |\n", "0:3:3:t.md"},
		{"list and blockquote", "- [a](a.md)\n\n> [b](b.md)\n", "0:1:3:a.md 0:3:3:b.md"},
		{"footnote body", "x[^1]\n\n[^1]: see [f](f.md)\n", "0:3:11:f.md"},
		{"heading", "# [Install](setup.md)\n", "0:1:3:setup.md"},
		{"code span ignored", "`[a](b.md)` and ``<a href=\"x\">``", ""},
		{"fence ignored", "```\n[a](b.md)\n<a href=\"x.md\">\n```\n", ""},
		{"indented code ignored", "    [a](b.md)\n", ""},
		{"autolink skipped", "<https://x.io> and www.example.com", ""},
		{"raw html inline", `x <a href="h.md">h</a> <img src="i.png">`, "3:1:12:h.md 4:1:34:i.png"},
		{"raw html over lines, in a quote too", "text <a\nhref=\"h.md\">x</a>\n\n> quote <a\n> href=\"q.md\">y</a>\n", "3:2:7:h.md 3:5:9:q.md"},
		{"raw html block", "<p>\n<a class=\"c\" href='h.md'>x</a>\n</p>\n", "3:2:20:h.md"},
		{"html comment ignored", "<!-- <a href=\"no.md\"> -->\n\ntext <!-- <img src=\"no.png\"> -->\n", ""},
		{"a without href", `<a id="x"></a>`, ""},
		{"other tags ignored", `<link href="x.css"> <script src="y.js"></script>`, ""},
		{"image inside link", "[![b](badge.svg)](doc.md)", "0:1:1:doc.md 1:1:2:badge.svg"},
		// An image's description is alt text: a link there is not a link.
		{"link inside an image description", "![[x](inner.md)](outer.png)", "1:1:1:outer.png"},
		{"image inside an image description", "![a ![b](in.png)](out.png)", "1:1:1:out.png"},
		{"raw html inside an image description", "![<a href=\"in.md\">x</a>](out.png)", "1:1:1:out.png"},
		{"reference image's description", "![[x](inner.md)][r]\n\n[r]: out.png\n", "2:3:1:out.png"},
		{"link beside an image still checked", "![i](p.png) [x](x.md)", "1:1:1:p.png 0:1:13:x.md"},
		{"empty destination", "[a]()", "0:1:1:"},
		{"task marker then a link is a link", "- [x](gone.md)\n- [ ](b.md)\n* [X](<c d.md>)\n1. [x](e.md) text\n", "0:1:3:gone.md 0:2:3:b.md 0:3:3:c d.md 0:4:4:e.md"},
		{"task items are not links", "- [ ] todo [a](a.md)\n- [x] done\n- [X]\ttab\n- [x]\n", "0:1:12:a.md"},
		{"task marker then a reference", "- [x][r]\n\n[r]: r.md\n", "2:3:1:r.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := markdown.Parse("x.md", []byte(tt.src))
			if got := describeLinks(f, Extract(f)); got != tt.want {
				t.Errorf("Extract(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestLinkSplit(t *testing.T) {
	tests := []struct {
		name string
		link Link
		want Dest
	}{
		{"html keeps a backslash", Link{Kind: KindHTMLHref, Dest: `e\*f.md`}, Dest{Path: `e\*f.md`}},
		{"markdown drops it", Link{Kind: KindLink, Dest: `e\*f.md`}, Dest{Path: "e*f.md"}},
		{"html src keeps a backslash", Link{Kind: KindHTMLSrc, Dest: `a\_b.png`}, Dest{Path: `a\_b.png`}},
		{"html decodes entities", Link{Kind: KindHTMLHref, Dest: "a&amp;b.md#x&#63;"}, Dest{Path: "a&b.md", HasFragment: true, Fragment: "x?"}},
		{"html decodes once", Link{Kind: KindHTMLHref, Dest: "a&amp;amp;b.md"}, Dest{Path: "a&amp;b.md"}},
		{"markdown definition decodes escapes", Link{Kind: KindDefinition, Dest: `a\#b.md`}, Dest{Path: "a", HasFragment: true, Fragment: "b.md"}},
		{"html entity named hash", Link{Kind: KindHTMLHref, Dest: "b.md&num;x"}, Dest{Path: "b.md", HasFragment: true, Fragment: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.link.Split(); got != tt.want {
				t.Errorf("%+v.Split() = %+v, want %+v", tt.link, got, tt.want)
			}
		})
	}
}

func TestAnchors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"spec scenario 1", "# My Doc\n## Live `events` — mode!\n## Repeat\n## Repeat\n<a id=\"hand-anchor\"></a>\n",
			"my-doc live-events--mode repeat repeat-1 hand-anchor"},
		{"spec scenario 6: code and comments register nothing", "# Doc\n\n```\n<a id=\"fenced\"></a>\n```\n\n`<a id=\"inline\">`\n\n<!-- <a id=\"commented\"></a> -->\n\n<a id=\"real\"></a>\n",
			"doc real"},
		{"name on a, id anywhere, any quoting", "<a name=legacy></a> <span id='s'>x</span> <div class=\"c\" id=\"later\"></div> <p name=\"notanchor\">",
			"legacy s later"},
		{"anchor in heading", "## Title <a id=\"t2\"></a>\n", "title- t2"},
		{"setext and front matter", "---\nk: v\n---\n", "k-v"},
		{"heading in fence ignored", "```\n# not a heading\n```\n", ""},
		{"html anchors do not shift heading numbers", "<a id=\"x\"></a>\n\n# X\n# X\n", "x x x-1"},
		{"an id in alt text is no anchor", "![<a id=\"alt\"></a>](p.png)\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(Anchors(markdown.Parse("x.md", []byte(tt.src))), " ")
			if got != tt.want {
				t.Errorf("Anchors(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"[a](b.md#x) ![i](p.png)\n\n[r]: d.md\n",
		"<a href=\"x\">\n<img src=y>",
		"```\n[no](x)\n",
		"| [t](t.md) |\n|---|\n",
		"[^1]: [f](f.md)\n\nx[^1]",
		"> - [a](<b c.md>)\n>   <a\n>   href=q>",
		"[a](b.md\n",
		"\x00[a](b)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file := markdown.Parse("x.md", []byte(src))
		for _, l := range Extract(file) {
			if l.Off < 0 || l.Off > len(src) {
				t.Fatalf("link %+v: offset outside the %d-byte source", l, len(src))
			}
			if l.Kind == KindLink || l.Kind == KindImage {
				c := src[l.Off]
				if c != '[' && c != '!' {
					t.Fatalf("link %+v: offset points at %q, not '[' or '!'", l, c)
				}
			}
			line, col := file.Position(l.Off)
			if line < 1 || col < 1 || line > file.Lines() {
				t.Fatalf("link %+v: bad position %d:%d", l, line, col)
			}
			_ = Split(l.Dest)
		}
		for _, a := range Anchors(file) {
			if !utf8.ValidString(a) && utf8.ValidString(src) {
				t.Fatalf("anchor %q of valid UTF-8 source is not valid UTF-8", a)
			}
		}
	})
}
