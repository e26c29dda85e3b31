package links

import (
	"testing"

	"github.com/dsh-go/dsh/scripts/internal/corpus"
	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/dsh-go/dsh/scripts/internal/mdfiles"
)

// benchCorpus writes the default corpus (about 2,000 files, 13 MB, 14,000
// relative links with fragments, two languages) and returns its root.
func benchCorpus(b *testing.B) (string, corpus.Stats) {
	b.Helper()
	dir := b.TempDir()
	st, err := corpus.Generate(dir, corpus.Default)
	if err != nil {
		b.Fatal(err)
	}
	return dir, st
}

// BenchmarkVerifyLinks measures what the command does: find the files,
// parse each once, and resolve every link and fragment.
func BenchmarkVerifyLinks(b *testing.B) {
	root, st := benchCorpus(b)
	b.SetBytes(int64(st.Bytes))
	b.ResetTimer()
	for b.Loop() {
		files, errs := mdfiles.Find(root, nil)
		res := Check(root, files)
		if len(errs) > 0 || len(res.Errors) > 0 || len(res.Findings) > 0 || res.Links != st.Links {
			b.Fatalf("corpus did not check clean: %d errors, %v, %d findings, %d links", len(errs), res.Errors, len(res.Findings), res.Links)
		}
	}
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(st.Files)/perOp, "files/s")
	b.ReportMetric(float64(st.Links)/perOp, "links/s")
}

// BenchmarkParseOnly is the baseline beside BenchmarkVerifyLinks: reading
// and parsing the same files on the same worker pool and nothing else, the
// floor no checker built on goldmark can go under.
func BenchmarkParseOnly(b *testing.B) {
	root, st := benchCorpus(b)
	files, _ := mdfiles.Find(root, nil)
	b.SetBytes(int64(st.Bytes))
	b.ResetTimer()
	for b.Loop() {
		markdown.Parallel(len(files), func(i int) {
			src, _, err := markdown.Read(root, files[i])
			if err != nil {
				b.Error(err)
				return
			}
			markdown.Parse(files[i], src)
		})
	}
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(st.Files)/perOp, "files/s")
}
