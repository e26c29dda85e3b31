package catalog

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/gocmd"
	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"
)

// LoadError is an operational failure: the workspace could not be read,
// listed, parsed or type-checked. Problems lists each error, with its
// position relative to the root when it has one.
type LoadError struct {
	What     string   // what was being done, e.g. "load packages"
	Problems []string // one line each
}

func (e *LoadError) Error() string {
	if len(e.Problems) == 1 {
		return e.What + ": " + e.Problems[0]
	}
	return fmt.Sprintf("%s: %d error(s):\n\t%s", e.What, len(e.Problems), strings.Join(e.Problems, "\n\t"))
}

// workspace is what the two loading passes found.
type workspace struct {
	root    string
	modules []string // go.work use directories, root-relative, '/' separators
	files   int      // Go files scanned for directives
	// pkgs are the packages that carry //catalog: directives, parsed and
	// type-checked, in import-path order.
	pkgs []*packages.Package
	// typos are directive-shaped comments that are not //catalog:
	// directives but look like one; found by the syntax scan of every file.
	typos []violation
}

// modePhase2 is what the catalogue needs from a package that carries
// directives: its syntax (doc comments) and its types (signatures, the
// context.Context and next-func checks). NeedDeps makes go/packages
// type-check the dependencies from source instead of asking go list to
// compile export data: with the function bodies of dependencies stripped
// (see parseFile) that is faster than a warm build cache and needs no
// cache at all.
const (
	modePhase1 = packages.NeedName | packages.NeedFiles
	modePhase2 = packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedImports | packages.NeedDeps
)

// load reads root/go.work, lists every package of every workspace module,
// scans their files for directives, and parses and type-checks the
// packages that carry //catalog: directives. It returns a *LoadError when
// go.work is missing or invalid, when go list fails, or when a package it
// needs does not parse or type-check.
func load(root string) (*workspace, error) {
	ws := &workspace{root: root}
	modules, patterns, err := workPatterns(root)
	if err != nil {
		return nil, err
	}
	ws.modules = modules
	if len(patterns) == 0 {
		return ws, nil
	}
	// Phase 1: the file lists of every package, without parsing.
	cfg := &packages.Config{Mode: modePhase1, Dir: root, Env: goEnv(root)}
	listed, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, explain(root, &LoadError{What: "list packages", Problems: []string{err.Error()}})
	}
	if probs := packageErrors(root, listed, false); len(probs) > 0 {
		return nil, explain(root, &LoadError{What: "list packages", Problems: probs})
	}

	// The syntax scan: every file, for directives and near misses.
	marked := map[string]bool{} // import paths of packages with //catalog: directives
	var probs []string
	for _, p := range listed {
		for _, name := range p.GoFiles {
			ws.files++
			has, typos, err := scanFile(root, name)
			if err != nil {
				probs = append(probs, err.Error())
				continue
			}
			ws.typos = append(ws.typos, typos...)
			if has {
				marked[p.PkgPath] = true
			}
		}
	}
	if len(probs) > 0 {
		return nil, &LoadError{What: "parse packages", Problems: probs}
	}
	if len(marked) == 0 {
		return ws, nil
	}

	// Phase 2: parse and type-check the marked packages. Their own files
	// keep their function bodies (a package that does not type-check is an
	// error, not a silent gap); every dependency is parsed without bodies.
	rootFiles := map[string]bool{}
	var paths []string
	for _, p := range listed {
		if marked[p.PkgPath] {
			paths = append(paths, p.PkgPath)
			for _, f := range p.GoFiles {
				rootFiles[f] = true
			}
		}
	}
	slices.Sort(paths)
	cfg = &packages.Config{
		Mode: modePhase2,
		Dir:  root,
		Env:  goEnv(root),
		ParseFile: func(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
			if rootFiles[filename] {
				return parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
			}
			f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
			if f != nil {
				for _, d := range f.Decls {
					if fd, ok := d.(*ast.FuncDecl); ok {
						fd.Body = nil
					}
				}
			}
			return f, err
		},
	}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, explain(root, &LoadError{What: "load packages", Problems: []string{err.Error()}})
	}
	if probs := packageErrors(root, pkgs, true); len(probs) > 0 {
		return nil, explain(root, &LoadError{What: "type-check packages", Problems: probs})
	}
	slices.SortFunc(pkgs, func(a, b *packages.Package) int { return strings.Compare(a.PkgPath, b.PkgPath) })
	ws.pkgs = pkgs
	return ws, nil
}

