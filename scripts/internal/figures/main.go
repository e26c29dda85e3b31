package figures

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/dsh-go/dsh/scripts/internal/mdgate"
	"github.com/dsh-go/dsh/scripts/internal/report"
)

const usage = "verify-md-figures [-root DIR] [PATH ...]"

// Main runs verify-md-figures with the arguments args (without the
// program name) over the Markdown files named (all of them without
// PATHs). It returns 0 when every measured figure names its command, 1 on
// findings, 2 on a usage or I/O error.
func Main(args []string, stdout, stderr io.Writer) int {
	run, code := mdgate.Start("verify-md-figures", usage, args, stderr)
	if run == nil {
		return code
	}
	var figures atomic.Int64
	run.Each(func(f *markdown.File) []report.Finding {
		found, n := Check(f)
		figures.Add(int64(n))
		return found
	})
	what := fmt.Sprintf("%d measured figure(s) in %d file(s)", figures.Load(), len(run.Files))
	return run.Finish(stdout, stderr, what, "name the command that produced each figure next to it")
}
