package markdown

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

func walkHTML(f *File, fn func(Tag)) {
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			for _, t := range HTMLTags(n, f.Src) {
				fn(t)
			}
		}
		return ast.WalkContinue, nil
	})
}

func TestPosition(t *testing.T) {
	f := Parse("x.md", []byte("ab\ncd\r\n\nxyz"))
	tests := []struct{ off, line, col int }{
		{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {4, 2, 2}, {7, 3, 1}, {8, 4, 1}, {10, 4, 3}, {11, 4, 4}, {-5, 1, 1}, {99, 4, 4},
	}
	for _, tt := range tests {
		if l, c := f.Position(tt.off); l != tt.line || c != tt.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tt.off, l, c, tt.line, tt.col)
		}
	}
	if got := string(f.Line(2)); got != "cd" {
		t.Errorf("Line(2) = %q, want %q (CR dropped)", got, "cd")
	}
	if f.Line(0) != nil || f.Line(5) != nil {
		t.Errorf("Line out of range should be nil")
	}
	if f.Lines() != 4 {
		t.Errorf("Lines() = %d, want 4", f.Lines())
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.md", []byte("# fine\n"))
	write("bin.md", []byte("# x\nab\x00cd"))
	write("latin1.md", []byte("# ok\ncaf\xe9\n"))
	if err := os.Mkdir(filepath.Join(dir, "dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop.md", filepath.Join(dir, "loop.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, file  string
		wantSrc     bool
		wantFinding string // "" for none
		wantErr     string // "" for none
	}{
		{"text", "ok.md", true, "", ""},
		{"binary is a finding, not parsed", "bin.md", false, "bin.md:2:3: binary file (NUL byte); not checked", ""},
		{"invalid UTF-8 is a finding, still parsed", "latin1.md", true, "latin1.md:2:4: invalid UTF-8 (byte 0xe9)", ""},
		{"missing file is an error naming it", "nope.md", false, "", "nope.md: stat: no such file or directory"},
		{"directory is an error", "dir.md", false, "", "dir.md: is a directory"},
		{"symlink loop is an error", "loop.md", false, "", "loop.md: stat: too many levels of symbolic links"},
		{"fifo is an error, not a hang", "fifo.md", false, "", "fifo.md: not a regular file (p---------)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, fds, err := Read(dir, tt.file)
			if (src != nil) != tt.wantSrc {
				t.Errorf("src returned = %v, want %v", src != nil, tt.wantSrc)
			}
			var got []string
			for _, f := range fds {
				got = append(got, f.String())
			}
			if strings.Join(got, "\n") != tt.wantFinding {
				t.Errorf("findings = %q, want %q", got, tt.wantFinding)
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("err = %q, want %q", gotErr, tt.wantErr)
			}
		})
	}
}

func TestReadTooLarge(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "huge.md")
	fh, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: big on paper, cheap on disk.
	if err := fh.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	src, fds, err := Read(dir, "huge.md")
	if err != nil || src != nil || len(fds) != 1 || !strings.Contains(fds[0].Message, "over the") {
		t.Fatalf("Read(huge) = %v bytes, %v, %v; want one 'over the limit' finding", len(src), fds, err)
	}
}

func TestUnclosed(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"closed fence", "```go\nx\n```\n", nil},
		{"closed fence, longer closer", "````\nx\n``````\n", nil},
		{"empty closed fence", "```\n```\n", nil},
		{"unclosed at end of file", "text\n\n```go\nx\n", []string{"x.md:3:1: code fence is never closed; the rest of its block renders as code"}},
		{"shorter closer does not close", "````\nx\n```\n", []string{"x.md:1:1: code fence is never closed; the rest of its block renders as code"}},
		{"tilde fence not closed by backticks", "~~~\nx\n```\n", []string{"x.md:1:1: code fence is never closed; the rest of its block renders as code"}},
		{"closed in blockquote", "> ```\n> x\n> ```\n", nil},
		{"blockquote ends first", "> ```\n> x\n\nafter\n", []string{"x.md:1:3: code fence is never closed; the rest of its block renders as code"}},
		{"closed in list item", "- item\n  ```\n  x\n  ```\n", nil},
		{"closed comment", "<!--\nx\n-->\n", nil},
		{"one-line comment", "<!-- x -->\n", nil},
		{"unclosed comment", "a\n\n<!--\nx\n", []string{"x.md:3:1: HTML block is never closed (no -->); the rest of its block is raw HTML"}},
		{"unclosed pre", "<pre>\nx\n", []string{"x.md:1:1: HTML block is never closed (no </pre>); the rest of its block is raw HTML"}},
		{"div ends at blank line", "<div>\nx\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range Unclosed(Parse("x.md", []byte(tt.src))) {
				got = append(got, f.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Unclosed(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

// TestTaskListMarker checks GitHub's rule for a task list marker: "[ ]",
// "[x]" or "[X]" opening a list item is a checkbox only when whitespace or
// the end of the line follows; "[x](a.md)" is a link.
func TestTaskListMarker(t *testing.T) {
	for _, tc := range []struct {
		src             string
		checkbox, links int
	}{
		{"- [ ] todo\n", 1, 0},
		{"- [x] done\n", 1, 0},
		{"- [X]\ttab\n", 1, 0},
		{"- [x]\n", 1, 0},
		{"- [x]", 1, 0},
		{"1. [ ] ordered\n", 1, 0},
		{"- [x] done [a](a.md)\n", 1, 1},
		{"- [x](a.md)\n", 0, 1},
		{"- [ ](a.md)\n", 0, 1},
		{"- [X](a.md) more\n", 0, 1},
		{"[x](a.md) outside a list\n", 0, 1},
		{"- text [x] later\n", 0, 0},
	} {
		f := Parse("t.md", []byte(tc.src))
		var boxes, links int
		_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if entering {
				switch n.(type) {
				case *east.TaskCheckBox:
					boxes++
				case *ast.Link:
					links++
				}
			}
			return ast.WalkContinue, nil
		})
		if boxes != tc.checkbox || links != tc.links {
			t.Errorf("%q: %d checkbox(es) and %d link(s), want %d and %d", tc.src, boxes, links, tc.checkbox, tc.links)
		}
	}
}
