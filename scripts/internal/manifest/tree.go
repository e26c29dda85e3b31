package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/report"
	"golang.org/x/mod/modfile"
)

// Load reads and parses File under root. A root without the file has no
// forks and no overrides: the manifest is empty (and [Manifest.CheckTree]
// still reports anything found in vendor/). An unreadable file is one
// problem naming it.
func Load(root string) (*Manifest, []report.Finding) {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(File)))
	if errors.Is(err, fs.ErrNotExist) {
		return &Manifest{}, nil
	}
	if err != nil {
		return nil, []report.Finding{{Path: File, Message: fmt.Sprintf("cannot read the fork manifest: %v", unwrap(err))}}
	}
	return Parse(src)
}

// CheckTree checks the manifest m against the files under root: every
// row's directory exists and holds a go.mod that parses and declares the
// row's module or upstream path; every fork is a workspace module (a "use"
// of root/go.work), as the fork policy says; and every directory under
// vendor/ holding a go.mod, and every other entry directly in vendor/, is
// covered by a row. It returns one finding per problem, sorted.
func (m *Manifest) CheckTree(root string) []report.Finding {
	var out []report.Finding
	uses, err := workUses(root)
	if err != nil {
		out = append(out, *err)
	}
	rows := map[string]Fork{}
	for _, fk := range m.Forks {
		rows[fk.Dir] = fk
		st, err := os.Stat(filepath.Join(root, filepath.FromSlash(fk.Dir)))
		switch {
		case err != nil:
			out = append(out, report.Finding{Path: File, Line: fk.Line, Message: fmt.Sprintf("directory %s/ does not exist", fk.Dir)})
			continue
		case !st.IsDir():
			out = append(out, report.Finding{Path: File, Line: fk.Line, Message: fmt.Sprintf("%s is not a directory", fk.Dir)})
			continue
		}
		gomod := fk.Dir + "/go.mod"
		data, rerr := os.ReadFile(filepath.Join(root, filepath.FromSlash(gomod)))
		if rerr != nil {
			out = append(out, report.Finding{Path: File, Line: fk.Line, Message: fmt.Sprintf("fork %s has no readable go.mod: %v", fk.Dir, unwrap(rerr))})
			continue
		}
		mf, perr := modfile.Parse(gomod, data, nil)
		switch {
		case perr != nil:
			line, msg := ModError(perr)
			out = append(out, report.Finding{Path: gomod, Line: line, Message: "does not parse: " + msg})
		case mf.Module == nil:
			out = append(out, report.Finding{Path: gomod, Message: "has no module statement"})
		case mf.Module.Mod.Path != fk.Module && mf.Module.Mod.Path != fk.Upstream:
			out = append(out, report.Finding{Path: gomod, Line: mf.Module.Syntax.Start.Line,
				Message: fmt.Sprintf("declares module %s, but the manifest row on %s:%d maps %s to %s", mf.Module.Mod.Path, File, fk.Line, fk.Upstream, fk.Module)})
		}
		if uses != nil && !uses[fk.Dir] {
			out = append(out, report.Finding{Path: File, Line: fk.Line, Message: fmt.Sprintf("fork %s is not a workspace module: add \"use ./%s\" to go.work", fk.Dir, fk.Dir)})
		}
	}
	out = append(out, m.strays(root, rows)...)
	report.Sort(out)
	return out
}

// strays finds what lies in vendor/ without a row.
func (m *Manifest) strays(root string, rows map[string]Fork) []report.Finding {
	var out []report.Finding
	vendor := filepath.Join(root, "vendor")
	entries, err := os.ReadDir(vendor)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			out = append(out, report.Finding{Path: "vendor", Message: fmt.Sprintf("cannot read: %v", unwrap(err))})
		}
		return out
	}
	for _, e := range entries {
		rel := "vendor/" + e.Name()
		if rel == File || strings.HasPrefix(e.Name(), ".") {
			continue // the page itself; .gitkeep and the like
		}
		covered := false
		for dir := range rows {
			if Under(dir, rel) {
				covered = true
			}
		}
		if !covered {
			out = append(out, report.Finding{Path: rel, Message: fmt.Sprintf("is in vendor/ but has no row in the manifest (%s)", File)})
		}
	}
	_ = filepath.WalkDir(vendor, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			rel, _ := filepath.Rel(root, p)
			out = append(out, report.Finding{Path: filepath.ToSlash(rel), Message: fmt.Sprintf("cannot read: %v", unwrap(err))})
			return nil
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != vendor {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if _, ok := rows[rel]; !ok {
			out = append(out, report.Finding{Path: rel + "/go.mod", Message: fmt.Sprintf("module directory %s/ has no row in the manifest (%s)", rel, File)})
		}
		return nil
	})
	return out
}

// workUses returns the set of directories root/go.work uses, as clean
// root-relative slash paths.
func workUses(root string) (map[string]bool, *report.Finding) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, &report.Finding{Path: "go.work", Message: fmt.Sprintf("cannot read: %v", unwrap(err))}
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		line, msg := ModError(err)
		return nil, &report.Finding{Path: "go.work", Line: line, Message: "does not parse: " + msg}
	}
	uses := map[string]bool{}
	for _, u := range wf.Use {
		p := filepath.ToSlash(u.Path)
		if !path.IsAbs(p) {
			uses[path.Clean(p)] = true
		}
	}
	return uses, nil
}

// Dirs returns the fork directories of m, sorted.
func (m *Manifest) Dirs() []string {
	var out []string
	for _, fk := range m.Forks {
		out = append(out, fk.Dir)
	}
	slices.Sort(out)
	return out
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ModError returns the line and the message of the first error of a
// modfile parse error, without the file name the finding already gives.
func ModError(err error) (line int, msg string) {
	var list modfile.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		msg = e.Err.Error()
		if e.ModPath != "" {
			msg = fmt.Sprintf("%s %s: %s", e.Verb, e.ModPath, msg)
		} else if e.Verb != "" {
			msg = e.Verb + ": " + msg
		}
		return e.Pos.Line, msg
	}
	return 0, err.Error()
}
