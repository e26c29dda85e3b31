// Package modproxy implements build-modproxy: it serves the product
// modules of the workspace, as the tree holds them, at their release
// version from a file-system module proxy (GOPROXY=file://DIR), so that a
// release can be tried by a consumer outside the repository before it is
// tagged. It also checks that the tree can be released at one version:
// every sibling requirement names it, go.work maps it to the tree, no
// published go.mod carries a replace or exclude, and every file fits in a
// module zip.
package modproxy

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/dsh-go/dsh/scripts/internal/workspace"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// Tooling lists the go.work directories that are not published: the
// repository's own tooling, which no product module requires.
var Tooling = []string{"scripts"}

// Release is what build-modproxy serves: every product module of the
// workspace at one version, and what stands in the way.
type Release struct {
	Version  string
	Modules  []*workspace.Module   // the product modules, sorted by path
	Files    map[string][]zip.File // module path → the files of its zip
	Findings []report.Finding      // sorted; the release is not built while there are any
}

// requirement is one go.mod line that requires a workspace module.
type requirement struct {
	from *workspace.Module
	req  *modfile.Require
}

// Plan works out the release of the workspace ws at version, or, when
// version is empty, at the version the sibling requirements name (the
// most common one; the highest on a tie; none when no module requires
// another, and then only the rules that need no version are checked and
// the release cannot be written). Its findings name every
// requirement of another version, every go.work replace of a sibling that
// disagrees with the version or the tree, a sibling required without such
// a replace, a replace or exclude in a published go.mod, a module path
// whose major version does not fit the version, and every file that
// cannot go in a module zip. It errors when the version cannot be
// version is not a canonical semantic version or a module's files cannot
// be listed.
func Plan(ws *workspace.Workspace, version string) (*Release, error) {
	reqs := siblingRequirements(ws)
	if version == "" {
		version = inferVersion(reqs)
	} else if semver.Canonical(version) != version {
		return nil, fmt.Errorf("-version %s: not a canonical semantic version such as v0.1.0", version)
	}
	rel := &Release{Version: version, Files: map[string][]zip.File{}}
	for _, m := range ws.Modules {
		if !slices.Contains(Tooling, m.Dir) {
			rel.Modules = append(rel.Modules, m)
		}
	}
	slices.SortFunc(rel.Modules, func(a, b *workspace.Module) int { return strings.Compare(a.Path(), b.Path()) })
	for _, r := range reqs {
		rel.checkRequirement(ws, r)
	}
	rel.checkWork(ws, reqs)
	for _, m := range rel.Modules {
		rel.checkGoMod(m)
		if err := rel.listFiles(ws, m); err != nil {
			return nil, err
		}
	}
	report.Sort(rel.Findings)
	return rel, nil
}

// siblingRequirements returns every requirement, in any workspace
// module's go.mod, of another workspace module.
func siblingRequirements(ws *workspace.Workspace) []requirement {
	var out []requirement
	for _, m := range ws.Modules {
		for _, r := range m.File.Require {
			if ws.ByPath(r.Mod.Path) != nil {
				out = append(out, requirement{m, r})
			}
		}
	}
	return out
}

// inferVersion returns the version most sibling requirements name, the
// highest on a tie, or "" when there are none.
func inferVersion(reqs []requirement) string {
	if len(reqs) == 0 {
		return ""
	}
	count := map[string]int{}
	for _, r := range reqs {
		count[r.req.Mod.Version]++
	}
	versions := slices.Collect(maps.Keys(count))
	slices.SortFunc(versions, func(a, b string) int {
		return cmp.Or(count[b]-count[a], semver.Compare(b, a))
	})
	return versions[0]
}

func (rel *Release) add(f *modfile.Line, file, msg string) {
	line, col := 0, 0
	if f != nil {
		line, col = f.Start.Line, f.Start.LineRune
	}
	rel.Findings = append(rel.Findings, report.Finding{Path: file, Line: line, Col: col, Message: msg})
}

func (rel *Release) checkRequirement(ws *workspace.Workspace, r requirement) {
	target := ws.ByPath(r.req.Mod.Path)
	switch {
	case slices.Contains(Tooling, target.Dir):
		rel.add(r.req.Syntax, r.from.GoMod, fmt.Sprintf("requires %s, which is tooling and is not published", r.req.Mod.Path))
	case r.req.Mod.Version != rel.Version:
		rel.add(r.req.Syntax, r.from.GoMod, fmt.Sprintf("requires %s %s, but the release version is %s: siblings are tagged together, so every sibling requirement names that one version", r.req.Mod.Path, r.req.Mod.Version, rel.Version))
	}
}

