package markdown

import (
	"fmt"
	"strings"
	"testing"
)

func describe(tags []Tag) string {
	var b strings.Builder
	for _, t := range tags {
		fmt.Fprintf(&b, "<%s@%d", t.Name, t.Off)
		for _, a := range t.Attrs {
			fmt.Fprintf(&b, " %s=%q@%d", a.Name, a.Value, a.Off)
		}
		b.WriteString(">")
	}
	return b.String()
}

func TestScanTags(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"double quoted", `<a href="x.md">`, `<a@0 href="x.md"@9>`},
		{"single quoted", `<a href='x.md'>`, `<a@0 href="x.md"@9>`},
		{"unquoted", `<a href=x.md>`, `<a@0 href="x.md"@8>`},
		{"upper case", `<A HREF="x.md">`, `<a@0 href="x.md"@9>`},
		{"spaces around =", `<img src = "p.png" />`, `<img@0 src="p.png"@12>`},
		{"several attrs", `<a class="c" id="i" name=n>`, `<a@0 class="c"@10 id="i"@17 name="n"@25>`},
		{"boolean attr", `<input disabled id="x">`, `<input@0 disabled=""@7 id="x"@20>`},
		{"entity decoded", `<a href="a&amp;b.md">`, `<a@0 href="a&b.md"@9>`},
		{"comment skipped", `<!-- <a id="no"> --><a id="yes">`, `<a@20 id="yes"@27>`},
		{"unterminated comment", `<a id="x"><!-- <a id="no">`, `<a@0 id="x"@7>`},
		{"end tag skipped", `</a><b>`, `<b@4>`},
		{"not a tag", `a < b and <3`, ``},
		{"unterminated quote runs to end", `<a href="x.md`, `<a@0 href="x.md"@9>`},
		{"tag interrupted by another", `<a href=x <img src=y>`, `<a@0 href="x"@8><img@10 src="y"@19>`},
		{"multi-line", "<a\nhref=\"x\"\n>", `<a@0 href="x"@9>`},
		{"stray equals", `<a = "x" id=y>`, `<a@0 "x"=""@5 id="y"@12>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe(ScanTags([]byte(tt.in))); got != tt.want {
				t.Errorf("ScanTags(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzScanTags(f *testing.F) {
	for _, s := range []string{`<a href="x">`, `<!--`, `<a x='`, `<a<b<c`, "<img\nsrc=y/>", `<a =>`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tag := range ScanTags([]byte(s)) {
			if tag.Off < 0 || tag.Off >= len(s) || s[tag.Off] != '<' {
				t.Fatalf("tag offset %d does not point at '<' in %q", tag.Off, s)
			}
			for _, a := range tag.Attrs {
				if a.Off < 0 || a.Off > len(s) || !strings.HasPrefix(s[a.Off:], a.Raw) {
					t.Fatalf("attribute %q offset %d does not point at its value in %q", a.Name, a.Off, s)
				}
			}
		}
	})
}

func TestHTMLTagsOffsetsInFile(t *testing.T) {
	src := "> <div>\n> <a id=\"deep\"></a>\n> </div>\n\nText <img src=\"p.png\"> end.\n"
	f := Parse("x.md", []byte(src))
	var got []string
	walkHTML(f, func(tag Tag) {
		for _, a := range tag.Attrs {
			line, col := f.Position(a.Off)
			got = append(got, fmt.Sprintf("%s=%s@%d:%d", a.Name, a.Value, line, col))
		}
	})
	want := "id=deep@2:10 src=p.png@5:16"
	if strings.Join(got, " ") != want {
		t.Errorf("attributes = %q, want %q", strings.Join(got, " "), want)
	}
}
