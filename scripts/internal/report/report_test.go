package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestFormatAndOrder(t *testing.T) {
	fs := []Finding{
		{Path: "b.md", Line: 2, Col: 1, Message: "x"},
		{Path: "a.md", Line: 10, Message: "whole line"},
		{Path: "a.md", Line: 9, Col: 30, Message: "y"},
		{Path: "a.md", Message: "whole file"},
		{Path: "a.md", Line: 9, Col: 4, Message: "z"},
	}
	Sort(fs)
	var b bytes.Buffer
	if err := Print(&b, fs); err != nil {
		t.Fatal(err)
	}
	want := "a.md: whole file\na.md:9:4: z\na.md:9:30: y\na.md:10: whole line\nb.md:2:1: x\n"
	if b.String() != want {
		t.Errorf("Print:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := PrintJSON(&b, nil); err != nil || b.String() != "[]\n" {
		t.Errorf("PrintJSON(nil) = %q, %v; want an empty array", b.String(), err)
	}
}

func TestQuotePath(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"docs/a.md", "docs/a.md"},
		{"docs/a b.md", "docs/a b.md"},
		{"docs/émoji ✨.md", "docs/émoji ✨.md"},
		{"a\nb.md", `"a\nb.md"`},
		{"c:1:1: fake.md", `"c:1:1: fake.md"`},
		{"a:b.md", `"a:b.md"`},
		{"tab\there.md", `"tab\there.md"`},
		{"a\rb.md", `"a\rb.md"`},
		{"nul\x00.md", `"nul\x00.md"`},
		{"bad\xffutf8.md", `"bad\xffutf8.md"`},
		{"line\u2028sep.md", `"line\u2028sep.md"`},
		{"bidi\u202emd.txt", `"bidi\u202emd.txt"`},
		{" lead.md", `" lead.md"`},
		{"trail.md ", `"trail.md "`},
		{"nbsp\u00a0.md", `"nbsp\u00a0.md"`},
		{`"quoted".md`, `"\"quoted\".md"`},
		{`mid"quote.md`, `mid"quote.md`},
		{"", `""`},
	} {
		if got := QuotePath(tc.path); got != tc.want {
			t.Errorf("QuotePath(%q) = %s, want %s", tc.path, got, tc.want)
		}
	}
}

func TestFindingLineCannotBeForged(t *testing.T) {
	for _, tc := range []struct {
		f    Finding
		want string
	}{
		{Finding{Path: "a\nb.md", Line: 3, Col: 1, Message: "x"}, `"a\nb.md":3:1: x`},
		{Finding{Path: "c:1:1: fake.md", Line: 2, Message: "y"}, `"c:1:1: fake.md":2: y`},
		{Finding{Path: "d.md: forged", Message: "z"}, `"d.md: forged": z`},
		{Finding{Path: "e.md", Line: 1, Col: 2, Message: "no anchor in f\ng.md:9:9: fake"}, `e.md:1:2: no anchor in f\ng.md:9:9: fake`},
		{Finding{Path: "e.md", Line: 1, Message: "tab\tand\u2028sep and bad \xff byte"}, `e.md:1: tab\tand\u2028sep and bad \xff byte`},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("%#v.String() =\n%s\nwant\n%s", tc.f, got, tc.want)
		}
	}
}

// FuzzFindingLine checks that a finding is always one line of printable
// text from which the path, line and column read back exactly.
func FuzzFindingLine(f *testing.F) {
	f.Add("docs/a.md", 3, 5, "broken link")
	f.Add("a\nb.md", 1, 0, "x")
	f.Add("c:1:1: fake.md", 0, 0, "y\nz.md:1:1: w")
	f.Add(`"q".md`, 2, 2, "\u2028")
	f.Add(" x\xff", 7, 1, "\x00")
	f.Fuzz(func(t *testing.T, path string, line, col int, msg string) {
		line, col = abs(line), abs(col)
		if line == 0 {
			col = 0
		}
		s := Finding{Path: path, Line: line, Col: col, Message: msg}.String()
		if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			t.Fatalf("finding line %q holds a non-printing character", s)
		}
		gotPath, rest := s, ""
		if strings.HasPrefix(s, `"`) {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				t.Fatalf("%q: bad quoted path: %v", s, err)
			}
			gotPath, _ = strconv.Unquote(q)
			rest = s[len(q):]
		} else {
			i := strings.IndexByte(s, ':')
			gotPath, rest = s[:i], s[i:]
		}
		if gotPath != path {
			t.Fatalf("%q: path reads back as %q, want %q", s, gotPath, path)
		}
		want := ": "
		switch {
		case line == 0:
		case col == 0:
			want = ":" + strconv.Itoa(line) + ": "
		default:
			want = ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col) + ": "
		}
		if !strings.HasPrefix(rest, want) {
			t.Fatalf("%q: position reads back as %q, want %q", s, rest, want)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // math.MinInt
			return 1
		}
		return -n
	}
	return n
}
