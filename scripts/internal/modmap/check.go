package modmap

import (
	"errors"
	"fmt"
	"go/build"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// Platforms are the systems every module builds on; a file for one of them alone is checked too.
var Platforms = []string{"linux", "darwin", "freebsd"}

// Violation is one import the map forbids, or a module with no rule.
type Violation struct {
	File    string // the importing file, relative to the root ("" for a module with no rule)
	Package string // the importing package
	Import  string // the forbidden import path
	Rule    Rule   // the rule it breaks
	Test    bool   // whether the import is in a test file
}

func (v Violation) String() string {
	if v.Import == "" {
		return fmt.Sprintf("%s: module has no row in the module map (scripts/internal/modmap)", v.Rule.Dir)
	}
	kind := "product code"
	allowed := v.Rule.Imports
	if v.Test {
		kind, allowed = "a test", append(append([]string(nil), v.Rule.Imports...), v.Rule.Tests...)
	}
	return fmt.Sprintf("%s: %s imports %s, which %s of module %s may not import (it may import the standard library, its own packages and %s)",
		v.File, v.Package, v.Import, kind, v.Rule.Dir, orNothing(allowed))
}

func orNothing(pats []string) string {
	if len(pats) == 0 {
		return "nothing else"
	}
	return strings.Join(pats, ", ")
}

// Check reads go.work in root and returns every import of every module's packages that the map
// forbids, on every platform of Platforms, sorted and without repeats. Its error is for a tree it
// cannot read.
func Check(root string) ([]Violation, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, fmt.Errorf("modmap: %w", err)
	}
	work, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, fmt.Errorf("modmap: %w", err)
	}
	var out []Violation
	for _, use := range work.Use {
		dir := strings.TrimPrefix(filepath.ToSlash(filepath.Clean(use.Path)), "./")
		rule, ok := Lookup(dir)
		if !ok {
			if !strings.HasPrefix(dir, "vendor/") { // forks keep their own imports
				out = append(out, Violation{Rule: Rule{Dir: dir}})
			}
			continue
		}
		vs, err := checkModule(root, rule)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(a.String(), b.String()) })
	return slices.CompactFunc(out, func(a, b Violation) bool { return a.String() == b.String() }), nil
}

// checkModule checks every package directory of the module of rule.
func checkModule(root string, rule Rule) ([]Violation, error) {
	var out []Violation
	top := filepath.Join(root, filepath.FromSlash(rule.Dir))
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != top && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if path != top {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		vs, err := checkDir(root, path, rule)
		out = append(out, vs...)
		return err
	})
	return out, err
}

// checkDir checks the package in dir, if any, for each platform.
func checkDir(root, dir string, rule Rule) ([]Violation, error) {
	var out []Violation
	for _, goos := range Platforms {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = goos, "amd64", true
		pkg, err := ctx.ImportDir(dir, build.ImportComment)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("modmap: %s: %w", dir, err)
		}
		rel, _ := filepath.Rel(root, dir)
		pkgPath := Prefix + filepath.ToSlash(rel)
		add := func(imports map[string][]token.Position, test bool) {
			for path, at := range imports {
				if !rule.Allows(path, test) {
					out = append(out, Violation{File: relFile(root, at[0]), Package: pkgPath, Import: path, Rule: rule, Test: test})
				}
			}
		}
		add(pkg.ImportPos, false)
		add(pkg.TestImportPos, true)
		add(pkg.XTestImportPos, true)
	}
	return out, nil
}

// relFile returns pos as file:line, the file relative to root.
func relFile(root string, pos token.Position) string {
	name := pos.Filename
	if rel, err := filepath.Rel(root, name); err == nil {
		name = filepath.ToSlash(rel)
	}
	return fmt.Sprintf("%s:%d", name, pos.Line)
}
