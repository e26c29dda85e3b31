package rescope

import (
	"fmt"
	"io"
	"slices"

	"github.com/dsh-go/dsh/scripts/internal/cli"
)

const usage = "rescope-vendor [-root DIR] [-apply | -check] [-reverse]"

// Main runs rescope-vendor with the arguments args (without the program
// name) and returns the exit code. By default it reports what a rename
// would change and writes nothing; -apply writes and then verifies that a
// second run would change nothing; -check exits 1 when anything is left
// to rename; -reverse renames from the scoped paths back to upstream. Any
// problem (the manifest, a file that cannot be read or parsed) is exit 2
// and nothing is written.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("rescope-vendor", usage, stderr)
	root := cli.RootFlag(fs)
	apply := fs.Bool("apply", false, "write the rename, then verify it")
	check := fs.Bool("check", false, "exit 1 if anything is left to rename")
	reverse := fs.Bool("reverse", false, "rename from the scoped module paths back to upstream")
	if err := fs.Parse(args); err != nil {
		return cli.ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rescope-vendor: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cli.ExitError
	}
	if *apply && *check {
		fmt.Fprintln(stderr, "rescope-vendor: -apply and -check cannot be used together")
		fs.Usage()
		return cli.ExitError
	}
	dir, err := cli.ResolveRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "rescope-vendor: %v\n", err)
		return cli.ExitError
	}
	p := NewPlan(dir, *reverse)
	if len(p.Problems) > 0 {
		for _, f := range p.Problems {
			fmt.Fprintf(stderr, "rescope-vendor: %s\n", f)
		}
		fmt.Fprintf(stderr, "rescope-vendor: %d problem(s); nothing was written.\n", len(p.Problems))
		return cli.ExitError
	}
	direction := "upstream -> scoped"
	if *reverse {
		direction = "scoped -> upstream"
	}
	changes := p.Changes()
	switch {
	case *check:
		return runCheck(p, changes, direction, stdout, stderr)
	case *apply:
		return runApply(p, changes, direction, *reverse, stdout, stderr)
	}
	for _, c := range changes {
		fmt.Fprintln(stdout, c)
	}
	fmt.Fprintf(stderr, "rescope-vendor: dry run (%s): %d fork(s), %d file(s) scanned.\n", direction, len(p.Rules), p.Scanned)
	summarize(p, stderr)
	written := writtenChanges(p)
	fmt.Fprintf(stderr, "rescope-vendor: %d change(s) in %d file(s) would be written; nothing was written (use -apply to write).\n", written, len(p.Files))
	sumNote(p, stderr)
	return cli.ExitClean
}

func runCheck(p *Plan, changes []Change, direction string, stdout, stderr io.Writer) int {
	if len(changes) == 0 {
		fmt.Fprintf(stderr, "rescope-vendor: check (%s): %d fork(s), %d file(s) checked; no residue, a second -apply changes nothing.\n", direction, len(p.Rules), p.Scanned)
		return cli.ExitClean
	}
	files := map[string]bool{}
	for _, c := range changes {
		files[c.Path] = true
		fmt.Fprintf(stdout, "%s (residue)\n", c)
	}
	fmt.Fprintf(stderr, "rescope-vendor: check (%s): %d residue site(s) in %d file(s).\n", direction, len(changes), len(files))
	summarize(p, stderr)
	if len(p.Files) > 0 {
		fmt.Fprintf(stderr, "rescope-vendor: run go run ./scripts/rescope-vendor -apply%s to rename them.\n", reverseFlag(p.Reverse))
	}
	sumNote(p, stderr)
	return cli.ExitFindings
}

func runApply(p *Plan, changes []Change, direction string, reverse bool, stdout, stderr io.Writer) int {
	for _, c := range changes {
		if c.Category != CatChecksum {
			fmt.Fprintln(stdout, c)
		}
	}
	n, err := Apply(p)
	if err != nil {
		fmt.Fprintf(stderr, "rescope-vendor: %v\n", err)
		return cli.ExitError
	}
	fmt.Fprintf(stderr, "rescope-vendor: apply (%s): %d fork(s), %d file(s) scanned.\n", direction, len(p.Rules), p.Scanned)
	summarize(p, stderr)
	fmt.Fprintf(stderr, "rescope-vendor: wrote %d change(s) in %d file(s).\n", writtenChanges(p), n)
	// Verify: read everything again; nothing may be left to rename.
	again := NewPlan(p.Root, reverse)
	switch {
	case len(again.Problems) > 0:
		for _, f := range again.Problems {
			fmt.Fprintf(stderr, "rescope-vendor: verify: %s\n", f)
		}
		fmt.Fprintf(stderr, "rescope-vendor: verify: %d problem(s) after writing.\n", len(again.Problems))
		return cli.ExitFindings
	case len(again.Files) > 0:
		for _, f := range again.Files {
			for _, c := range f.Changes {
				fmt.Fprintf(stdout, "%s (left after -apply)\n", c)
			}
		}
		fmt.Fprintf(stderr, "rescope-vendor: verify: a second -apply would change %d file(s); the mapping is not idempotent.\n", len(again.Files))
		return cli.ExitFindings
	}
	fmt.Fprintln(stderr, "rescope-vendor: verified: no residue, a second -apply changes nothing.")
	sumNote(p, stderr)
	if n > 0 {
		fmt.Fprintln(stderr, "rescope-vendor: next: regenerate THIRD_PARTY_NOTICES (go run ./scripts/gen-notices); go.sum and go.work.sum are never rewritten: regenerate them with go mod tidy in each module (or go work sync).")
	}
	return cli.ExitClean
}

func reverseFlag(reverse bool) string {
	if reverse {
		return " -reverse"
	}
	return ""
}

// summarize prints one line per category that has changes: the number of
// files and sites.
func summarize(p *Plan, w io.Writer) {
	type count struct{ files, sites int }
	counts := map[Category]*count{}
	seen := map[string]bool{}
	for _, c := range p.Changes() {
		ct := counts[c.Category]
		if ct == nil {
			ct = &count{}
			counts[c.Category] = ct
		}
		ct.sites++
		if key := string(c.Category) + "\x00" + c.Path; !seen[key] {
			seen[key] = true
			ct.files++
		}
	}
	for _, cat := range Categories {
		if ct := counts[cat]; ct != nil {
			fmt.Fprintf(w, "  %-24s %4d file(s), %4d site(s)\n", cat, ct.files, ct.sites)
		}
	}
}

func writtenChanges(p *Plan) int {
	n := 0
	for _, f := range p.Files {
		n += len(f.Changes)
	}
	return n
}

func sumNote(p *Plan, w io.Writer) {
	if len(p.Sums) == 0 {
		return
	}
	var files []string
	for _, c := range p.Sums {
		files = append(files, c.Path)
	}
	slices.Sort(files)
	files = slices.Compact(files)
	fmt.Fprintf(w, "rescope-vendor: %d line(s) in %d checksum file(s) name upstream modules; they are never rewritten: regenerate them (go mod tidy in each module, or go work sync).\n", len(p.Sums), len(files))
}
