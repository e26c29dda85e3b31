package mdfiles

import "testing"

func TestSkipped(t *testing.T) {
	tests := map[string]bool{
		"README.md":                    false,
		"docs/testdata.md":             false,
		"scripts/testdata/script/x.md": true,
		"node_modules/pkg/README.md":   true,
		"a/node_modules/b/c.md":        true,
		".git/x.md":                    true,
		"docs/testdata-notes/x.md":     false,
		"vendor/fork/README.md":        false,
	}
	for rel, want := range tests {
		if got := Skipped(rel); got != want {
			t.Errorf("Skipped(%q) = %v, want %v", rel, got, want)
		}
	}
}
