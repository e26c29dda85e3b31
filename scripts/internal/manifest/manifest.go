// Package manifest reads vendor/README.md, the third-party policy page: the
// fork manifest (one table row per fork kept in vendor/<dir>/, with its
// scoped and upstream module paths) and the license overrides that
// gen-notices accepts (one row per module, each with a written reason).
// rescope-vendor and gen-notices share it, so both read the same rows the
// same way and reject the same mistakes.
package manifest

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// File is the root-relative path of the page that holds the tables.
const File = "vendor/README.md"

// The headings that introduce the two tables (compared case-insensitively)
// and the header row each table must have, column by column.
const (
	ManifestHeading  = "Manifest"
	OverridesHeading = "License overrides"
)

var (
	manifestColumns  = []string{"Directory", "Module", "Upstream module", "Version", "Upstream repository", "Commit", "License"}
	overridesColumns = []string{"Module", "License", "Reason"}
)

// Fork is one row of the manifest: a fork kept in Dir whose module is
// published as Module and was copied from Upstream at Version.
type Fork struct {
	Line       int      // line of the row in vendor/README.md
	Dir        string   // root-relative, '/' separators, no trailing slash: "vendor/lib"
	Module     string   // the scoped module path this repository publishes
	Upstream   string   // the upstream module path
	Version    string   // the upstream version the fork started from
	Repository string   // the upstream repository URL (https)
	Commit     string   // the upstream commit, hexadecimal
	License    []string // SPDX license identifiers, as written
}

// Override is one row of the license overrides: gen-notices reports
// License for Module (at Version, or at any version when Version is empty)
// instead of what it detects, and accepts it whatever the allow-list says,
// because Reason explains why.
type Override struct {
	Line    int    // line of the row in vendor/README.md
	Module  string // module path
	Version string // a specific version, or "" for any
	License string // the license to report, as written
	Reason  string // why the override is right; never empty
}

// Manifest is the parsed page. Forks are in row order.
type Manifest struct {
	Forks     []Fork
	Overrides []Override
}

// Parse parses src, the bytes of vendor/README.md. It returns the manifest
// and every problem found, each a finding on File with the line of the row
// or heading at fault: a missing or duplicated table, a header that is not
// the documented one, a malformed cell, a duplicated directory, module or
// upstream path, a mapping that is not one to one, a scoped path that lies
// under an upstream path (or the reverse, which would make a second rename
// change more), or a major-version suffix that is not kept. The manifest is
// nil when there are problems.
func Parse(src []byte) (*Manifest, []report.Finding) {
	f := markdown.Parse(File, src)
	if f.Incomplete != nil {
		return nil, []report.Finding{*f.Incomplete}
	}
	p := &parser{f: f}
	m := &Manifest{}
	if t := p.table(ManifestHeading, manifestColumns, true); t != nil {
		for row := t.FirstChild(); row != nil; row = row.NextSibling() {
			if r, ok := row.(*east.TableRow); ok {
				if fk, ok := p.fork(r); ok {
					m.Forks = append(m.Forks, fk)
				}
			}
		}
	}
	if t := p.table(OverridesHeading, overridesColumns, false); t != nil {
		for row := t.FirstChild(); row != nil; row = row.NextSibling() {
			if r, ok := row.(*east.TableRow); ok {
				if o, ok := p.override(r); ok {
					m.Overrides = append(m.Overrides, o)
				}
			}
		}
	}
	if len(p.problems) == 0 {
		p.crossCheck(m)
	}
	if len(p.problems) > 0 {
		report.Sort(p.problems)
		return nil, p.problems
	}
	return m, nil
}

type parser struct {
	f        *markdown.File
	problems []report.Finding
}

