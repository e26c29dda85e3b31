package mdgo

import (
	"context"
	"fmt"
	"io"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/gocmd"
	"github.com/dsh-go/dsh/scripts/internal/mdgate"
)

const usage = "verify-md-go [-root DIR] [PATH ...]"

// Main runs verify-md-go with the arguments args (without the program
// name): it compiles every fenced Go block that is a complete program in
// the Markdown files named (all of them without PATHs) and prints a
// finding for each compiler error. It returns 0 when every program
// compiles, 1 on findings, 2 on a usage or I/O error or a module that is
// neither in the module cache nor downloadable.
func Main(args []string, stdout, stderr io.Writer) int {
	run, code := mdgate.Start("verify-md-go", usage, args, stderr)
	if run == nil {
		return code
	}
	var programs []*Block
	fragments := 0
	for _, f := range run.Files {
		for _, b := range Extract(f) {
			switch {
			case !b.Program():
				fragments++
			case b.importsC():
				run.Findings = append(run.Findings, cgoFinding(b))
			default:
				programs = append(programs, b)
			}
		}
	}
	findings, err := Compile(context.Background(), run.Root, programs)
	switch {
	case gocmd.PrintMissing(stderr, "verify-md-go", err, false):
		return cli.ExitError
	case err != nil:
		run.Errs = append(run.Errs, err)
	}
	run.Findings = append(run.Findings, findings...)
	what := fmt.Sprintf("%d Go program(s) compiled and %d fragment(s) left alone, in %d file(s)", len(programs), fragments, len(run.Files))
	return run.Finish(stdout, stderr, what, "fix the program, or fence code that is not meant to compile as text")
}
