package mdgo

import (
	"bytes"
	"testing"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
)

func TestExtract(t *testing.T) {
	type pos struct{ line, col, wantLine, wantCol int }
	tests := []struct {
		name    string
		src     string
		want    []string // the code of each go block
		program []bool
		fence   []int // the line of each opening fence
		pos     []pos // Position checks on the first block
	}{
		{
			name:    "a program and a fragment",
			src:     "# T\n\n```go\npackage main\n\nfunc main() {}\n```\n\n```go\nx := 1\n```\n",
			want:    []string{"package main\n\nfunc main() {}\n", "x := 1\n"},
			program: []bool{true, false},
			fence:   []int{3, 9},
			pos:     []pos{{1, 1, 4, 1}, {3, 6, 6, 6}, {9, 1, 3, 1}, {0, 4, 3, 1}},
		},
		{
			name:    "comments and build constraints come before the package clause",
			src:     "```go\n//go:build linux\n\n/* doc */\n// Package p.\npackage p\n```\n",
			want:    []string{"//go:build linux\n\n/* doc */\n// Package p.\npackage p\n"},
			program: []bool{true},
			fence:   []int{1},
		},
		{
			name:    "only the go language counts",
			src:     "```golang\npackage a\n```\n```sh\npackage b\n```\n```go catalog\ntype X int\n```\n    package c\n",
			want:    []string{"type X int\n"},
			program: []bool{false},
			fence:   []int{7},
		},
		{
			name:    "in a list item the container's indentation is not code",
			src:     "- item\n\n  ```go\n  package main\n\n  func main() {\n  \tx()\n  }\n  ```\n",
			want:    []string{"package main\n\nfunc main() {\n\tx()\n}\n"},
			program: []bool{true},
			fence:   []int{3},
			pos:     []pos{{4, 2, 7, 4}, {1, 9, 4, 11}},
		},
		{
			name:    "in a blockquote",
			src:     "> ```go\n> package q\n> ```\n",
			want:    []string{"package q\n"},
			program: []bool{true},
			fence:   []int{1},
			pos:     []pos{{1, 9, 2, 11}},
		},
		{
			name:    "an unclosed fence runs to the end",
			src:     "```go\npackage main\n",
			want:    []string{"package main\n"},
			program: []bool{true},
			fence:   []int{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks := Extract(markdown.Parse("README.md", []byte(tt.src)))
			if len(blocks) != len(tt.want) {
				t.Fatalf("got %d blocks, want %d", len(blocks), len(tt.want))
			}
			for i, b := range blocks {
				if string(b.Code) != tt.want[i] || b.Program() != tt.program[i] || b.Line != tt.fence[i] || b.Path != "README.md" {
					t.Errorf("block %d = %q program=%v line=%d path=%s; want %q program=%v line=%d", i, b.Code, b.Program(), b.Line, b.Path, tt.want[i], tt.program[i], tt.fence[i])
				}
			}
			for _, p := range tt.pos {
				if l, c := blocks[0].Position(p.line, p.col); l != p.wantLine || c != p.wantCol {
					t.Errorf("Position(%d, %d) = %d:%d, want %d:%d", p.line, p.col, l, c, p.wantLine, p.wantCol)
				}
			}
		})
	}
}

// FuzzExtract checks that any Markdown gives blocks whose code has one
// line per recorded start, and whose positions all fall inside the file.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"```go\npackage main\n```\n",
		"- a\n\n  ```go\n  \tpackage x\n  ```\n",
		"> ```go\n> x\n",
		"~~~go\n\tpackage\tmain\n~~~\n",
		"```go\n```\n",
		"1. ```go\n   package p\n   ```\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file := markdown.Parse("f.md", src)
		for _, b := range Extract(file) {
			b.Program()
			if n := bytes.Count(b.Code, []byte("\n")); n != len(b.starts) && n+1 != len(b.starts) {
				t.Fatalf("code %q has %d newlines for %d lines", b.Code, n, len(b.starts))
			}
			if b.Line < 1 || b.Line > file.Lines() {
				t.Fatalf("fence line %d outside 1..%d", b.Line, file.Lines())
			}
			for l := 0; l <= len(b.starts)+1; l++ {
				for _, c := range []int{0, 1, 5, 1000} {
					line, col := b.Position(l, c)
					if line < 1 || line > file.Lines() || col < 1 {
						t.Fatalf("Position(%d, %d) = %d:%d outside the file (%d lines)", l, c, line, col, file.Lines())
					}
				}
			}
		}
	})
}
