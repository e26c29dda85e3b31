package rescope

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/manifest"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"golang.org/x/mod/modfile"
)

// FileEdit is the new content of one file.
type FileEdit struct {
	Path    string      // root-relative, '/' separators
	Old     []byte      // the bytes read
	New     []byte      // the bytes to write
	Mode    fs.FileMode // permission bits to keep
	Changes []Change    // the sites, in file order
}

// Plan is everything a rename would do, computed before anything is
// written.
type Plan struct {
	Root     string
	Reverse  bool
	Rules    Rules
	Scanned  int              // files read
	Files    []FileEdit       // files that would change, sorted by path
	Sums     []Change         // go.sum lines naming a From path (regenerate; never written)
	Problems []report.Finding // anything that stops the rename; nothing is written when set
}

// Changes returns every change of p, written or not, sorted by path and
// position.
func (p *Plan) Changes() []Change {
	var out []Change
	for _, f := range p.Files {
		out = append(out, f.Changes...)
	}
	out = append(out, p.Sums...)
	slices.SortFunc(out, compareChanges)
	return out
}

// NewPlan reads the manifest and every candidate file under root and
// plans the rename (upstream to scoped, or back when reverse is set). Every
// problem found is in Problems; the edits of files without problems are
// still planned so a report can show them.
func NewPlan(root string, reverse bool) *Plan {
	p := &Plan{Root: root, Reverse: reverse}
	m, problems := manifest.Load(root)
	if len(problems) > 0 {
		p.Problems = problems
		return p
	}
	if problems := m.CheckTree(root); len(problems) > 0 {
		p.Problems = problems
		return p
	}
	p.Rules = NewRules(m, reverse)
	files, err := listFiles(root)
	if err != nil {
		p.Problems = append(p.Problems, report.Finding{Path: ".", Message: fmt.Sprintf("list files: %v", err)})
		return p
	}
	forkDirs := m.Dirs()
	for _, fk := range m.Forks {
		if link := symlinkOn(root, fk.Dir); link != "" {
			p.problem(manifest.File, fk.Line, "fork directory %s/ is reached through the symbolic link %s; rescope-vendor never follows one, so the fork would go unchecked: make it a real directory", fk.Dir, link)
		}
	}
	for _, rel := range files {
		k := classify(rel, forkDirs)
		if msg := symlinkProblem(root, rel, k); msg != "" {
			p.problem(rel, 0, "%s", msg)
			continue
		}
		if k == skip {
			continue
		}
		data, mode, ok, err := readFile(root, rel)
		if err != nil {
			p.problem(rel, 0, "cannot read: %v", err)
			continue
		}
		if !ok {
			continue
		}
		p.Scanned++
		p.planFile(rel, k, data, mode)
	}
	report.Sort(p.Problems)
	return p
}

func (p *Plan) problem(rel string, line int, format string, args ...any) {
	p.Problems = append(p.Problems, report.Finding{Path: rel, Line: line, Message: fmt.Sprintf(format, args...)})
}

// planFile plans one file. go.mod and go.work files are parsed even when
// no rule applies, so that one that does not parse is always reported.
func (p *Plan) planFile(rel string, k kind, data []byte, mode fs.FileMode) {
	var (
		edits []edit
		out   []byte
		err   error
	)
	li := lazyIndex(data)
	switch k {
	case goMod:
		f, perr := modfile.Parse(rel, data, nil)
		if perr != nil {
			line, msg := manifest.ModError(perr)
			p.problem(rel, line, "does not parse: %s", msg)
			return
		}
		edits, err = modEdits(rel, data, goModSites(f), p.Rules, CatGoMod, li())
		if err == nil && len(edits) > 0 {
			out = splice(data, edits)
			_, err = modfile.Parse(rel, out, nil)
			err = wrapAfter(err)
		}
	case goWork:
		f, perr := modfile.ParseWork(rel, data, nil)
		if perr != nil {
			line, msg := manifest.ModError(perr)
			p.problem(rel, line, "does not parse: %s", msg)
			return
		}
		edits, err = modEdits(rel, data, goWorkSites(f), p.Rules, CatGoWork, li())
		if err == nil && len(edits) > 0 {
			out = splice(data, edits)
			_, err = modfile.ParseWork(rel, out, nil)
			err = wrapAfter(err)
		}
	case goSum:
		p.Sums = append(p.Sums, sumLines(rel, data, p.Rules)...)
		return
	case goSource:
		if len(p.Rules) == 0 {
			return
		}
		edits, out, err = goEdits(rel, data, p.Rules, li())
	case mdFile:
		if len(p.Rules) == 0 {
			return
		}
		edits = mdEdits(rel, data, p.Rules, li())
		if len(edits) > 0 {
			out = splice(data, edits)
		}
	}
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			p.Problems = append(p.Problems, report.Finding{Path: rel, Line: pe.line, Col: pe.col, Message: pe.msg})
			return
		}
		p.problem(rel, 0, "%s", trimPrefix(err, rel))
		return
	}
	if len(edits) == 0 {
		return
	}
	fe := FileEdit{Path: rel, Old: data, New: out, Mode: mode}
	for _, e := range edits {
		fe.Changes = append(fe.Changes, e.change)
	}
	slices.SortFunc(fe.Changes, compareChanges)
	p.Files = append(p.Files, fe)
}

func wrapAfter(err error) error {
	if err != nil {
		_, msg := manifest.ModError(err)
		return fmt.Errorf("does not parse after the rename: %s", msg)
	}
	return nil
}

// trimPrefix drops a leading "rel:" from an error message, since the
// finding already names the file.
func trimPrefix(err error, rel string) string {
	return strings.TrimPrefix(err.Error(), rel+":")
}

// lazyIndex builds the line index of data on first use.
func lazyIndex(data []byte) func() lineIndex {
	var li lineIndex
	return func() lineIndex {
		if li == nil {
			li = newLineIndex(data)
		}
		return li
	}
}

// sumLines returns a CatChecksum change for each line of a go.sum or
// go.work.sum that names a From module.
func sumLines(rel string, data []byte, rules Rules) []Change {
	if len(rules) == 0 {
		return nil
	}
	var out []Change
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxFileSize)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if to, _, ok := rules.Map(fields[0]); ok {
			out = append(out, Change{Path: rel, Line: n, Col: 1, Category: CatChecksum, Old: fields[0], New: to})
		}
	}
	return out
}
