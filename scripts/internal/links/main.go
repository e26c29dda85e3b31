package links

import (
	"fmt"
	"io"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/mdfiles"
	"github.com/dsh-go/dsh/scripts/internal/report"
)

const usage = "verify-md-links [-root DIR] [-json] [PATH ...]"

// Main runs the verify-md-links command with the arguments args (without
// the program name), writing findings to stdout and the summary and errors
// to stderr. It returns the exit code: 0 when every destination resolves,
// 1 when there are findings, 2 on a usage or I/O error (findings are still
// printed, so one unreadable file hides nothing else).
func Main(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("verify-md-links", usage, stderr)
	root := cli.RootFlag(fs)
	asJSON := fs.Bool("json", false, "print the findings as one JSON array")
	if err := fs.Parse(args); err != nil {
		return cli.ExitError
	}
	dir, err := cli.ResolveRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "verify-md-links: %v\n", err)
		return cli.ExitError
	}
	paths, err := cli.RelPaths(dir, fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "verify-md-links: %v\n", err)
		return cli.ExitError
	}
	files, errs := mdfiles.Find(dir, paths)
	res := Check(dir, files)
	errs = append(errs, res.Errors...)

	if *asJSON {
		err = report.PrintJSON(stdout, res.Findings)
	} else {
		err = report.Print(stdout, res.Findings)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("write output: %w", err))
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "verify-md-links: %s\n", report.OneLine(e.Error()))
	}
	switch {
	case len(errs) > 0:
		fmt.Fprintf(stderr, "verify-md-links: %d error(s) and %d finding(s) in %d file(s) checked.\n", len(errs), len(res.Findings), res.Files)
		return cli.ExitError
	case len(res.Findings) > 0:
		fmt.Fprintf(stderr, "verify-md-links: %d finding(s) in %d file(s) checked (%d link(s)).\n", len(res.Findings), res.Files, res.Links)
		return cli.ExitFindings
	}
	fmt.Fprintf(stderr, "verify-md-links: %d file(s) checked, %d link(s); all relative links and fragments resolve.\n", res.Files, res.Links)
	return cli.ExitClean
}