// checkWork checks that go.work maps every required sibling at the
// release version to its own directory: in workspace mode the go command
// still loads the go.mod of a required version of a workspace module, so
// without that replace it would fetch it from the module proxy.
func (rel *Release) checkWork(ws *workspace.Workspace, reqs []requirement) {
	replaced := map[string]bool{}
	for _, rp := range ws.Work.Replace {
		m := ws.ByPath(rp.Old.Path)
		if m == nil {
			continue
		}
		replaced[rp.Old.Path] = true // a wrong replace is one finding, not two
		if rp.Old.Version != "" && rp.Old.Version != rel.Version {
			rel.add(rp.Syntax, "go.work", fmt.Sprintf("replaces %s %s, but the release version is %s", rp.Old.Path, rp.Old.Version, rel.Version))
			continue
		}
		if rp.New.Version != "" || cleanDir(rp.New.Path) != m.Dir {
			rel.add(rp.Syntax, "go.work", fmt.Sprintf("replaces %s with %s, but that module is the tree's ./%s", rp.Old.Path, strings.TrimSpace(rp.New.Path+" "+rp.New.Version), m.Dir))
		}
	}
	for _, r := range reqs {
		p := r.req.Mod.Path
		if replaced[p] {
			continue
		}
		replaced[p] = true // one finding per module
		m := ws.ByPath(p)
		rel.add(m.Use.Syntax, "go.work", fmt.Sprintf("no \"replace %s %s => ./%s\": siblings require that version, and in workspace mode the go command loads its go.mod from the module proxy", p, rel.Version, m.Dir))
	}
}

func cleanDir(p string) string {
	p = filepath.ToSlash(p)
	if path.IsAbs(p) {
		return p
	}
	return path.Clean(p)
}

// checkGoMod checks what go install PATH@VERSION and every consumer need
// of a published go.mod: no replace or exclude (consumers ignore them and
// go install refuses them) and a module path whose major version suffix
// fits the release version.
func (rel *Release) checkGoMod(m *workspace.Module) {
	for _, r := range m.File.Replace {
		rel.add(r.Syntax, m.GoMod, fmt.Sprintf("replace %s in a published go.mod: consumers ignore it and go install %s@%s refuses it; put it in go.work", r.Old.Path, m.Path(), rel.Version))
	}
	for _, x := range m.File.Exclude {
		rel.add(x.Syntax, m.GoMod, fmt.Sprintf("exclude %s %s in a published go.mod: consumers ignore it and go install %s@%s refuses it", x.Mod.Path, x.Mod.Version, m.Path(), rel.Version))
	}
	if rel.Version == "" {
		return
	}
	if err := module.Check(m.Path(), rel.Version); err != nil {
		rel.add(m.File.Module.Syntax, m.GoMod, fmt.Sprintf("cannot be released at %s: %v", rel.Version, err))
	}
}

// listFiles lists the files of m that a commit would hold (tracked, or
// untracked and not ignored; every file outside git) and records a
// finding for each one that cannot go in a module zip.
func (rel *Release) listFiles(ws *workspace.Workspace, m *workspace.Module) error {
	dir := ws.Abs(m)
	names, err := sourceFiles(dir)
	if err != nil {
		return fmt.Errorf("list the files of %s: %w", m.Dir, err)
	}
	var files []zip.File
	for _, name := range names {
		st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			continue // in the index, gone from the tree
		}
		files = append(files, file{rel: name, abs: filepath.Join(dir, filepath.FromSlash(name)), info: st})
	}
	cf, err := zip.CheckFiles(files)
	for _, fe := range cf.Invalid {
		rel.Findings = append(rel.Findings, report.Finding{Path: path.Join(m.Dir, fe.Path), Message: fmt.Sprintf("cannot go in the module zip of %s: %v", m.Path(), fe.Err)})
	}
	if cf.SizeError != nil {
		rel.Findings = append(rel.Findings, report.Finding{Path: m.Dir, Message: fmt.Sprintf("module zip of %s: %v", m.Path(), cf.SizeError)})
	} else if err != nil && len(cf.Invalid) == 0 {
		return fmt.Errorf("check the files of %s: %w", m.Dir, err)
	}
	rel.Files[m.Path()] = files
	return nil
}

// sourceFiles returns the slash paths, relative to dir, of the files git
// tracks or would track under dir, or of every file under dir (but .git)
// when dir is not in a git work tree.
func sourceFiles(dir string) ([]string, error) {
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		var names []string
		for _, n := range strings.Split(string(out), "\x00") {
			if n != "" {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		return slices.Compact(names), nil
	}
	var names []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	return names, err
}

// file is one file of a module zip.
type file struct {
	rel, abs string
	info     os.FileInfo
}

func (f file) Path() string                 { return f.rel }
func (f file) Lstat() (os.FileInfo, error)  { return f.info, nil }
func (f file) Open() (io.ReadCloser, error) { return os.Open(f.abs) }
