package rescope

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// benchTree writes a workspace with one fork and n Go files and n/4
// Markdown files that name it, the shape of a mid-sized repository.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	ar := txtar.Parse([]byte(tree))
	for i := range n {
		ar.Files = append(ar.Files, txtar.File{
			Name: fmt.Sprintf("app/p%d/p.go", i),
			Data: fmt.Appendf(nil, "package p%d\n\nimport (\n\t\"example.com/app/util\"\n\t\"github.com/up/lib\"\n\t\"github.com/up/lib/sub\"\n)\n\n// N is a value.\nconst N = %d\n\nvar _ = lib.X + sub.Y + util.Z\n", i, i),
		})
		if i%4 == 0 {
			ar.Files = append(ar.Files, txtar.File{
				Name: fmt.Sprintf("docs/d%d.md", i),
				Data: []byte("# Doc\n\nUse github.com/up/lib here, not github.com/up/library.\n\n```go\nimport \"github.com/up/lib/sub\"\n```\n"),
			})
		}
	}
	return writeArchive(b, ar)
}

// BenchmarkPlan plans the rename of a 1,000-file tree (nothing is
// written). Compare with BenchmarkListAndRead, the floor: listing and
// reading the same files.
func BenchmarkPlan(b *testing.B) {
	root := benchTree(b, 1000)
	b.ResetTimer()
	for b.Loop() {
		if p := NewPlan(root, false); len(p.Problems) > 0 || len(p.Files) < 1000 {
			b.Fatalf("plan: %d files, %v", len(p.Files), p.Problems)
		}
	}
}

func BenchmarkListAndRead(b *testing.B) {
	root := benchTree(b, 1000)
	b.ResetTimer()
	for b.Loop() {
		files, err := listFiles(root)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			if _, err := os.ReadFile(filepath.Join(root, f)); err != nil {
				b.Fatal(err)
			}
		}
	}
}
