// Package notices builds THIRD_PARTY_NOTICES: the third-party Go modules
// that the non-test code of the workspace links (the shipped tier, with
// full license texts), the modules only tests and tools use, and the
// vendored forks of vendor/README.md, each with its version and the
// licenses google/licensecheck detects in its license files. It lists
// packages with "go list -deps -test" for several platforms (the go
// command fills the module cache as go build would) and reads license
// files from the module cache. A shipped
// module or fork whose license is not on the permissive allow-list, or
// cannot be detected, is a finding unless a license override in
// vendor/README.md names it with a written reason. Main is the
// gen-notices command.
package notices

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/scripts/internal/gocmd"
	"github.com/dsh-go/dsh/scripts/internal/manifest"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/google/licensecheck"
	"golang.org/x/mod/modfile"
)

// OutputFile is the root-relative path of the generated file.
const OutputFile = "THIRD_PARTY_NOTICES"

// Module is one third-party module of the notices.
type Module struct {
	Path, Version string
	Replace       string // the replacement ("path version", or a directory), if any
	Dir           string // where its files are read from
	Shipped       bool   // linked by non-test code of a workspace module
	Detection     *Detection
	Override      *manifest.Override // the override that names it, if any
	where         report.Finding     // the go.mod line that requires it
}

// Fork is one vendored fork of the manifest with its detected license.
type Fork struct {
	manifest.Fork
	Detection *Detection
	Override  *manifest.Override
}

// Result is everything the notices say, and what is wrong with it.
type Result struct {
	Modules  []Module         // sorted by path
	Forks    []Fork           // sorted by directory
	Findings []report.Finding // license policy violations and unused overrides, sorted
}

// Empty reports whether r has nothing to give notice of: no third-party
// module and no fork.
func (r *Result) Empty() bool { return len(r.Modules) == 0 && len(r.Forks) == 0 }

// Problems is a list of problems with the inputs (the manifest, go.work or
// a go.mod) that stop the generator; each names its file and line.
type Problems []report.Finding

func (p Problems) Error() string {
	var lines []string
	for _, f := range p {
		lines = append(lines, f.String())
	}
	return strings.Join(lines, "\n")
}

// workspace is what go.work and the go.mod files of its modules say.
type workspace struct {
	modules  []string                  // module paths of the workspace modules
	tools    []string                  // packages named by tool directives
	requires map[string]report.Finding // module path → first go.mod line requiring it
}

