package rescope

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripts/internal/manifest"
	"github.com/rogpeppe/go-internal/txtar"
	"go.uber.org/goleak"
)

// extract writes the files of the txtar archive at name into a new
// temporary directory and returns it.
func extract(t testing.TB, name string) string {
	t.Helper()
	ar, err := txtar.ParseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return writeArchive(t, ar)
}

func writeArchive(t testing.TB, ar *txtar.Archive) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// snapshot returns every file under dir by slash path.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func apply(t *testing.T, root string, reverse bool) *Plan {
	t.Helper()
	p := NewPlan(root, reverse)
	if len(p.Problems) > 0 {
		t.Fatalf("problems: %v", p.Problems)
	}
	if _, err := Apply(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTreeRoundTrip(t *testing.T) {
	root := extract(t, "testdata/roundtrip.txtar")
	before := snapshot(t, root)
	p := apply(t, root, false)

	after := snapshot(t, root)
	changed := map[string]bool{}
	for _, f := range p.Files {
		changed[f.Path] = true
	}
	for name, content := range before {
		if (after[name] != content) != changed[name] {
			t.Errorf("%s: changed on disk = %v, in the plan = %v", name, after[name] != content, changed[name])
		}
	}
	for _, name := range []string{"vendor/README.md", "vendor/lib/README.md", "vendor/lib/LICENSE", "vendor/lib/sub/README.md", "app/go.sum", "app/testdata/fixture.go", "docs/rfc/implemented/2026-01-01-fork.md"} {
		if changed[name] {
			t.Errorf("%s was rewritten; it must be left alone", name)
		}
	}
	wantFragments := map[string][]string{
		"go.work":               {"replace example.com/dsh/lib v1.0.0 => ./vendor/lib"},
		"vendor/lib/go.mod":     {"module example.com/dsh/lib\n"},
		"vendor/lib/sub/go.mod": {`module "example.com/dsh/libsub"`},
		"vendor/lib/lib.go":     {`package lib // import "example.com/dsh/lib"`, "// Package lib is github.com/up/lib.", "\"example.com/dsh/lib/internal/x\"\n\t\"example.com/dsh/libsub\"\n", "`example.com/dsh/lib`"},
		"app/go.mod": {
			"\texample.com/dsh/lib v1.2.3 // the fork\n", "\texample.com/dsh/libsub v1.2.3\n", "\tgithub.com/up/library v1.0.0\n",
			"exclude example.com/dsh/lib v1.0.0", "tool example.com/dsh/lib/cmd/gen",
			"example.com/other v1.0.0 => example.com/dsh/lib/other v1.2.3", "example.com/dsh/lib => ../vendor/lib",
			"example.com/dsh/libsub => ../third_party/github.com/up/lib/sub",
		},
		"app/app.go": {
			"import (\n\t\"example.com/dsh/app/util\"\n\t\"example.com/dsh/lib\"\n\tl2 \"example.com/dsh/lib/internal/x\"\n\t\"example.com/dsh/libsub\"\n\t\"github.com/up/library\"\n)",
			`"example.com/dsh/lib", "example.com/dsh/libsub/deep", "github.com/up/library", "x github.com/up/lib"`,
		},
		"README.md":     {"A fork of github.com/up/lib lives in vendor/.", "import \"example.com/dsh/libsub\"", "    go get example.com/dsh/lib@v1.2.3"},
		"docs/guide.md": {"Use example.com/dsh/lib, or `example.com/dsh/libsub` for the rest; not github.com/up/library, nor https://github.com/up/lib.", "- In a list: example.com/dsh/libsub.", "go get example.com/dsh/libsub@latest"},
	}
	for name, frags := range wantFragments {
		for _, frag := range frags {
			if !strings.Contains(after[name], frag) {
				t.Errorf("%s after the rename lacks %q:\n%s", name, frag, after[name])
			}
		}
	}

	if again := NewPlan(root, false); len(again.Files) > 0 || len(again.Problems) > 0 {
		t.Errorf("a second plan is not empty: %+v, %v", again.Files, again.Problems)
	}

	apply(t, root, true)
	restored := snapshot(t, root)
	for name, content := range before {
		if restored[name] != content {
			t.Errorf("%s not restored:\n%s\nwant:\n%s", name, restored[name], content)
		}
	}
	if len(restored) != len(before) {
		t.Errorf("%d files after the round trip, want %d (a temporary file left behind?)", len(restored), len(before))
	}
}

func TestRulesMap(t *testing.T) {
	m := &manifest.Manifest{Forks: []manifest.Fork{
		{Upstream: "x.org/a", Module: "y.org/a"},
		{Upstream: "x.org/a/sub", Module: "y.org/asub"},
	}}
	rules := NewRules(m, false)
	tests := []struct{ in, want string }{
		{"x.org/a", "y.org/a"},
		{"x.org/a/pkg", "y.org/a/pkg"},
		{"x.org/a/sub", "y.org/asub"},
		{"x.org/a/sub/pkg", "y.org/asub/pkg"},
		{"x.org/a/subway", "y.org/a/subway"},
		{"x.org/ab", "x.org/ab"},
		{"x.org", "x.org"},
	}
	for _, tt := range tests {
		if got, _, _ := rules.Map(tt.in); got != tt.want {
			t.Errorf("Map(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	back := NewRules(m, true)
	if got, _, _ := back.Map("y.org/asub/pkg"); got != "x.org/a/sub/pkg" {
		t.Errorf("reverse Map = %q", got)
	}
}

func testRules() Rules {
	return NewRules(&manifest.Manifest{Forks: []manifest.Fork{
		{Upstream: "x.org/a", Module: "y.org/a"},
		{Upstream: "x.org/a/sub", Module: "y.org/asub"},
	}}, false)
}

func TestTextMatches(t *testing.T) {
	tests := []struct {
		text string
		want []string // matched From paths, in order
	}{
		{"x.org/a", []string{"x.org/a"}},
		{"use x.org/a/sub/pkg and x.org/a.", []string{"x.org/a/sub", "x.org/a"}},
		{"x.org/ab x.org/a-b x.org/a_b x.org/a.b", nil},
		{"https://x.org/a //x.org/a www.x.org/a", nil},
		{"(x.org/a) `x.org/a` \"x.org/a\" <x.org/a> x.org/a@v1 x.org/a:1 x.org/a,", []string{"x.org/a", "x.org/a", "x.org/a", "x.org/a", "x.org/a", "x.org/a", "x.org/a"}},
		{"x.org/a/", []string{"x.org/a"}},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, m := range textMatches([]byte(tt.text), 0, len(tt.text), testRules()) {
			got = append(got, m.r.From)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("textMatches(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestQuotedEdits(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{`"x.org/a"`, `"y.org/a"`},
		{"`x.org/a/sub/p`", "`y.org/asub/p`"},
		{`'x.org/a'`, `'y.org/a'`},
		{`"x.org/a" + "x.org/a/b"`, `"y.org/a" + "y.org/a/b"`},
		{`"x.org/ab" "x.org/a.b" "x.org/a-b" "x.org/a b" "x.org/a'`, `"x.org/ab" "x.org/a.b" "x.org/a-b" "x.org/a b" "x.org/a'`},
		{`"see x.org/a" x.org/a "x.org/a@v1"`, `"see x.org/a" x.org/a "x.org/a@v1"`},
		{`"x.org/a\n"`, `"x.org/a\n"`},
		{`""x.org/a"`, `""y.org/a"`},
	}
	for _, tt := range tests {
		src := []byte(tt.src)
		got := splice(src, quotedEdits("f.go", src, testRules(), nil, newLineIndex(src)))
		if string(got) != tt.want {
			t.Errorf("quotedEdits(%s) = %s, want %s", tt.src, got, tt.want)
		}
	}
}

func TestLineToken(t *testing.T) {
	tests := []struct {
		line string
		n    int
		want string
		err  bool
	}{
		{"require x.org/a v1.0.0", 1, "x.org/a", false},
		{"\tx.org/a v1.0.0 // indirect", 0, "x.org/a", false},
		{`require "x.org/a" v1.0.0`, 1, `"x.org/a"`, false},
		{`require "x \"q\"" v1`, 1, `"x \"q\""`, false},
		{"replace a => b v1", 3, "b", false},
		{"replace a => ../b//c", 3, "../b", false},
		{"module a", 2, "", true},
		{"module a // c", 2, "", true},
		{`module "a`, 1, "", true},
		{"require (", 1, "(", false},
	}
	for _, tt := range tests {
		off, end, err := lineToken([]byte(tt.line), 0, tt.n)
		if (err != nil) != tt.err {
			t.Errorf("lineToken(%q, %d) error = %v, want error %v", tt.line, tt.n, err, tt.err)
			continue
		}
		if err == nil && tt.line[off:end] != tt.want {
			t.Errorf("lineToken(%q, %d) = %q, want %q", tt.line, tt.n, tt.line[off:end], tt.want)
		}
	}
}

// tree is a small workspace with one fork, for the exit-code tests.
const tree = `-- go.work --
go 1.26.0

use (
	./app
	./vendor/lib
)
-- vendor/README.md --
## Manifest

| Directory | Module | Upstream module | Version | Upstream repository | Commit | License |
|---|---|---|---|---|---|---|
| ` + "`vendor/lib/`" + ` | example.com/dsh/lib | github.com/up/lib | v1.2.3 | https://github.com/up/lib | 0123abc | MIT |
-- vendor/lib/go.mod --
module github.com/up/lib
-- app/go.mod --
module example.com/app
-- app/app.go --
package app

import "github.com/up/lib"
`

func TestMainExitCodes(t *testing.T) {
	tests := []struct {
		name  string
		extra string // txtar files added to the tree
		args  []string
		want  int
	}{
		{"dry run", "", nil, 0},
		{"check with residue", "", []string{"-check"}, 1},
		{"apply", "", []string{"-apply"}, 0},
		{"reverse check of an upstream tree", "", []string{"-reverse", "-check"}, 0},
		{"apply and check together", "", []string{"-apply", "-check"}, 2},
		{"unknown flag", "", []string{"-force"}, 2},
		{"extra argument", "", []string{"x"}, 2},
		{"bad go.mod", "-- other/go.mod --\nmodule\n", []string{"-check"}, 2},
		{"Go file that does not parse", "-- app/bad.go --\npackage app\nimport \"github.com/up/lib\"\n{\n", []string{"-apply"}, 2},
		{"stray fork", "-- vendor/other/go.mod --\nmodule x.org/o\n", nil, 2},
		{"bad manifest", "-- vendor/README.md --\n## Manifest\n\n| Directory |\n|---|\n", []string{"-check"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ar := txtar.Parse([]byte(tree))
			extra := txtar.Parse([]byte(tt.extra))
			for _, f := range extra.Files {
				replaced := false
				for i := range ar.Files {
					if ar.Files[i].Name == f.Name {
						ar.Files[i] = f
						replaced = true
					}
				}
				if !replaced {
					ar.Files = append(ar.Files, f)
				}
			}
			root := writeArchive(t, ar)
			before := snapshot(t, root)
			var stdout, stderr bytes.Buffer
			got := Main(append([]string{"-root", root}, tt.args...), &stdout, &stderr)
			if got != tt.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, &stdout, &stderr)
			}
			if tt.want != 0 {
				if after := snapshot(t, root); !equalMaps(before, after) {
					t.Errorf("files changed although the run failed")
				}
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

func TestApplyRefusesAChangedFile(t *testing.T) {
	root := writeArchive(t, txtar.Parse([]byte(tree)))
	p := NewPlan(root, false)
	if len(p.Files) != 2 {
		t.Fatalf("plan has %d files, want 2", len(p.Files))
	}
	// Another writer touches one file after the plan was made.
	if err := os.WriteFile(filepath.Join(root, "app", "app.go"), []byte("package app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	if _, err := Apply(p); err == nil || !strings.Contains(err.Error(), "app/app.go: changed on disk while planning; nothing was written") {
		t.Fatalf("Apply = %v", err)
	}
	if after := snapshot(t, root); !equalMaps(before, after) {
		t.Error("Apply wrote although a file had changed")
	}
}

func TestApplyRestoresOnWriteFailure(t *testing.T) {
	root := writeArchive(t, txtar.Parse([]byte(tree)))
	before := snapshot(t, root)
	p := NewPlan(root, false)
	if len(p.Files) != 2 {
		t.Fatalf("plan has %d files, want 2", len(p.Files))
	}
	// The process runs as root in CI, where permissions cannot make a
	// write fail; fail the second write through the seam instead.
	real := writeFileFn
	t.Cleanup(func() { writeFileFn = real })
	calls := 0
	writeFileFn = func(root, rel string, data []byte, mode os.FileMode) error {
		calls++
		if calls == 2 {
			return errors.New("disk full")
		}
		return real(root, rel, data, mode)
	}
	_, err := Apply(p)
	if err == nil || !strings.Contains(err.Error(), "disk full; 1 file(s) written before it were restored") {
		t.Fatalf("Apply = %v", err)
	}
	if after := snapshot(t, root); !equalMaps(before, after) {
		t.Errorf("files not restored after a failed write")
	}
}

func TestApplyKeepsMode(t *testing.T) {
	root := writeArchive(t, txtar.Parse([]byte(tree)))
	name := filepath.Join(root, "app", "app.go")
	if err := os.Chmod(name, 0o600); err != nil {
		t.Fatal(err)
	}
	apply(t, root, false)
	st, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode after apply = %v, want 0600", st.Mode().Perm())
	}
}

func TestOversizeFileIsAProblem(t *testing.T) {
	root := writeArchive(t, txtar.Parse([]byte(tree)))
	before := snapshot(t, root)
	big, err := os.Create(filepath.Join(root, "app", "big.go"))
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: over the limit without writing 32 MiB.
	if err := big.Truncate(maxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	p := NewPlan(root, false)
	if len(p.Problems) != 1 || p.Problems[0].String() != "app/big.go: cannot read: file is over the 32 MiB limit" {
		t.Fatalf("problems = %v", p.Problems)
	}
	if _, err := Apply(p); !errors.Is(err, ErrProblems) {
		t.Fatalf("Apply = %v, want ErrProblems", err)
	}
	after := snapshot(t, root)
	delete(after, "app/big.go")
	if !equalMaps(before, after) {
		t.Error("files changed although the plan had a problem")
	}
}

// TestSymlinkIsAProblemNeverFollowed checks that a Go file that is a
// symbolic link stops the rename with a problem naming it (so -check
// cannot report "no residue" past it) and that nothing is written through
// it.
func TestSymlinkIsAProblemNeverFollowed(t *testing.T) {
	root := writeArchive(t, txtar.Parse([]byte(tree)))
	outside := filepath.Join(t.TempDir(), "outside.go")
	src := "package x\n\nimport \"github.com/up/lib\"\n"
	if err := os.WriteFile(outside, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "app", "link.go")); err != nil {
		t.Fatal(err)
	}
	p := NewPlan(root, false)
	want := "app/link.go: is a symbolic link; rescope-vendor never follows one, so what it points to is not checked: make it a regular file"
	if len(p.Problems) != 1 || p.Problems[0].String() != want {
		t.Errorf("problems = %v, want [%s]", p.Problems, want)
	}
	if _, err := Apply(p); !errors.Is(err, ErrProblems) {
		t.Errorf("Apply = %v, want ErrProblems", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != src {
		t.Errorf("a file outside the root was rewritten through a symlink:\n%s", b)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
