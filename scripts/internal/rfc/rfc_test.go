package rfc

import "testing"

func TestValidName(t *testing.T) {
	tests := map[string]bool{
		"2026-12-02-workspace-layout.md": true,
		"2026-12-02-x.md":                true,
		"2026-12-02-v2-plan.md":          true,
		"2026-02-29-leap.md":             false, // 2026 is not a leap year
		"2028-02-29-leap.md":             true,
		"2026-13-01-x.md":                false,
		"2026-12-02.md":                  false,
		"2026-12-02-Upper.md":            false,
		"2026-12-02-a--b.md":             false,
		"2026-12-02-a_b.md":              false,
		"26-12-02-x.md":                  false,
		"2026-12-02-x.markdown":          false,
	}
	for name, want := range tests {
		if got := validName(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}