// readWorkspace parses root/go.work and the go.mod of every module it
// uses.
func readWorkspace(root string) (*workspace, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, Problems{{Path: "go.work", Message: fmt.Sprintf("cannot read: %v", unwrap(err))}}
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		line, msg := manifest.ModError(err)
		return nil, Problems{{Path: "go.work", Line: line, Message: "does not parse: " + msg}}
	}
	ws := &workspace{requires: map[string]report.Finding{}}
	var problems Problems
	var gomods []string
	for _, u := range wf.Use {
		dir := filepath.ToSlash(u.Path)
		if !path.IsAbs(dir) {
			dir = path.Clean(dir)
		}
		gomods = append(gomods, path.Join(dir, "go.mod"))
	}
	slices.Sort(gomods)
	for _, rel := range gomods {
		name := filepath.Join(root, filepath.FromSlash(rel))
		if path.IsAbs(rel) {
			name = filepath.FromSlash(rel)
		}
		data, err := os.ReadFile(name)
		if err != nil {
			problems = append(problems, report.Finding{Path: rel, Message: fmt.Sprintf("cannot read: %v", unwrap(err))})
			continue
		}
		mf, err := modfile.Parse(rel, data, nil)
		if err != nil {
			line, msg := manifest.ModError(err)
			problems = append(problems, report.Finding{Path: rel, Line: line, Message: "does not parse: " + msg})
			continue
		}
		if mf.Module == nil {
			problems = append(problems, report.Finding{Path: rel, Message: "has no module statement"})
			continue
		}
		ws.modules = append(ws.modules, mf.Module.Mod.Path)
		for _, r := range mf.Require {
			if _, ok := ws.requires[r.Mod.Path]; !ok {
				ws.requires[r.Mod.Path] = report.Finding{Path: rel, Line: r.Syntax.Start.Line}
			}
		}
		for _, t := range mf.Tool {
			ws.tools = append(ws.tools, t.Path)
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	slices.Sort(ws.tools)
	ws.tools = slices.Compact(ws.tools)
	return ws, nil
}

// Generate builds the notices of the workspace at root. It returns an
// error for problems with the inputs ([Problems]), for a go command
// failure (a *[gocmd.MissingError] when a module is neither in the module
// cache nor downloadable), and for module or license files it cannot read; license policy
// violations are findings in the result, not errors.
func Generate(ctx context.Context, root string) (*Result, error) {
	m, problems := manifest.Load(root)
	if len(problems) > 0 {
		return nil, Problems(problems)
	}
	if problems := m.CheckTree(root); len(problems) > 0 {
		return nil, Problems(problems)
	}
	ws, err := readWorkspace(root)
	if err != nil {
		return nil, err
	}
	var patterns []string
	for _, mp := range ws.modules {
		patterns = append(patterns, mp+"/...")
	}
	// licensecheck compiles its license set on first use, which takes
	// seconds; do it while the go command lists packages.
	var warm sync.WaitGroup
	warm.Go(func() { licensecheck.Scan(nil) })
	defer warm.Wait()
	l := &linked{modules: map[string]*listedModule{}, shipped: map[string]bool{}}
	if len(patterns)+len(ws.tools) > 0 {
		if l, err = listAll(ctx, root, patterns, ws.tools); err != nil {
			return nil, err
		}
	}
	res := &Result{}
	used := map[*manifest.Override]bool{}
	for _, mp := range slices.Sorted(maps.Keys(l.modules)) {
		lm := l.modules[mp]
		mod := Module{Path: lm.Path, Version: lm.Version, Dir: lm.Dir, Shipped: l.shipped[mp]}
		if r := lm.Replace; r != nil {
			mod.Replace = strings.TrimSpace(r.Path + " " + r.Version)
			mod.Dir = r.Dir
		}
		if mod.Dir == "" {
			return nil, &gocmd.MissingError{Root: root, Modules: []gocmd.Missing{{Path: mod.Path, Version: mod.Version, Reason: "go list gave it no directory"}}}
		}
		det, err := Detect(mod.Dir)
		if err != nil {
			if isNotExist(err) {
				return nil, &gocmd.MissingError{Root: root, Modules: []gocmd.Missing{{Path: mod.Path, Version: mod.Version, Reason: unwrap(err).Error()}}}
			}
			return nil, fmt.Errorf("module %s %s: %w", mod.Path, mod.Version, err)
		}
		mod.Detection = det
		mod.Override = findOverride(m.Overrides, mod.Path, mod.Version)
		used[mod.Override] = true
		mod.where = whereRequired(ws, mod.Path)
		res.Modules = append(res.Modules, mod)
	}
	for _, fk := range m.Forks {
		det, err := Detect(filepath.Join(root, filepath.FromSlash(fk.Dir)))
		if err != nil {
			return nil, fmt.Errorf("fork %s: %w", fk.Dir, unwrap(err))
		}
		f := Fork{Fork: fk, Detection: det, Override: findOverride(m.Overrides, fk.Module, "")}
		used[f.Override] = true
		res.Forks = append(res.Forks, f)
	}
	slices.SortFunc(res.Forks, func(a, b Fork) int { return strings.Compare(a.Dir, b.Dir) })
	res.policy(m, used)
	return res, nil
}

// findOverride returns the override of overrides for module path at
// version (any version when version is empty), or nil. A row naming the
// version wins over one that names none.
func findOverride(overrides []manifest.Override, path, version string) *manifest.Override {
	var any *manifest.Override
	for i := range overrides {
		o := &overrides[i]
		if o.Module != path {
			continue
		}
		if o.Version != "" && o.Version == version {
			return o
		}
		if o.Version == "" {
			any = o
		}
	}
	return any
}

func whereRequired(ws *workspace, modPath string) report.Finding {
	if w, ok := ws.requires[modPath]; ok {
		return w
	}
	return report.Finding{Path: "go.work"}
}

const remedy = `add a row to the "License overrides" table of vendor/README.md with a written reason, or drop the dependency`

// policy records the findings of the fail-closed license policy.
func (r *Result) policy(m *manifest.Manifest, used map[*manifest.Override]bool) {
	for _, mod := range r.Modules {
		if !mod.Shipped || mod.Override != nil {
			continue
		}
		f := mod.where
		who := fmt.Sprintf("%s %s (shipped)", mod.Path, mod.Version)
		if msg := verdict(mod.Detection); msg != "" {
			f.Message = fmt.Sprintf("%s: %s; %s", who, msg, remedy)
			r.Findings = append(r.Findings, f)
		}
	}
	for _, fk := range r.Forks {
		if fk.Override != nil {
			continue
		}
		where := report.Finding{Path: manifest.File, Line: fk.Line}
		who := fmt.Sprintf("fork %s (%s)", fk.Dir, fk.Module)
		if msg := verdict(fk.Detection); msg != "" {
			where.Message = fmt.Sprintf("%s: %s; %s", who, msg, remedy)
			r.Findings = append(r.Findings, where)
			continue
		}
		want := slices.Clone(fk.License)
		slices.Sort(want)
		if !slices.Equal(want, fk.Detection.IDs) {
			where.Message = fmt.Sprintf("%s: the manifest says %s but its license files are detected as %s", who, strings.Join(fk.License, ", "), strings.Join(fk.Detection.IDs, ", "))
			r.Findings = append(r.Findings, where)
		}
	}
	for i := range m.Overrides {
		if o := &m.Overrides[i]; !used[o] {
			name := o.Module
			if o.Version != "" {
				name += "@" + o.Version
			}
			r.Findings = append(r.Findings, report.Finding{Path: manifest.File, Line: o.Line,
				Message: fmt.Sprintf("license override for %s names no module of the notices; remove it", name)})
		}
	}
	report.Sort(r.Findings)
}

// verdict says why a detection fails the allow-list, or "" when it passes.
func verdict(d *Detection) string {
	if d.Problem != "" {
		return "license cannot be detected: " + d.Problem
	}
	if bad := NotAllowed(d.IDs); len(bad) > 0 {
		return fmt.Sprintf("license %s is not on the allow-list (%s)", strings.Join(bad, ", "), strings.Join(Allowed, ", "))
	}
	return ""
}

// unwrap drops the *PathError wrapper, whose absolute path would repeat
// what the message already names.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
