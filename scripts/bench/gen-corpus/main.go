// Command gen-corpus writes the synthetic documentation tree used by
// BenchmarkVerifyLinks and scripts/bench/md-links.sh: about 2,000 Markdown
// files (13 MB) in English and Chinese, with 14,000 relative links.
//
// Usage:
//
//	go run ./scripts/bench/gen-corpus -o DIR [-faults N] [-expect FILE]
//
// With -faults it plants N broken links (half missing files, half missing
// anchors) and, with -expect, writes their "PATH:LINE" list, sorted, to
// FILE. DIR must not exist yet.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/dsh-go/dsh/scripts/internal/corpus"
)

func main() {
	out := flag.String("o", "", "directory to create (required)")
	faults := flag.Int("faults", 0, "broken links to plant")
	expect := flag.String("expect", "", "file to write the planted faults to, one PATH:LINE per line")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.Mkdir(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen-corpus:", err)
		os.Exit(2)
	}
	opt := corpus.Default
	opt.Faults = *faults
	st, err := corpus.Generate(*out, opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-corpus:", err)
		os.Exit(2)
	}
	if *expect != "" {
		var lines []string
		for _, f := range st.Faults {
			lines = append(lines, fmt.Sprintf("%s:%d\n", f.Path, f.Line))
		}
		slices.Sort(lines)
		var data []byte
		for _, l := range lines {
			data = append(data, l...)
		}
		if err := os.WriteFile(*expect, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen-corpus:", err)
			os.Exit(2)
		}
	}
	fmt.Fprintf(os.Stderr, "gen-corpus: %d files, %d bytes, %d links, %d planted faults in %s\n", st.Files, st.Bytes, st.Links, len(st.Faults), *out)
}
