package rootpath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	base := t.TempDir()
	// base/real is the repository; base/link -> real names it through a
	// link, so the root itself is resolved too.
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(base, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(base, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("real/docs")
	mk("outside")
	if err := os.WriteFile(filepath.Join(base, "real/docs/a.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ln("real", "link")
	ln("docs", "real/in")                                   // stays inside
	ln("../outside", "real/out")                            // relative, leaves
	ln(filepath.Join(base, "outside"), "real/abs")          // absolute, leaves
	ln(filepath.Join(base, "real/docs/a.md"), "real/absin") // absolute, stays inside
	ln("missing", "real/dangling")
	ln("..", "real/up")

	for _, root := range []string{filepath.Join(base, "real"), filepath.Join(base, "link")} {
		for _, tc := range []struct {
			rel     string
			inside  bool
			missing bool
		}{
			{".", true, false},
			{"docs/a.md", true, false},
			{"in/a.md", true, false},
			{"in", true, false},
			{"absin", true, false},
			{"out", false, false},
			{"abs", false, false},
			{"up", false, false},
			{"in/../out", false, false},
			{"dangling", false, true},
			{"docs/none.md", false, true},
		} {
			_, inside, err := Resolve(root, tc.rel)
			if inside != tc.inside || errors.Is(err, fs.ErrNotExist) != tc.missing || (err != nil) != tc.missing {
				t.Errorf("Resolve(%s, %q) = inside %v, err %v; want inside %v, missing %v", root, tc.rel, inside, err, tc.inside, tc.missing)
			}
		}
	}
}

func TestResolveExisting(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	for _, d := range []string{"repo/docs", "outside/sub"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "outside/file.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for target, link := range map[string]string{
		"../../outside":         "repo/docs/link",
		"../../outside/file.md": "repo/docs/stolen.md",
		"../../outside/nothing": "repo/docs/dangling.md",
		"../docs":               "repo/docs/in",
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		rel, existing string
		inside        bool
	}{
		{"docs/catalog.md", "docs", true},
		{"docs/new/deeper/catalog.md", "docs", true},
		{"docs/in/new/catalog.md", "docs/in", true},
		{"docs/link/out.md", "docs/link", false},
		{"docs/link/sub/new/out.md", "docs/link/sub", false},
		{"docs/stolen.md", "docs/stolen.md", false},
		{"docs/dangling.md", "docs", true}, // a write replaces the link itself

		{"new/catalog.md", ".", true},
	} {
		existing, inside, err := ResolveExisting(root, tc.rel)
		if err != nil || existing != tc.existing || inside != tc.inside {
			t.Errorf("ResolveExisting(%q) = %q, %v, %v; want %q, %v", tc.rel, existing, inside, err, tc.existing, tc.inside)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		dir, p string
		want   bool
	}{
		{"/r", "/r", true},
		{"/r", "/r/a", true},
		{"/r", "/r/../r/a", true},
		{"/r", "/rx", false},
		{"/r", "/", false},
		{"/r", "/r/..x", true},
		{"/r/a", "/r", false},
	} {
		if got := Within(tc.dir, filepath.Clean(tc.p)); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.dir, tc.p, got, tc.want)
		}
	}
}
