package rescope

import (
	"bytes"
	"testing"

	"github.com/dsh-go/dsh/scripts/internal/manifest"
	"golang.org/x/mod/modfile"
)

func fuzzRules(reverse bool) Rules {
	return NewRules(&manifest.Manifest{Forks: []manifest.Fork{
		{Upstream: "x.org/a", Module: "y.org/a"},
		{Upstream: "x.org/a/sub", Module: "y.org/asub"},
	}}, reverse)
}

// holdsTarget reports whether src already names a scoped path, in which
// case a rename there and back cannot restore it (the reverse rename also
// renames what was scoped to begin with).
func holdsTarget(src []byte) bool {
	return bytes.Contains(src, []byte("y.org/a"))
}

// FuzzQuotedRoundTrip: renaming the quoted paths of any text and back
// gives the text again, and never panics.
func FuzzQuotedRoundTrip(f *testing.F) {
	for _, s := range []string{
		`import "x.org/a"`,
		"`x.org/a/sub/p` 'x.org/a' \"x.org/ab\"",
		`""x.org/a""x.org/a/sub"`,
		`'"x.org/a"'`,
		"\"x.org/a\n\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if holdsTarget(src) {
			return
		}
		fwd := splice(src, quotedEdits("f.go", src, fuzzRules(false), nil, newLineIndex(src)))
		back := splice(fwd, quotedEdits("f.go", fwd, fuzzRules(true), nil, newLineIndex(fwd)))
		if !bytes.Equal(back, src) {
			t.Fatalf("round trip of %q gave %q (via %q)", src, back, fwd)
		}
	})
}

// FuzzTextRoundTrip: the same for the whole-path rule of Markdown text.
func FuzzTextRoundTrip(f *testing.F) {
	for _, s := range []string{
		"use x.org/a/sub/pkg and x.org/a.",
		"https://x.org/a x.org/a@v1 (x.org/a) x.org/a.b x.org/a/subway",
		"x.org/a/sub.",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if holdsTarget(src) {
			return
		}
		edits := func(b []byte, reverse bool) []edit {
			var out []edit
			for _, m := range textMatches(b, 0, len(b), fuzzRules(reverse)) {
				out = append(out, edit{off: m.off, end: m.off + len(m.r.From), repl: m.r.To})
			}
			return out
		}
		fwd := splice(src, edits(src, false))
		back := splice(fwd, edits(fwd, true))
		if !bytes.Equal(back, src) {
			t.Fatalf("round trip of %q gave %q (via %q)", src, back, fwd)
		}
	})
}

// FuzzGoModRoundTrip: for any go.mod that parses, renaming its sites
// gives a go.mod that parses, and renaming back restores every byte.
func FuzzGoModRoundTrip(f *testing.F) {
	for _, s := range []string{
		"module x.org/a\n\ngo 1.26\n",
		"module \"x.org/a/sub\"\n\nrequire (\n\tx.org/a v1.0.0 // c\n\t\"x.org/a/sub\" v1.2.3\n)\n",
		"module m\n\nreplace x.org/a v1.0.0 => x.org/a/sub v1.0.1\nreplace x.org/a/sub => ../x.org/a/sub\n",
		"module m\nexclude x.org/a v1.0.0\ntool x.org/a/cmd\nretract v1.0.0 // x.org/a\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		mf, err := modfile.Parse("go.mod", src, nil)
		if err != nil || holdsTarget(src) {
			return
		}
		fwdEdits, err := modEdits("go.mod", src, goModSites(mf), fuzzRules(false), CatGoMod, newLineIndex(src))
		if err != nil {
			t.Fatalf("modEdits: %v", err)
		}
		fwd := splice(src, fwdEdits)
		mf2, err := modfile.Parse("go.mod", fwd, nil)
		if err != nil {
			t.Fatalf("renamed go.mod does not parse: %v\n%s", err, fwd)
		}
		backEdits, err := modEdits("go.mod", fwd, goModSites(mf2), fuzzRules(true), CatGoMod, newLineIndex(fwd))
		if err != nil {
			t.Fatalf("modEdits back: %v", err)
		}
		if back := splice(fwd, backEdits); !bytes.Equal(back, src) {
			t.Fatalf("round trip of\n%s\ngave\n%s", src, back)
		}
	})
}

// FuzzLineToken: any line and token number give a range inside the line
// or an error, never a panic.
func FuzzLineToken(f *testing.F) {
	f.Add([]byte("require \"x\\\"y\" v1 // c"), 1)
	f.Add([]byte("replace a => b"), 3)
	f.Add([]byte("`unterminated"), 0)
	f.Fuzz(func(t *testing.T, line []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		off, end, err := lineToken(line, 0, n)
		if err == nil && (off < 0 || off > end || end > len(line)) {
			t.Fatalf("lineToken(%q, %d) = %d, %d", line, n, off, end)
		}
	})
}
