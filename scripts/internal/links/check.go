package links

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/dsh-go/dsh/scripts/internal/report"
)

// Result is the outcome of [Check].
type Result struct {
	// Findings are the broken destinations and the problems with the files
	// themselves (binary, invalid UTF-8, unclosed fences), sorted by path
	// and position.
	Findings []report.Finding
	// Errors are I/O failures, each naming its root-relative file, sorted.
	// A file that fails does not stop the others from being checked.
	Errors []error
	// Files is the number of source files examined; Links the number of
	// destinations found in them, external ones included.
	Files, Links int
}

// Check checks every destination in files (root-relative slash paths of
// Markdown files) under root, the absolute path of the repository root.
// Sources are read and parsed concurrently, each exactly once; a target
// that is not itself a source is parsed at most once, when a fragment first
// points into it. The result does not depend on scheduling.
func Check(root string, files []string) Result {
	c := &checker{root: root, tree: tree{root: root}, sources: make([]*source, len(files))}
	for i, rel := range files {
		c.sources[i] = &source{rel: rel}
		c.known = append(c.known, rel)
	}
	markdown.Parallel(len(files), func(i int) { c.load(c.sources[i]) })
	markdown.Parallel(len(files), func(i int) { c.checkSource(c.sources[i]) })

	var res Result
	res.Files = len(files)
	for _, s := range c.sources {
		res.Findings = append(res.Findings, s.findings...)
		res.Links += len(s.links)
		res.Errors = append(res.Errors, s.errs...)
	}
	report.Sort(res.Findings)
	res.Errors = sortErrors(res.Errors)
	return res
}

// errIncomplete marks the anchor set of a file that markdown.Parse could
// not parse completely: it is unknown, and a fragment into the file cannot
// be checked.
var errIncomplete = errors.New("too costly to parse")

type checker struct {
	root    string
	tree    tree
	sources []*source
	known   []string
	docs    sync.Map // root-relative path with on-disk case -> *doc
}

type source struct {
	rel      string
	file     *markdown.File
	links    []Link
	findings []report.Finding
	errs     []error
}

// doc is the anchor set of one target, computed once.
type doc struct {
	once    sync.Once
	anchors []string
	set     map[string]bool
	err     error
}

func (c *checker) load(s *source) {
	src, findings, err := markdown.Read(c.root, s.rel)
	s.findings = append(s.findings, findings...)
	if err != nil {
		s.errs = append(s.errs, err)
		c.setDoc(s.rel, nil, err)
		return
	}
	if src == nil {
		c.setDoc(s.rel, nil, nil)
		return
	}
	f := markdown.Parse(s.rel, src)
	if f.Incomplete != nil {
		s.findings = append(s.findings, *f.Incomplete)
		c.setDoc(s.rel, nil, errIncomplete)
		return
	}
	s.findings = append(s.findings, markdown.Unclosed(f)...)
	s.links = Extract(f)
	c.setDoc(s.rel, Anchors(f), nil)
	f.Doc = nil // only positions are needed from here on
	s.file = f
}

func (c *checker) setDoc(rel string, anchors []string, err error) {
	d := c.doc(rel)
	d.once.Do(func() { d.fill(anchors, err) })
}

func (c *checker) doc(rel string) *doc {
	v, _ := c.docs.LoadOrStore(rel, &doc{})
	return v.(*doc)
}

func (d *doc) fill(anchors []string, err error) {
	d.anchors, d.err = anchors, err
	d.set = make(map[string]bool, len(anchors))
	for _, a := range anchors {
		d.set[a] = true
	}
}

// anchorsOf returns the anchor set of the Markdown file rel, parsing it on
// first use.
func (c *checker) anchorsOf(rel string) *doc {
	d := c.doc(rel)
	d.once.Do(func() {
		src, _, err := markdown.Read(c.root, rel)
		if err != nil || src == nil {
			d.fill(nil, err)
			return
		}
		f := markdown.Parse(rel, src)
		if f.Incomplete != nil {
			d.fill(nil, errIncomplete)
			return
		}
		d.fill(Anchors(f), nil)
	})
	return d
}

func (c *checker) checkSource(s *source) {
	for _, l := range s.links {
		fd, err := c.checkLink(s.rel, l)
		if err != nil {
			s.errs = append(s.errs, err)
		}
		if fd == nil {
			continue
		}
		line, col := s.file.Position(l.Off)
		fd.Path, fd.Line, fd.Col = s.rel, line, col
		fd.Destination = l.Dest
		fd.Message = fmt.Sprintf("broken %s %q: %s", l.Kind.noun(), l.Dest, fd.Message)
		if fd.Suggestion != "" {
			fd.Message += fmt.Sprintf("; did you mean %q?", fd.Suggestion)
		}
		s.findings = append(s.findings, *fd)
	}
	s.file = nil
}