func (p *parser) problem(off int, format string, args ...any) {
	line, _ := p.f.Position(off)
	p.problems = append(p.problems, report.Finding{Path: File, Line: line, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) problemAt(line int, format string, args ...any) {
	p.problems = append(p.problems, report.Finding{Path: File, Line: line, Message: fmt.Sprintf(format, args...)})
}

// table finds the one table that follows the heading named heading (before
// the next heading) and checks its header row against columns. A missing
// heading is a problem only when required is set.
func (p *parser) table(heading string, columns []string, required bool) *east.Table {
	var found []*ast.Heading
	for n := p.f.Doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && strings.EqualFold(strings.TrimSpace(markdown.HeadingText(h, p.f.Src)), heading) {
			found = append(found, h)
		}
	}
	switch {
	case len(found) == 0:
		if required {
			p.problemAt(1, "no %q heading; the fork manifest is the table under it", heading)
		}
		return nil
	case len(found) > 1:
		p.problem(headingPos(found[1], p.f.Src), "second %q heading; there must be exactly one", heading)
		return nil
	}
	h := found[0]
	var t *east.Table
	for n := h.NextSibling(); n != nil; n = n.NextSibling() {
		if _, ok := n.(*ast.Heading); ok {
			break
		}
		if tt, ok := n.(*east.Table); ok {
			if t != nil {
				p.problem(tableHeaderPos(tt), "second table under the %q heading; there must be exactly one", heading)
				return nil
			}
			t = tt
		}
	}
	if t == nil {
		p.problem(headingPos(h, p.f.Src), "no table under the %q heading (columns: %s)", heading, strings.Join(columns, " | "))
		return nil
	}
	hdr, _ := t.FirstChild().(*east.TableHeader)
	var got []string
	if hdr != nil {
		for c := hdr.FirstChild(); c != nil; c = c.NextSibling() {
			got = append(got, strings.TrimSpace(markdown.HeadingText(c, p.f.Src)))
		}
	}
	if !slices.EqualFunc(got, columns, strings.EqualFold) {
		p.problem(tableHeaderPos(t), "the %q table has columns %q; want %q", heading, strings.Join(got, " | "), strings.Join(columns, " | "))
		return nil
	}
	return t
}

func headingPos(h *ast.Heading, src []byte) int {
	if l := h.Lines(); l.Len() > 0 {
		return l.At(0).Start
	}
	return 0
}

func tableHeaderPos(t *east.Table) int {
	if hdr, ok := t.FirstChild().(*east.TableHeader); ok {
		if c := hdr.FirstChild(); c != nil {
			return c.Pos()
		}
	}
	return t.Pos()
}

// cells returns the text of each cell of row r, or reports a problem and
// returns nil when the row does not have exactly n cells as written.
// goldmark pads short rows and drops the cells of long ones, so the count
// is taken from the source line.
func (p *parser) cells(r *east.TableRow, n int) []string {
	line, _ := p.f.Position(r.Pos())
	if got := countCells(p.f.Line(line)); got != n {
		p.problem(r.Pos(), "malformed row: %d cell(s), want %d", got, n)
		return nil
	}
	var out []string
	for c := r.FirstChild(); c != nil; c = c.NextSibling() {
		out = append(out, cellText(c, p.f.Src))
	}
	return out
}

// countCells counts the cells of a table row as GFM splits it: at each '|'
// not escaped by a backslash, after dropping one leading and one trailing
// '|'.
func countCells(line []byte) int {
	line = bytes.TrimSpace(line)
	line = bytes.TrimPrefix(line, []byte("|"))
	if bytes.HasSuffix(line, []byte("|")) && !bytes.HasSuffix(line, []byte(`\|`)) {
		line = line[:len(line)-1]
	}
	n := 1
	for i, c := range line {
		if c == '|' && (i == 0 || line[i-1] != '\\') {
			n++
		}
	}
	return n
}

// cellText is the rendered text of a cell, except that a cell holding only
// a link gives the link's destination.
func cellText(c ast.Node, src []byte) string {
	if c.ChildCount() == 1 {
		if l, ok := c.FirstChild().(*ast.Link); ok {
			return strings.TrimSpace(markdown.Decode(string(l.Destination)))
		}
	}
	return strings.TrimSpace(markdown.HeadingText(c, src))
}

var (
	commitRE  = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
	licenseRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+-]*$`)
)

func (p *parser) fork(r *east.TableRow) (Fork, bool) {
	c := p.cells(r, len(manifestColumns))
	if c == nil {
		return Fork{}, false
	}
	line, _ := p.f.Position(r.Pos())
	fk := Fork{Line: line, Module: c[1], Upstream: c[2], Version: c[3], Repository: c[4], Commit: c[5]}
	ok := true
	bad := func(format string, args ...any) {
		p.problem(r.Pos(), format, args...)
		ok = false
	}
	dir := strings.TrimSuffix(c[0], "/")
	switch {
	case dir == "":
		bad("row has no directory")
	case !strings.HasPrefix(dir, "vendor/") || path.Clean(dir) != dir || strings.Contains(dir, `\`) || dir == "vendor/README.md":
		bad("directory %q is not a clean path vendor/<dir>/", c[0])
	default:
		fk.Dir = dir
	}
	for _, col := range []struct{ name, path string }{{"module", fk.Module}, {"upstream module", fk.Upstream}} {
		if col.path == "" {
			bad("row has no %s path", col.name)
		} else if err := module.CheckPath(col.path); err != nil {
			bad("%s path: %v", col.name, err)
		}
	}
	if !semver.IsValid(fk.Version) || semver.Canonical(fk.Version) != fk.Version {
		bad("version %q is not a canonical semantic version such as v1.2.3", fk.Version)
	} else if module.CheckPath(fk.Upstream) == nil {
		if _, major, _ := module.SplitPathVersion(fk.Upstream); module.CheckPathMajor(fk.Version, major) != nil {
			bad("version %s does not match the major version of upstream module %s", fk.Version, fk.Upstream)
		}
	}
	if !strings.HasPrefix(fk.Repository, "https://") || strings.ContainsAny(fk.Repository, " \t") || len(fk.Repository) == len("https://") {
		bad("upstream repository %q is not an https:// URL", fk.Repository)
	}
	if !commitRE.MatchString(fk.Commit) {
		bad("commit %q is not a lower-case hexadecimal commit id (7 to 64 digits)", fk.Commit)
	}
	for _, id := range strings.Split(c[6], ",") {
		id = strings.TrimSpace(id)
		if !licenseRE.MatchString(id) {
			bad("license %q is not a comma-separated list of SPDX identifiers", c[6])
			break
		}
		fk.License = append(fk.License, id)
	}
	return fk, ok
}

func (p *parser) override(r *east.TableRow) (Override, bool) {
	c := p.cells(r, len(overridesColumns))
	if c == nil {
		return Override{}, false
	}
	line, _ := p.f.Position(r.Pos())
	o := Override{Line: line, Module: c[0], License: c[1], Reason: c[2]}
	ok := true
	if mod, ver, found := strings.Cut(c[0], "@"); found {
		o.Module, o.Version = mod, ver
		if !semver.IsValid(ver) || semver.Canonical(ver) != ver {
			p.problem(r.Pos(), "override version %q is not a canonical semantic version", ver)
			ok = false
		}
	}
	if err := module.CheckPath(o.Module); err != nil {
		p.problem(r.Pos(), "override module: %v", err)
		ok = false
	}
	if o.License == "" {
		p.problem(r.Pos(), "override for %s names no license", c[0])
		ok = false
	}
	if len(strings.Fields(o.Reason)) < 3 {
		p.problem(r.Pos(), "override for %s needs a written reason (a sentence, not %q)", c[0], o.Reason)
		ok = false
	}
	return o, ok
}

// crossCheck finds the problems between rows: duplicates, and mappings
// that are not one to one or not idempotent.
func (p *parser) crossCheck(m *Manifest) {
	dirs := map[string]int{}
	paths := map[string]int{} // every module and upstream path → line
	for _, fk := range m.Forks {
		if l, dup := dirs[fk.Dir]; dup {
			p.problemAt(fk.Line, "directory %s is already listed on line %d", fk.Dir, l)
		}
		dirs[fk.Dir] = fk.Line
		if fk.Module == fk.Upstream {
			p.problemAt(fk.Line, "module path and upstream module path are both %s; a fork must be rescoped", fk.Module)
			continue
		}
		for _, mp := range []string{fk.Module, fk.Upstream} {
			if l, dup := paths[mp]; dup {
				p.problemAt(fk.Line, "module path %s is already mapped on line %d", mp, l)
			}
			paths[mp] = fk.Line
		}
		_, upMajor, _ := module.SplitPathVersion(fk.Upstream)
		_, scMajor, _ := module.SplitPathVersion(fk.Module)
		if strings.TrimLeft(upMajor, "./") != strings.TrimLeft(scMajor, "./") {
			p.problemAt(fk.Line, "upstream %s has major version suffix %q but module %s has %q; a /vN suffix must map to the same /vN", fk.Upstream, upMajor, fk.Module, scMajor)
		}
	}
	for _, a := range m.Forks {
		for _, b := range m.Forks {
			if Under(a.Module, b.Upstream) {
				p.problemAt(a.Line, "module %s lies under upstream path %s (line %d), so a second rename would change it again", a.Module, b.Upstream, b.Line)
			}
			if Under(a.Upstream, b.Module) {
				p.problemAt(a.Line, "upstream path %s lies under module %s (line %d), so a reverse rename would change it again", a.Upstream, b.Module, b.Line)
			}
		}
	}
	ov := map[string]int{}
	for _, o := range m.Overrides {
		key := o.Module + "@" + o.Version
		if l, dup := ov[key]; dup {
			p.problemAt(o.Line, "override for %s is already given on line %d", strings.TrimSuffix(key, "@"), l)
		}
		ov[key] = o.Line
	}
}

// Under reports whether the import or module path p is prefix or lies under
// it, segment by segment: "a/b" and "a/b/c" are under "a/b", "a/bc" is not.
func Under(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix) && p[len(prefix)] == '/'
}
