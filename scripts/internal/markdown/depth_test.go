package markdown

import (
	"strings"
	"testing"
)

// TestDepthBounded parses generated files that nest too deeply and
// asserts the finding and its line; their neighbours at the bound pass.
func TestDepthBounded(t *testing.T) {
	var nested strings.Builder
	for i := range 200 {
		nested.WriteString(strings.Repeat("  ", i) + "- a\n")
	}
	tests := []struct {
		name string
		src  string
		line int // 0: no finding
	}{
		{"nested list items", nested.String(), MaxDepth + 1},
		{"one line of list markers", strings.Repeat("- ", 500000) + "x\n", 1},
		{"nested quotes", "a\n\n" + strings.Repeat(">", 100000) + " q\n", 3},
		{"quotes at the bound", strings.Repeat("> ", MaxDepth) + "q\n", 0},
		{"list markers at the bound", strings.Repeat("- ", MaxDepth) + "x\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Parse("deep.md", []byte(tt.src))
			switch {
			case tt.line == 0 && f.Incomplete != nil:
				t.Errorf("unexpected finding %v", f.Incomplete)
			case tt.line != 0 && (f.Incomplete == nil || f.Incomplete.Line != tt.line || !strings.Contains(f.Incomplete.Message, "nest more than")):
				t.Errorf("finding %v, want one on line %d", f.Incomplete, tt.line)
			}
		})
	}
}
