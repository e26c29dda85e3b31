package figures

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
)

// figuresIn returns the figures of the first unit of src.
func figuresIn(src string) []string {
	f := markdown.Parse("x.md", []byte(src))
	var out []string
	for _, l := range flatten(f.Doc) {
		for _, u := range units(f, l) {
			for _, fig := range u.figures() {
				out = append(out, fig.Text)
			}
		}
	}
	return out
}

func TestFigures(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"per op and throughput always count", "It does 12 ns/op, 0 allocs/op and 130–175 MB/s; 2,000 files/s.\n", []string{"12 ns/op", "0 allocs/op", "130–175 MB/s", "2,000 files/s"}},
		{"speed-ups", "3× as many, 2x faster, 4 times slower, a 1.5 × gain.\n", []string{"3×", "2x faster", "4 times slower", "1.5 ×"}},
		{"a dimension is not a speed-up", "A 40×160 terminal, 80 × 24 too.\n", nil},
		{"a contract duration is not a figure", "Foreground timeout 120 s, capped at 600 s; grace 3 s; zero fields take the defaults (2 s).\n", nil},
		{"a measured duration is", "A warm run took 5.2 s, about 0.4–0.6 ms per call.\n", []string{"5.2 s", "0.4–0.6 ms"}},
		{"ranges with to", "It costs 6.7 to 7.1 ms.\n", []string{"6.7 to 7.1 ms"}},
		{"timed-out is not a measurement word", "A timed-out command waits 15 s.\n", nil},
		{"code is not read", "It costs `12 ms` here, and `go test` says 3 ns/op.\n", []string{"3 ns/op"}},
		{"versions and words are not numbers", "In v0.1 s3ms or foo2 ms, measured.\n", nil},
		{"a table row reads its header", "| benchmark | per call |\n|---|---|\n| `A` | 6.7 ms |\n| `B` | 2 MB/s |\n", []string{"6.7 ms", "2 MB/s"}},
		{"a contract table is not measured", "| field | default |\n|---|---|\n| timeout | 120 s |\n", nil},
		{"link text counts, the destination does not", "It costs [about 3 ms](x.md) and [y](12ns/op).\n", []string{"3 ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := figuresIn(tt.src)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("figures = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIsCommand(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"go test -bench . ./x", true},
		{"$ go run ./scripts/doc-sync", true},
		{"GOMAXPROCS=2 go test -run - -bench X", true},
		{"./test", true},
		{"/usr/bin/time -v make", true},
		{"scripts/bench/md-links.sh --fast", true},
		{"hyperfine 'dsh call'", true},
		{"go", false},
		{"bash", false},
		{"BenchmarkLocalRun/true", false},
		{"Options.Slack", false},
		{"echo hi", false},
		{"", false},
		{"A=1 B=2", false},
	}
	for _, tt := range tests {
		if got := IsCommand(tt.code); got != tt.want {
			t.Errorf("IsCommand(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
}

func TestCheckFindsWhereTheCommandIs(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // "LINE:COL figure"
	}{
		{"same paragraph", "It takes 3 ns/op (`go test -bench X`).\n", nil},
		{"no command", "# Speed\n\nIt does 3 ns/op.\n", []string{"3:9 3 ns/op"}},
		{"the paragraph before", "Run `go test -bench X`:\n\nIt does 3 ns/op.\n", nil},
		{"only the nearest paragraph before", "Run `go test -bench X`.\n\nSomething else.\n\nIt does 3 ns/op.\n", []string{"5:9 3 ns/op"}},
		{"a code block before", "```sh\ngo test -bench X\n```\n\nIt does 3 ns/op.\n", nil},
		{"a code block after", "It does 3 ns/op, with:\n\n```\n$ go test -bench X\n```\n", nil},
		{"a heading ends the search", "Run `go test -bench X`.\n\n## Results\n\nIt does 3 ns/op.\n", []string{"5:9 3 ns/op"}},
		{"a table row looks past the table", "Measured with `go test -bench . -count 3`:\n\n| benchmark | per call |\n|---|---|\n| `A` | 6.7 ms |\n", nil},
		{"a paragraph after a table looks past it", "With `go test -bench .`:\n\n| b | per op |\n|---|---|\n| `A` | 2 ns/op |\n\nSo about 2 ns/op.\n", nil},
		{"a row without a command anywhere", "| benchmark | per call |\n|---|---|\n| `A` | 6.7 ms |\n", []string{"3:9 6.7 ms"}},
		{"a list item looks at the item before", "- first `go test -bench X` gives 3 ns/op\n- second gives 4 ns/op\n", nil},
		{"a list without a command", "Results:\n\n- one gives 3 ns/op\n", []string{"3:13 3 ns/op"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found, _ := Check(markdown.Parse("x.md", []byte(tt.src)))
			var got []string
			for _, f := range found {
				fig := strings.Split(f.Message, `"`)[1]
				got = append(got, fmt.Sprintf("%d:%d %s", f.Line, f.Col, fig))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("findings = %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzCheck checks that any Markdown is read without a panic and that
// every figure is reported inside the file, on text that holds it.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"It took 3 s (`go test`).\n",
		"| a | b |\n|---|---|\n| 1 ns/op | 2× |\n",
		"- 3 MB/s\n  > 4 ns/op\n",
		"[5 ms](x) `6 ms` <b>7 ms</b> 8\u00a0ms measured\n",
		"a  \nb 2 ms warm\\\nc\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file := markdown.Parse("f.md", src)
		found, n := Check(file)
		if len(found) > n {
			t.Fatalf("%d findings for %d figures", len(found), n)
		}
		for _, fd := range found {
			if fd.Line < 1 || fd.Line > file.Lines() || fd.Col < 1 {
				t.Fatalf("finding outside the file: %v", fd)
			}
		}
	})
}
