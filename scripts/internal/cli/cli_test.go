package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindRootAndRelPaths(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := FindRoot(deep); err == nil || !strings.Contains(err.Error(), "no go.work found") {
		t.Errorf("FindRoot without go.work: err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := FindRoot(deep)
	if err != nil || got != root {
		t.Errorf("FindRoot(%s) = %q, %v; want %q", deep, got, err, root)
	}
	t.Chdir(deep)
	rels, err := RelPaths(root, []string{"x.md", "..", filepath.Join(root, "c", "d.md")})
	if err != nil || strings.Join(rels, " ") != "a/b/x.md a c/d.md" {
		t.Errorf("RelPaths = %q, %v", rels, err)
	}
	if _, err := RelPaths(root, []string{"../../.."}); err == nil || !strings.Contains(err.Error(), "outside the root") {
		t.Errorf("RelPaths outside the root: err = %v", err)
	}
	if _, err := ResolveRoot(filepath.Join(root, "go.work")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("ResolveRoot(file): err = %v", err)
	}
}
