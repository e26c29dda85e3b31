// Package workspace reads a Go workspace as the gates see it: the go.work
// file at the repository root and the go.mod of every module it uses,
// parsed with golang.org/x/mod/modfile. Problems with those files are
// findings that name the file and line.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/dsh-go/dsh/scripts/internal/manifest"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"golang.org/x/mod/modfile"
)

// Module is one module a go.work uses.
type Module struct {
	Dir   string        // as go.work names it, cleaned, '/' separators: root-relative unless absolute
	GoMod string        // Dir + "/go.mod"
	Use   *modfile.Use  // the go.work use statement
	File  *modfile.File // the parsed go.mod
	Data  []byte        // the go.mod bytes
}

// Path returns the module path m's go.mod declares.
func (m *Module) Path() string { return m.File.Module.Mod.Path }

// Workspace is a parsed go.work and its modules, in go.work order.
type Workspace struct {
	Root    string
	Work    *modfile.WorkFile
	Modules []*Module
}

// Load reads root/go.work and the go.mod of every module it uses. It
// returns findings, sorted, when go.work or a go.mod cannot be read or
// parsed, or a go.mod has no module statement; the workspace is then nil.
func Load(root string) (*Workspace, []report.Finding) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, []report.Finding{{Path: "go.work", Message: fmt.Sprintf("cannot read: %v", unwrap(err))}}
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		line, msg := manifest.ModError(err)
		return nil, []report.Finding{{Path: "go.work", Line: line, Message: "does not parse: " + msg}}
	}
	ws := &Workspace{Root: root, Work: wf}
	var problems []report.Finding
	for _, u := range wf.Use {
		dir := filepath.ToSlash(u.Path)
		if !path.IsAbs(dir) {
			dir = path.Clean(dir)
		}
		m := &Module{Dir: dir, GoMod: path.Join(dir, "go.mod"), Use: u}
		if f := m.read(root); f != nil {
			problems = append(problems, *f)
			continue
		}
		ws.Modules = append(ws.Modules, m)
	}
	if len(problems) > 0 {
		report.Sort(problems)
		return nil, problems
	}
	return ws, nil
}

// read reads and parses m's go.mod, returning a finding when it cannot.
func (m *Module) read(root string) *report.Finding {
	name := filepath.FromSlash(m.GoMod)
	if !filepath.IsAbs(name) {
		name = filepath.Join(root, name)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return &report.Finding{Path: m.GoMod, Message: fmt.Sprintf("cannot read: %v", unwrap(err))}
	}
	mf, err := modfile.Parse(m.GoMod, data, nil)
	if err != nil {
		line, msg := manifest.ModError(err)
		return &report.Finding{Path: m.GoMod, Line: line, Message: "does not parse: " + msg}
	}
	if mf.Module == nil {
		return &report.Finding{Path: m.GoMod, Message: "has no module statement"}
	}
	m.File, m.Data = mf, data
	return nil
}

// Abs returns the absolute directory of m in the workspace ws.
func (ws *Workspace) Abs(m *Module) string {
	if path.IsAbs(m.Dir) {
		return filepath.FromSlash(m.Dir)
	}
	return filepath.Join(ws.Root, filepath.FromSlash(m.Dir))
}

// ByPath returns the module of ws whose go.mod declares path, or nil.
func (ws *Workspace) ByPath(path string) *Module {
	for _, m := range ws.Modules {
		if m.Path() == path {
			return m
		}
	}
	return nil
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
