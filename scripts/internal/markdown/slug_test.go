package markdown

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
)

// headingSlugs parses src and returns the anchors of its headings in order.
func headingSlugs(t *testing.T, src string) []string {
	t.Helper()
	f := Parse("x.md", []byte(src))
	var s Slugger
	var out []string
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			out = append(out, s.Slug(HeadingText(h, f.Src)))
		}
		return ast.WalkContinue, nil
	})
	return out
}

func TestHeadingSlugs(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		// docgates.md §2.6 and §2.9.
		{"code span and em dash", "## Live `events` — mode!\n", []string{"live-events--mode"}},
		{"underscore kept", "# Showcase: web_fetch\n", []string{"showcase-web_fetch"}},
		{"plain sentence", "# Security and authority are non-goals\n", []string{"security-and-authority-are-non-goals"}},
		{"link text only", "## [Install](setup.md)\n", []string{"install"}},
		{"unicode letters kept, symbols dropped", "# Émoji ✨ Ünïcode 中文 標題\n", []string{"émoji--ünïcode-中文-標題"}},
		{"entity decoded then dropped", "# A &amp; B\n", []string{"a--b"}},
		{"tab dropped", "# a\tb\n", []string{"ab"}},
		{"setext join adds nothing", "Foo\nbar baz\n===\n", []string{"foobar-baz"}},
		{"inline html dropped", "# Heading <span>html</span> end\n", []string{"heading-html-end"}},
		{"repeats numbered", "# Repeat\n# Repeat-1\n# Repeat\n", []string{"repeat", "repeat-1", "repeat-2"}},
		// field-notes.md §3.2a, GitHub ids taken from cited reports.
		{"parentheses", "# Maximum Likelihood Estimator (MLE)\n", []string{"maximum-likelihood-estimator-mle"}},
		{"emoji with variation selector", "# 🛠️ Development\n", []string{"-development"}},
		{"emoji shortcode", "# :arrow_left: Username Created\n", []string{"arrow_left-username-created"}},
		{"slash", "# CI / Build Machine\n", []string{"ci--build-machine"}},
		{"code span with dot", "# Configuration - `.config.yml`\n", []string{"configuration---configyml"}},
		{"ampersand", "# Files & skills\n", []string{"files--skills"}},
		{"code span underscore", "# DeepSeek: `reasoning_content`\n", []string{"deepseek-reasoning_content"}},
		{"two code spans", "# `a` + `title`\n", []string{"a--title"}},
		{"trailing code span", "# Valid header with `backticks`\n", []string{"valid-header-with-backticks"}},
		{"link in heading", "# [API](guide.md)\n", []string{"api"}},
		{"html comment", "# Works with GitLab <!-- comment -->\n", []string{"works-with-gitlab-"}},
		{"slash and trailing underscore", "# Söme/title-header_\n", []string{"sömetitle-header_"}},
		{"github loop", "# Errors\n# Errors\n# Errors-1\n", []string{"errors", "errors-1", "errors-1-1"}},
		// Images: the alt text is an attribute, not the heading's text.
		{"image alt text is not text", "# ![Logo](logo.png) Title\n", []string{"-title"}},
		{"image at the end", "# hello ![B](b.svg)\n", []string{"hello-"}},
		{"image alone", "# ![B](b.svg)\n", []string{""}},
		{"image in a link", "# [![B](b.svg) docs](d.md)\n", []string{"-docs"}},
		{"reference image", "# a ![B][b]\n\n[b]: b.svg\n", []string{"a-"}},
		{"link text kept beside an image", "# [go](g.md) ![x](x.png)\n", []string{"go-"}},
		// Other_Alphabetic: letter-like symbols are kept, lower-cased.
		{"circled capital letter", "# Ⓐ test\n", []string{"ⓐ-test"}},
		{"circled small letter", "# ⓩ z\n", []string{"ⓩ-z"}},
		{"squared latin letter", "# 🄰 box\n", []string{"🄰-box"}},
		{"negative squared latin letter", "# 🅐 b\n", []string{"🅐-b"}},
		{"negative squared letter emoji drops its selector", "# 🅰\ufe0f blood\n", []string{"🅰-blood"}},
		{"circled digit is not alphabetic", "# ① one\n", []string{"-one"}},
		{"parenthesized letter is not alphabetic", "# ⒜ a\n", []string{"-a"}},
		// Variation selectors are dropped wherever they stand.
		{"text presentation selector", "# ☺\ufe0e smile\n", []string{"-smile"}},
		{"selector after a letter", "# a\ufe0fb\n", []string{"ab"}},
		{"ideographic variation selector", "# 葛\U000E0100 x\n", []string{"葛-x"}},
		{"keycap keeps its enclosing mark", "# 1\ufe0f\u20e3 one\n", []string{"1\u20e3-one"}},
		{"escaped punctuation", "# a\\_b \\*c\\*\n", []string{"a_b-c"}},
		{"numeric reference", "# caf&#233;\n", []string{"café"}},
		{"hard break gives a space", "Foo\\\nbar\n---\n", []string{"foo-bar"}},
		{"emphasis", "# *Very* **bold** ~~gone~~\n", []string{"very-bold-gone"}},
		{"digits and dots", "# Version 3.2\n", []string{"version-32"}},
		{"combining mark kept", "# e\u0301t\u00e9\n", []string{"e\u0301t\u00e9"}},
		{"devanagari vowel signs kept", "# हिन्दी\n", []string{"हिन्दी"}},
		{"superscript number dropped", "# x²\n", []string{"x"}},
		{"zero width joiner kept", "# a\u200db\n", []string{"a\u200db"}},
		{"footnote reference dropped", "# Title[^1]\n\n[^1]: note\n", []string{"title"}},
		{"autolink text", "# See <https://x.io>\n", []string{"see-httpsxio"}},
		{"empty heading", "#\n", []string{""}},
		{"empty repeats", "#\n#\n", []string{"", "-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := headingSlugs(t, tt.src)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("slugs of %q = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestSlug(t *testing.T) {
	tests := map[string]string{
		"":                 "",
		"Hello World":      "hello-world",
		"  two  spaces  ":  "--two--spaces--",
		"UPPER_lower-Dash": "upper_lower-dash",
		"‿ connector":      "‿-connector",
		"Ⅻ roman":          "ⅻ-roman",
		"a\x00b":           "ab",
		"\xff":             "",
	}
	for in, want := range tests {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// keptByDefinition is the slug rule written straight from the Unicode
// properties it names, with no fast path: Alphabetic (L, Nl,
// Other_Alphabetic), Mark, Nd, Pc, Join_Control and '-', less the
// variation selectors.
func keptByDefinition(r rune) bool {
	alphabetic := unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r)
	kept := alphabetic || unicode.IsMark(r) || unicode.IsDigit(r) || unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Join_Control, r) || r == '-'
	return kept && !unicode.Is(unicode.Variation_Selector, r)
}

// TestKeptInSlugEveryRune compares the rule with its definition on every
// code point.
func TestKeptInSlugEveryRune(t *testing.T) {
	bad := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if KeptInSlug(r) != keptByDefinition(r) {
			if bad++; bad <= 10 {
				t.Errorf("KeptInSlug(%U) = %v, definition says %v", r, KeptInSlug(r), keptByDefinition(r))
			}
		}
	}
}

// slugByDefinition is Slug spelled out from keptByDefinition.
func slugByDefinition(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r == ' ' {
			b.WriteByte('-')
		} else if keptByDefinition(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Ⓐ test", "🄰 🅐 ① ⒜", "🅰\ufe0f", "1\ufe0f\u20e3", "葛\U000E0100", "", "Hello World", "Live `events` — mode!", "🛠️ Development", "İstanbul", "ΣΑΣ", "a\u200db", "\xff\xfe", "Ⅻ", "ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := Slug(s)
		if def := slugByDefinition(s); once != def {
			t.Fatalf("Slug(%q) = %q, the property definition gives %q", s, once, def)
		}
		if twice := Slug(once); twice != once {
			t.Fatalf("Slug not idempotent: Slug(%q) = %q, Slug of that = %q", s, once, twice)
		}
		if strings.ContainsAny(once, " \t\n") {
			t.Fatalf("Slug(%q) = %q contains white space", s, once)
		}
		if !utf8.ValidString(once) {
			t.Fatalf("Slug(%q) = %q is not valid UTF-8", s, once)
		}
		var sl Slugger
		a, b := sl.Slug(s), sl.Slug(s)
		if a == b {
			t.Fatalf("Slugger gave %q twice for %q", a, s)
		}
	})
}
