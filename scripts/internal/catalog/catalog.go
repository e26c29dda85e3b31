// Package catalog implements gen-catalog: the documented catalogue of the
// workspace's services and events, generated from Go doc comments and
// gated on their completeness.
//
// A service is an exported interface (an abstract seam) or struct (a
// concrete service, surfaced by its exported methods) whose doc comment
// holds a directive
//
//	//catalog:service bash/executor
//
// An event is an exported func type, or a method of an exported
// interface, whose doc comment holds
//
//	//catalog:event tools/execute
//	//catalog:mode waterfall
//
// with one of the modes emit, waterfall, parallel, serial or bail.
// Directives are line comments with no space after the slashes, so go/doc
// never shows them.
//
// Every service, service method and event must pass the completeness
// rules: a doc comment that begins with the declared name; every
// parameter named in its prose (a leading context.Context and a
// waterfall's trailing next are exempt; an unnamed or _ parameter is a
// violation); a sentence with "returns", "reports" or "yields" unless the
// results are none, a sole error, or all named; a mode that fits the
// signature (a waterfall ends with a next func parameter and only a
// waterfall does, an emit event returns nothing, a bail event returns
// something). A directive with an unknown key, mode or form, in the wrong
// place, or misspelt ("// catalog:", "//Catalog:", "//catalgo:") is a
// violation too, never a silent skip. All violations of the workspace are
// reported together.
//
// The packages are listed with golang.org/x/tools/go/packages from every
// module of go.work; only the ones that carry //catalog: directives are
// parsed and type-checked, with their dependencies type-checked from
// source without function bodies, so no build cache is needed.
package catalog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/gocmd"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/dsh-go/dsh/scripts/internal/rootpath"
)

// Result is the catalogue of a workspace with the violations of its
// completeness rules.
type Result struct {
	Catalog    *Catalog
	Violations []report.Finding // sorted by path and line
	Modules    int              // modules in go.work
	Files      int              // Go files scanned for directives
	Packages   int              // packages parsed and type-checked
}

// Methods returns the number of service methods in r's catalogue.
func (r *Result) Methods() int {
	n := 0
	for _, s := range r.Catalog.Services {
		n += len(s.Methods)
	}
	return n
}

// Build loads the workspace whose go.work is in root, catalogues it and
// checks the completeness rules. It returns a *LoadError when the
// workspace cannot be listed, parsed or type-checked; violations are in
// the result, not errors.
func Build(root string) (*Result, error) {
	ws, err := load(root)
	if err != nil {
		return nil, err
	}
	x := &extractor{root: root}
	x.viols = append(x.viols, ws.typos...)
	for _, p := range ws.pkgs {
		x.pkg(p)
	}
	sortCatalog(&x.cat)
	x.duplicates()
	res := &Result{Catalog: &x.cat, Modules: len(ws.modules), Files: ws.files, Packages: len(ws.pkgs)}
	for _, v := range x.viols {
		res.Violations = append(res.Violations, report.Finding{
			Path: v.Path, Line: v.Line,
			Message: fmt.Sprintf("%s %s: %s", v.Kind, v.Name, v.Problem),
		})
	}
	report.Sort(res.Violations)
	res.Violations = slices.Compact(res.Violations)
	return res, nil
}

// duplicates reports services sharing a key and events sharing a name.
// The catalogue is sorted, so duplicates are neighbours.
func (x *extractor) duplicates() {
	for i := 1; i < len(x.cat.Services); i++ {
		a, b := x.cat.Services[i-1], x.cat.Services[i]
		if a.Key == b.Key {
			x.viols = append(x.viols, violation{
				Path: b.Files[0], Line: b.Line, Kind: "service", Name: b.docs.pkg.Name() + "." + b.Name,
				Problem: fmt.Sprintf("key %s is already used by %s.%s (%s:%d)", b.Key, a.docs.pkg.Name(), a.Name, a.Files[0], a.Line),
			})
		}
	}
	for i := 1; i < len(x.cat.Events); i++ {
		a, b := x.cat.Events[i-1], x.cat.Events[i]
		if a.Name == b.Name {
			x.viols = append(x.viols, violation{
				Path: b.File, Line: b.Line, Kind: "event", Name: b.docs.pkg.Name() + "." + b.GoName,
				Problem: fmt.Sprintf("name %s is already used by %s.%s (%s:%d)", b.Name, a.docs.pkg.Name(), a.GoName, a.File, a.Line),
			})
		}
	}
}

const usage = "gen-catalog [-root DIR] [-check] [-o docs/catalog.md]"

