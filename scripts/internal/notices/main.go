package notices

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/gocmd"
	"github.com/dsh-go/dsh/scripts/internal/report"
)

const usage = "gen-notices [-root DIR] [-check]"

// Main runs gen-notices with the arguments args (without the program
// name) and returns the exit code. It writes THIRD_PARTY_NOTICES at the
// root, or with -check compares it byte for byte with what it would
// write. License policy violations and a stale file are findings on
// stdout (exit 1; nothing is written); a problem with the inputs, a
// module missing from the module cache or an I/O error is exit 2.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("gen-notices", usage, stderr)
	root := cli.RootFlag(fs)
	check := fs.Bool("check", false, "compare "+OutputFile+" with what would be written; write nothing")
	if err := fs.Parse(args); err != nil {
		return cli.ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gen-notices: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cli.ExitError
	}
	dir, err := cli.ResolveRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "gen-notices: %v\n", err)
		return cli.ExitError
	}
	res, err := Generate(context.Background(), dir)
	if err != nil {
		var problems Problems
		switch {
		case gocmd.PrintMissing(stderr, "gen-notices", err, true):
		case errors.As(err, &problems):
			for _, p := range problems {
				fmt.Fprintf(stderr, "gen-notices: %s\n", p)
			}
			fmt.Fprintf(stderr, "gen-notices: %d problem(s); nothing was written.\n", len(problems))
		default:
			fmt.Fprintf(stderr, "gen-notices: %v\n", err)
		}
		return cli.ExitError
	}
	out := res.Render()
	findings := res.Findings
	name := filepath.Join(dir, OutputFile)
	old, rerr := os.ReadFile(name)
	if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		fmt.Fprintf(stderr, "gen-notices: %s: %v\n", OutputFile, unwrap(rerr))
		return cli.ExitError
	}
	fresh := rerr == nil && bytes.Equal(old, out)
	if rerr != nil && res.Empty() && len(findings) == 0 {
		// Nothing to give notice of, and no file claiming otherwise.
		fmt.Fprintf(stderr, "gen-notices: no third-party module and no fork; %s is not needed.\n", OutputFile)
		return cli.ExitClean
	}
	if *check && !fresh {
		f := report.Finding{Path: OutputFile, Message: "missing; run go run ./scripts/gen-notices"}
		if rerr == nil {
			f.Line = firstDiffLine(old, out)
			f.Message = "stale from this line on; run go run ./scripts/gen-notices"
		}
		findings = append(findings, f)
		report.Sort(findings)
	}
	if err := report.Print(stdout, findings); err != nil {
		fmt.Fprintf(stderr, "gen-notices: write output: %v\n", err)
		return cli.ExitError
	}
	shipped, tooling := 0, 0
	for _, m := range res.Modules {
		if m.Shipped {
			shipped++
		} else {
			tooling++
		}
	}
	counts := fmt.Sprintf("%d shipped module(s), %d used only by tests and tooling, %d fork(s)", shipped, tooling, len(res.Forks))
	switch {
	case len(findings) > 0:
		fmt.Fprintf(stderr, "gen-notices: %d finding(s) (%s); %s was not written.\n", len(findings), counts, OutputFile)
		return cli.ExitFindings
	case *check:
		fmt.Fprintf(stderr, "gen-notices: %s is up to date (%s).\n", OutputFile, counts)
		return cli.ExitClean
	case fresh:
		fmt.Fprintf(stderr, "gen-notices: %s is already up to date (%s).\n", OutputFile, counts)
		return cli.ExitClean
	}
	if err := writeAtomic(name, out); err != nil {
		fmt.Fprintf(stderr, "gen-notices: write %s: %v\n", OutputFile, err)
		return cli.ExitError
	}
	fmt.Fprintf(stderr, "gen-notices: wrote %s (%s).\n", OutputFile, counts)
	return cli.ExitClean
}

// firstDiffLine returns the 1-based line of a at which a and b first
// differ.
func firstDiffLine(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return 1 + bytes.Count(a[:i], []byte("\n"))
}

// writeAtomic replaces the file name with data through a temporary file
// in the same directory and a rename, so a reader never sees half a file.
func writeAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return unwrap(err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return unwrap(err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return unwrap(err)
	}
	return nil
}
