package markdown

import (
	"fmt"
	"strings"
	"testing"
)

// defBlock returns n link reference definitions in one block, one a line,
// as a generated link index would have them.
func defBlock(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "[ref-%06d]: target.md\n", i)
	}
	return []byte(b.String())
}

// prose returns about size bytes of ordinary Markdown: sections of
// one-line paragraphs with inline links, a list and a code fence.
func prose(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "## Section %d\n\n", i)
		fmt.Fprintf(&b, "A paragraph that links to [the guide](docs/guide-%d.md#setup) and to [another page](../other.md), with `code` and *emphasis*.\n\n", i)
		b.WriteString("- an item with [a link](a.md)\n- another item\n\n")
		b.WriteString("```go\nfunc main() {}\n```\n\n")
	}
	return []byte(b.String())
}

// BenchmarkParse parses a file of n reference definitions in one block
// beside a file of ordinary Markdown of the same size. The reference
// definitions were quadratic in goldmark (see refdefs.go).
//
//	go test -run X -bench Parse ./internal/markdown
func BenchmarkParse(b *testing.B) {
	for _, n := range []int{20_000, 200_000} {
		defs := defBlock(n)
		for _, c := range []struct {
			name string
			src  []byte
		}{
			{fmt.Sprintf("refdefs-%d", n), defs},
			{fmt.Sprintf("prose-%dMB", len(defs)>>20), prose(len(defs))},
		} {
			b.Run(c.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.src)))
				for b.Loop() {
					Parse("bench.md", c.src)
				}
			})
		}
	}
}