// Main runs the gen-catalog command with the arguments args (without the
// program name), writing violations and stale entries to stdout and the
// summary and errors to stderr. It returns 0 when the catalogue was
// written (or, with -check, is up to date), 1 on completeness violations
// or a stale page, and 2 on a usage, load or I/O error. A workspace that
// marks nothing needs no page: with the page absent, both modes return 0
// and write nothing.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("gen-catalog", usage, stderr)
	root := cli.RootFlag(fs)
	check := fs.Bool("check", false, "compare the page with what the code gives instead of writing it; exit 1 when it is stale")
	out := fs.String("o", DefaultOutput, "the page to write or check, relative to the root")
	if err := fs.Parse(args); err != nil {
		return cli.ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gen-catalog: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cli.ExitError
	}
	dir, err := cli.ResolveRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "gen-catalog: %v\n", err)
		return cli.ExitError
	}
	rel, err := outputPath(dir, *out)
	if err != nil {
		fmt.Fprintf(stderr, "gen-catalog: %v\n", err)
		return cli.ExitError
	}
	res, err := Build(dir)
	if err != nil {
		var le *LoadError
		switch {
		case gocmd.PrintMissing(stderr, "gen-catalog", err, true):
		case errors.As(err, &le):
			for _, p := range le.Problems {
				fmt.Fprintf(stderr, "gen-catalog: %s: %s\n", le.What, p)
			}
		default:
			fmt.Fprintf(stderr, "gen-catalog: %v\n", err)
		}
		return cli.ExitError
	}
	if err := report.Print(stdout, res.Violations); err != nil {
		fmt.Fprintf(stderr, "gen-catalog: write output: %v\n", err)
		return cli.ExitError
	}
	if n := len(res.Violations); n > 0 {
		verb := "written"
		if *check {
			verb = "checked"
		}
		fmt.Fprintf(stderr, "gen-catalog: %d doc-comment completeness violation(s); %s was not %s.\n", n, rel, verb)
		return cli.ExitFindings
	}
	page := Render(res.Catalog, rel)
	counts := fmt.Sprintf("%d service(s) with %d method(s), %d event(s), from %d package(s)", len(res.Catalog.Services), res.Methods(), len(res.Catalog.Events), res.Packages)
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	old, err := os.ReadFile(abs)
	missing := errors.Is(err, os.ErrNotExist)
	if err != nil && !missing && *check {
		fmt.Fprintf(stderr, "gen-catalog: read %s: %v\n", rel, unwrapPath(err))
		return cli.ExitError
	}
	// A workspace that marks nothing needs no page: an absent one is up
	// to date, and none is written. (A page that exists is still compared.)
	if missing && len(res.Catalog.Services) == 0 && len(res.Catalog.Events) == 0 {
		fmt.Fprintf(stderr, "gen-catalog: nothing is marked //catalog: in %d Go file(s); no %s needed.\n", res.Files, rel)
		return cli.ExitClean
	}
	// In write mode an unreadable page is simply rewritten (or the write
	// says why it cannot be).
	if err == nil && string(old) == string(page) {
		fmt.Fprintf(stderr, "gen-catalog: %s is up to date: %s.\n", rel, counts)
		return cli.ExitClean
	}
	if *check {
		var findings []report.Finding
		if missing {
			findings = []report.Finding{{Path: rel, Message: "stale: the page does not exist"}}
		} else {
			findings = Stale(rel, old, page)
		}
		if err := report.Print(stdout, findings); err != nil {
			fmt.Fprintf(stderr, "gen-catalog: write output: %v\n", err)
			return cli.ExitError
		}
		fmt.Fprintf(stderr, "gen-catalog: %s is stale; run `%s` and commit %s.\n", rel, RegenerateCommand(rel), rel)
		return cli.ExitFindings
	}
	if err := writeFile(abs, page); err != nil {
		fmt.Fprintf(stderr, "gen-catalog: write %s: %v\n", rel, err)
		return cli.ExitError
	}
	fmt.Fprintf(stderr, "gen-catalog: wrote %s: %s.\n", rel, counts)
	return cli.ExitClean
}

// outputPath returns out relative to root with '/' separators; out is
// relative to root or absolute, and must lie inside it (the page links
// to sources by relative paths).
func outputPath(root, out string) (string, error) {
	abs := out
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || rel == "." {
		return "", fmt.Errorf("-o %s: must name a file inside the root %s", out, root)
	}
	rel = filepath.ToSlash(rel)
	// Resolve symbolic links first: docs/link/out.md, with docs/link
	// pointing away, names a file outside the root.
	existing, inside, err := rootpath.ResolveExisting(root, rel)
	if err != nil {
		return "", fmt.Errorf("-o %s: %v", out, unwrapPath(err))
	}
	if !inside {
		return "", fmt.Errorf("-o %s: must name a file inside the root %s, but %s leads outside it through a symbolic link", out, root, existing)
	}
	return rel, nil
}

// writeFile replaces the file at path with data through a temporary file
// in the same directory, creating the directory when needed.
func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return unwrapPath(err)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("is a directory")
	}
	tmp, err := os.CreateTemp(dir, ".gen-catalog-*")
	if err != nil {
		return unwrapPath(err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return unwrapPath(err)
	}
	return nil
}

// unwrapPath drops the path from a *PathError or *LinkError, whose
// message the caller already prefixes with the root-relative path.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