// checkLink checks one destination of the source file src. It returns nil
// when the destination resolves. The error reports a target that exists
// but cannot be read for its anchors.
func (c *checker) checkLink(src string, l Link) (*report.Finding, error) {
	if strings.TrimSpace(l.Dest) == "" {
		return &report.Finding{Reason: "empty", Message: "empty destination"}, nil
	}
	d := l.Split()
	if d.External {
		return nil, nil
	}
	var target string
	switch {
	case d.Path == "":
		target = src
	case d.RootAbsolute:
		target = path.Clean(strings.TrimLeft(d.Path, "/"))
	default:
		target = path.Clean(path.Join(path.Dir(src), d.Path))
	}
	if target == ".." || strings.HasPrefix(target, "../") {
		return &report.Finding{Reason: "root", Message: "leaves the repository root"}, nil
	}
	r := c.tree.resolve(target)
	if r.outside {
		return &report.Finding{Reason: "root", Message: fmt.Sprintf("leaves the repository root through the symbolic link %s", r.actual)}, nil
	}
	if !r.exists {
		fd := &report.Finding{Reason: "target", Message: "target does not exist"}
		if s := c.suggestFile(target, r); s != "" {
			fd.Suggestion = c.destFor(src, s, d, l.Dest)
		}
		return fd, nil
	}
	if r.caseDiffers {
		return &report.Finding{Reason: "case", Message: "path case differs from the file on disk",
			Suggestion: c.destFor(src, r.actual, d, l.Dest)}, nil
	}
	if !d.HasFragment {
		return nil, nil
	}
	page := r.actual
	if r.isDir {
		readme, ok := c.readme(r.actual)
		switch {
		case !ok:
			return &report.Finding{Reason: "anchor", Message: fmt.Sprintf("no anchor %q: the folder %s has no README to hold it", "#"+d.Fragment, r.actual)}, nil
		case readme == "":
			return nil, nil // a README GitHub renders from markup other than Markdown
		}
		page = readme
	} else if !IsMarkdown(page) {
		return nil, nil
	}
	if d.Fragment == "" {
		return &report.Finding{Reason: "anchor", Message: "empty fragment"}, nil
	}
	if strings.EqualFold(d.Fragment, "top") {
		return nil, nil // browsers scroll to the top of the page for "#top"
	}
	doc := c.anchorsOf(page)
	if doc.err == errIncomplete {
		return &report.Finding{Reason: "anchor", Message: fmt.Sprintf("cannot check anchor %q: %s is too costly to parse", "#"+d.Fragment, page)}, nil
	}
	if doc.err != nil {
		return nil, doc.err
	}
	if doc.set[d.Fragment] {
		return nil, nil
	}
	fd := &report.Finding{Reason: "anchor", Message: fmt.Sprintf("no anchor %q in %s", "#"+d.Fragment, page)}
	if a := nearestAnchor(d.Fragment, doc.anchors); a != "" {
		pathPart := l.Dest
		if i := strings.IndexByte(pathPart, '#'); i >= 0 {
			pathPart = pathPart[:i]
		}
		fd.Suggestion = pathPart + "#" + a
	}
	return fd, nil
}

// destFor writes the root-relative path target as a destination in the
// style of the original: root-absolute stays root-absolute, anything else
// becomes relative to the source's directory; the fragment is kept.
func (c *checker) destFor(src, target string, d Dest, orig string) string {
	var s string
	if d.RootAbsolute {
		s = "/" + target
	} else {
		s = relPath(path.Dir(src), target)
	}
	if i := strings.IndexByte(orig, '#'); i >= 0 {
		s += orig[i:]
	}
	return s
}

// relPath returns the slash path of to relative to the directory from,
// both root-relative.
func relPath(from, to string) string {
	split := func(p string) []string {
		if p == "." || p == "" {
			return nil
		}
		return strings.Split(p, "/")
	}
	f, t := split(from), split(to)
	i := 0
	for i < len(f) && i < len(t) && f[i] == t[i] {
		i++
	}
	var parts []string
	for range f[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, t[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

func sortErrors(errs []error) []error {
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return slices.CompactFunc(errs, func(a, b error) bool { return a.Error() == b.Error() })
}

// markdownExts are the file name extensions GitHub renders as Markdown,
// lower-cased.
var markdownExts = []string{".md", ".markdown", ".mdown", ".mkdn", ".mkd", ".mdwn", ".mkdown", ".mdtxt", ".mdtext"}

// IsMarkdown reports whether GitHub renders the file name as Markdown, so
// that a fragment into it names one of its anchors. The extension is
// compared without regard to case, as GitHub does ("README.MD").
func IsMarkdown(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return slices.Contains(markdownExts, ext)
}

// readme returns the README that GitHub shows on the page of the
// root-relative folder dir, whose fragments are the README's anchors. ok
// is false when the folder has none; rel is empty when its README is
// rendered from another markup (reStructuredText, AsciiDoc), whose anchors
// the gate does not know. On the repository's front page GitHub looks in
// .github/ first, then the root, then docs/.
func (c *checker) readme(dir string) (rel string, ok bool) {
	dirs := []string{dir}
	if dir == "." {
		dirs = []string{".github", ".", "docs"}
	}
	for _, d := range dirs {
		l := c.tree.list(d)
		if l.err != nil {
			continue
		}
		var names []string
		for name, e := range l.names {
			lower := strings.ToLower(name)
			if (lower == "readme" || strings.HasPrefix(lower, "readme.")) && !e.IsDir() {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			continue
		}
		slices.Sort(names)
		for _, name := range names {
			if IsMarkdown(name) {
				return join(d, name), true
			}
		}
		return "", true
	}
	return "", false
}