// workPatterns reads root/go.work and returns its module directories
// (root-relative, '/' separators) and the go list pattern for each.
func workPatterns(root string) (modules, patterns []string, err error) {
	workPath := filepath.Join(root, "go.work")
	data, err := os.ReadFile(workPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, &LoadError{What: "read go.work", Problems: []string{fmt.Sprintf("no go.work in %s: gen-catalog catalogues the modules of a Go workspace", root)}}
		}
		return nil, nil, &LoadError{What: "read go.work", Problems: []string{err.Error()}}
	}
	wf, err := modfile.ParseWork(workPath, data, nil)
	if err != nil {
		return nil, nil, &LoadError{What: "parse go.work", Problems: []string{err.Error()}}
	}
	for _, u := range wf.Use {
		dir := filepath.ToSlash(filepath.Clean(u.Path))
		modules = append(modules, dir)
		if filepath.IsAbs(u.Path) {
			patterns = append(patterns, filepath.Join(u.Path, "..."))
			continue
		}
		patterns = append(patterns, "./"+strings.TrimPrefix(dir+"/...", "./"))
	}
	return modules, patterns, nil
}

// goEnv is the environment of the go command: the caller's (its module
// proxy fills an empty module cache, as go build would), pinned to the
// workspace at root, with read-only module files and no cgo (the
// catalogue needs no C, and cgo would make go list run the C toolchain).
func goEnv(root string) []string {
	return gocmd.Env(root, map[string]string{"GOFLAGS": "-mod=readonly", "CGO_ENABLED": "0"})
}

// explain returns a *gocmd.MissingError instead of le when one of le's
// problems comes from a module that is neither in the module cache nor
// downloadable, and le otherwise.
func explain(root string, le *LoadError) error {
	if !slices.ContainsFunc(le.Problems, gocmd.LooksMissing) {
		return le
	}
	if me := gocmd.Explain(context.Background(), root, goEnv(root)); me != nil {
		return me
	}
	return le
}

// packageErrors returns the errors of pkgs and of their dependencies as
// lines with root-relative positions, sorted and without duplicates.
// With typed set, type errors of dependencies are left out: their bodies
// were stripped, so "imported and not used" is expected there, and a real
// problem in a dependency shows up in the package that imports it.
func packageErrors(root string, pkgs []*packages.Package, typed bool) []string {
	roots := map[*packages.Package]bool{}
	for _, p := range pkgs {
		roots[p] = true
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for p := range packages.Postorder(pkgs) {
		for _, e := range p.Errors {
			if typed && !roots[p] && e.Kind == packages.TypeError {
				continue
			}
			pos := e.Pos
			if pos == "" || pos == "-" {
				add(fmt.Sprintf("%s: %s", p.PkgPath, e.Msg))
				continue
			}
			add(fmt.Sprintf("%s: %s", relPos(root, pos), e.Msg))
		}
		if p.Module != nil && p.Module.Error != nil {
			add(fmt.Sprintf("module %s: %s", p.Module.Path, p.Module.Error.Err))
		}
	}
	slices.SortFunc(out, comparePositions)
	return out
}

// comparePositions orders "file:line:col: message" lines by file, then
// line and column as numbers, then text.
func comparePositions(a, b string) int {
	fa, la, ca := splitPos(a)
	fb, lb, cb := splitPos(b)
	if c := strings.Compare(fa, fb); c != 0 {
		return c
	}
	if la != lb {
		return la - lb
	}
	if ca != cb {
		return ca - cb
	}
	return strings.Compare(a, b)
}

func splitPos(s string) (file string, line, col int) {
	parts := strings.SplitN(s, ":", 4)
	if len(parts) < 3 {
		return s, 0, 0
	}
	line, err := strconv.Atoi(parts[1])
	if err != nil {
		return s, 0, 0
	}
	col, _ = strconv.Atoi(parts[2])
	return parts[0], line, col
}

// relPos makes the file part of a "file:line:col" position relative to
// root when it lies inside it.
func relPos(root, pos string) string {
	if rel, err := filepath.Rel(root, pos); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return pos
}

// directiveShape matches a comment line that looks like a directive: a
// word and a colon right after the slashes, or after one space (the
// misspelling "// catalog:service").
var directiveShape = regexp.MustCompile(`(?m)^[ \t]*// ?[A-Za-z][A-Za-z0-9]*:`)

// scanFile reports whether the Go file name holds a //catalog: directive
// and returns a violation for each comment that looks like a misspelt one.
// Files with no directive-shaped line are not parsed. It errors when the
// file cannot be read or parsed.
func scanFile(root, name string) (has bool, typos []violation, err error) {
	src, err := os.ReadFile(name)
	if err != nil {
		return false, nil, err
	}
	if !directiveShape.Match(src) {
		return false, nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return false, nil, fmt.Errorf("%s", relPos(root, err.Error()))
	}
	rel := relPos(root, name)
	for _, g := range f.Comments {
		for _, c := range g.List {
			kind, word, ok := classify(c.Text)
			switch {
			case !ok:
			case kind == shapeDirective:
				has = true
			default:
				typos = append(typos, violation{
					Path: rel, Line: fset.Position(c.Slash).Line,
					Kind: "directive", Name: word,
					Problem: typoProblem(kind, word, c.Text),
				})
			}
		}
	}
	return has, typos, nil
}
