package modproxy

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/gocmd"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/dsh-go/dsh/scripts/internal/workspace"
)

const usage = "build-modproxy [-root DIR] [-version V] (-o DIR | -check | -tags)"

// Main runs build-modproxy with the arguments args (without the program
// name). With -o DIR it writes the module proxy of the release into DIR;
// with -check it only checks that the tree can be released; with -tags it
// checks, then prints the release's git tags, one a line, in the order to
// push them. Findings go to stdout and nothing is written while there are
// any. It returns 0 when done, 1 on findings, 2 on a usage or I/O error.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("build-modproxy", usage, stderr)
	root := cli.RootFlag(fs)
	out := fs.String("o", "", "the directory to write the module proxy into; it must not exist or be empty")
	check := fs.Bool("check", false, "check that the tree can be released; write nothing")
	tags := fs.Bool("tags", false, "check, then print the release's git tags in the order to push them")
	version := fs.String("version", "", "the release version (default: the version the sibling requirements name)")
	if err := fs.Parse(args); err != nil {
		return cli.ExitError
	}
	modes := 0
	for _, on := range []bool{*out != "", *check, *tags} {
		if on {
			modes++
		}
	}
	if fs.NArg() > 0 || modes != 1 {
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "build-modproxy: unexpected argument %q\n", fs.Arg(0))
		} else {
			fmt.Fprintln(stderr, "build-modproxy: give exactly one of -o DIR, -check and -tags")
		}
		fs.Usage()
		return cli.ExitError
	}
	abs := ""
	if *out != "" {
		var err error
		if abs, err = filepath.Abs(*out); err == nil {
			err = Vacant(abs)
		}
		if err != nil {
			fmt.Fprintf(stderr, "build-modproxy: %v\n", err)
			return cli.ExitError
		}
	}
	dir, err := cli.ResolveRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "build-modproxy: %v\n", err)
		return cli.ExitError
	}
	ws, problems := workspace.Load(dir)
	if problems != nil {
		for _, p := range problems {
			fmt.Fprintf(stderr, "build-modproxy: %s\n", p)
		}
		return cli.ExitError
	}
	rel, err := Plan(ws, *version)
	if err != nil {
		fmt.Fprintf(stderr, "build-modproxy: %v\n", err)
		return cli.ExitError
	}
	if err := report.Print(stdout, rel.Findings); err != nil {
		fmt.Fprintf(stderr, "build-modproxy: write output: %v\n", err)
		return cli.ExitError
	}
	if n := len(rel.Findings); n > 0 {
		fmt.Fprintf(stderr, "build-modproxy: %d finding(s); the tree cannot be released at %s as it is, and nothing was written.\n", n, rel.Version)
		return cli.ExitFindings
	}
	switch {
	case *check && rel.Version == "":
		fmt.Fprintf(stderr, "build-modproxy: no workspace module requires another, so there is no release version to check; %d module(s) checked for replace, exclude and zip rules.\n", len(rel.Modules))
		return cli.ExitClean
	case *check:
		fmt.Fprintf(stderr, "build-modproxy: %d module(s) ready to release at %s: %s.\n", len(rel.Modules), rel.Version, dirs(rel))
		return cli.ExitClean
	case rel.Version == "":
		fmt.Fprintln(stderr, "build-modproxy: no workspace module requires another, so there is no release version to read; name it with -version")
		return cli.ExitError
	case *tags:
		for _, t := range Tags(rel) {
			fmt.Fprintln(stdout, t)
		}
		fmt.Fprintf(stderr, "build-modproxy: %d tag(s) for %s, each module after the ones it requires; put them all on one commit.\n", len(rel.Modules), rel.Version)
		return cli.ExitClean
	}
	if err := FillCache(context.Background(), ws, rel); err != nil {
		if !gocmd.PrintMissing(stderr, "build-modproxy", err, true) {
			fmt.Fprintf(stderr, "build-modproxy: %v\n", err)
		}
		return cli.ExitError
	}
	if err := Write(rel, abs, Stamp(dir)); err != nil {
		fmt.Fprintf(stderr, "build-modproxy: %v\n", err)
		return cli.ExitError
	}
	fmt.Fprintf(stderr, "build-modproxy: wrote %d module(s) at %s to %s: %s.\n", len(rel.Modules), rel.Version, abs, dirs(rel))
	fmt.Fprintf(stderr, "build-modproxy: use it with GOPROXY=file://%s,https://proxy.golang.org GONOSUMDB=%s (and GOWORK=off inside the repository), or offline with GOPROXY=file://%s,file://$(go env GOMODCACHE)/cache/download GOSUMDB=off.\n",
		filepath.ToSlash(abs), prefix(rel), filepath.ToSlash(abs))
	return cli.ExitClean
}

// dirs lists the directories of rel's modules.
func dirs(rel *Release) string {
	var out []string
	for _, m := range rel.Modules {
		out = append(out, m.Dir)
	}
	return strings.Join(out, ", ")
}

// prefix returns the longest path prefix, in whole elements, of rel's
// module paths.
func prefix(rel *Release) string {
	if len(rel.Modules) == 0 {
		return ""
	}
	p := strings.Split(rel.Modules[0].Path(), "/")
	for _, m := range rel.Modules[1:] {
		q := strings.Split(m.Path(), "/")
		n := 0
		for n < len(p) && n < len(q) && p[n] == q[n] {
			n++
		}
		p = p[:n]
	}
	return strings.Join(p, "/")
}

// ThirdParty returns the modules ("path@version") that the go.mod files
// of rel's modules require from outside the workspace, sorted.
func ThirdParty(ws *workspace.Workspace, rel *Release) []string {
	var out []string
	for _, m := range rel.Modules {
		for _, r := range m.File.Require {
			if ws.ByPath(r.Mod.Path) == nil {
				out = append(out, r.Mod.Path+"@"+r.Mod.Version)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Tags returns the git tags of rel, DIR/VERSION for a module in a
// subdirectory, in the order to push them: every module after the
// modules of the release it requires, in path order otherwise (a cycle,
// which Go allows, keeps path order).
func Tags(rel *Release) []string {
	in := map[string]bool{}
	for _, m := range rel.Modules {
		in[m.Path()] = true
	}
	done := map[string]bool{}
	var out []string
	for len(done) < len(rel.Modules) {
		progress := false
		for _, m := range rel.Modules {
			if done[m.Path()] || !requiresDone(m, in, done) {
				continue
			}
			done[m.Path()] = true
			out = append(out, tag(m.Dir, rel.Version))
			progress = true
		}
		if !progress { // a cycle: take the first module left
			for _, m := range rel.Modules {
				if !done[m.Path()] {
					done[m.Path()] = true
					out = append(out, tag(m.Dir, rel.Version))
					break
				}
			}
		}
	}
	return out
}

func requiresDone(m *workspace.Module, in, done map[string]bool) bool {
	for _, r := range m.File.Require {
		if in[r.Mod.Path] && r.Mod.Path != m.Path() && !done[r.Mod.Path] {
			return false
		}
	}
	return true
}

func tag(dir, version string) string {
	if dir == "." {
		return version
	}
	return dir + "/" + version
}
