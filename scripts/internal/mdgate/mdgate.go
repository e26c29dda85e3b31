// Package mdgate is the frame a Markdown gate is built in: its command
// line (-root and optional paths), the Markdown files it checks, read and
// parsed in parallel, and how it reports (sorted findings on stdout,
// errors and a one-line summary on stderr, exit 0, 1 or 2).
package mdgate

import (
	"fmt"
	"io"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/dsh-go/dsh/scripts/internal/mdfiles"
	"github.com/dsh-go/dsh/scripts/internal/report"
)

// Run is one run of a gate: the root, the parsed files, and what was
// found on the way.
type Run struct {
	Name     string           // the command name, the prefix of every stderr line
	Root     string           // absolute repository root
	Files    []*markdown.File // parsed, in path order
	Findings []report.Finding // findings about the files themselves (binary, invalid UTF-8, unclosed blocks)
	Errs     []error          // I/O errors, each naming its file
}

// Start parses the command line args (without the program name) of the
// gate name, whose synopsis is usage, and reads and parses the Markdown
// files it names (every one under the root without paths; see mdfiles).
// It returns nil and the exit code when the command line is wrong or the
// root cannot be found, having said why on stderr.
func Start(name, usage string, args []string, stderr io.Writer) (*Run, int) {
	fs := cli.NewFlagSet(name, usage, stderr)
	root := cli.RootFlag(fs)
	if err := fs.Parse(args); err != nil {
		return nil, cli.ExitError
	}
	dir, err := cli.ResolveRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return nil, cli.ExitError
	}
	paths, err := cli.RelPaths(dir, fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return nil, cli.ExitError
	}
	r := &Run{Name: name, Root: dir}
	names, errs := mdfiles.Find(dir, paths)
	r.Errs = errs
	parsed := make([]*markdown.File, len(names))
	found := make([][]report.Finding, len(names))
	fileErrs := make([]error, len(names))
	markdown.Parallel(len(names), func(i int) {
		src, fds, err := markdown.Read(dir, names[i])
		if err != nil {
			fileErrs[i] = err
			return
		}
		found[i] = fds
		if src != nil {
			parsed[i] = markdown.Parse(names[i], src)
			found[i] = append(found[i], markdown.Unclosed(parsed[i])...)
		}
	})
	for i := range names {
		r.Findings = append(r.Findings, found[i]...)
		if fileErrs[i] != nil {
			r.Errs = append(r.Errs, fileErrs[i])
		}
		if parsed[i] != nil {
			r.Files = append(r.Files, parsed[i])
		}
	}
	return r, cli.ExitClean
}

// Each runs check on every file of r in parallel and adds what it finds
// to r's findings.
func (r *Run) Each(check func(f *markdown.File) []report.Finding) {
	found := make([][]report.Finding, len(r.Files))
	markdown.Parallel(len(r.Files), func(i int) { found[i] = check(r.Files[i]) })
	for _, fds := range found {
		r.Findings = append(r.Findings, fds...)
	}
}

// Finish prints r's findings, sorted, on stdout and its errors and a
// summary on stderr, and returns the exit code: 2 on any error, 1 on
// findings, 0 otherwise. what describes what was checked ("3 program(s)
// in 12 file(s)"); advice follows the count of findings.
func (r *Run) Finish(stdout, stderr io.Writer, what, advice string) int {
	report.Sort(r.Findings)
	if err := report.Print(stdout, r.Findings); err != nil {
		r.Errs = append(r.Errs, fmt.Errorf("write output: %w", err))
	}
	for _, e := range r.Errs {
		fmt.Fprintf(stderr, "%s: %v\n", r.Name, e)
	}
	switch {
	case len(r.Errs) > 0:
		fmt.Fprintf(stderr, "%s: %d error(s) and %d finding(s); %s.\n", r.Name, len(r.Errs), len(r.Findings), what)
		return cli.ExitError
	case len(r.Findings) > 0:
		fmt.Fprintf(stderr, "%s: %d finding(s); %s (%s).\n", r.Name, len(r.Findings), what, advice)
		return cli.ExitFindings
	}
	fmt.Fprintf(stderr, "%s: no findings; %s.\n", r.Name, what)
	return cli.ExitClean
}
