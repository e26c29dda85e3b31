// Package wrap implements verify-md-wrap: every prose paragraph of a
// Markdown file must be written on one physical line, so that diffs show
// whole sentences and no editor's fill column is baked into the text.
// Paragraphs inside list items, blockquotes and footnotes count; headings,
// tables, HTML blocks, code and link reference definitions do not.
package wrap

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/dsh-go/dsh/scripts/internal/mdfiles"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/yuin/goldmark/ast"
)

// Mask blanks what the wrap rule must not see, keeping every line in
// place so positions stay right: a front-matter block (line 1 is exactly
// "---" and a later line is exactly "---") and every container fence line
// (left-trimmed text starting ":::"; the container's body is still
// checked). It returns a new slice when it changes anything.
func Mask(src []byte) []byte {
	lines := bytes.SplitAfter(src, []byte("\n"))
	changed := false
	blank := func(i int) {
		l := lines[i]
		var end []byte
		switch {
		case bytes.HasSuffix(l, []byte("\r\n")):
			end = []byte("\r\n")
		case bytes.HasSuffix(l, []byte("\n")):
			end = []byte("\n")
		}
		lines[i] = end
		changed = true
	}
	isDashes := func(l []byte) bool { return string(bytes.TrimRight(l, "\r\n")) == "---" }
	if len(lines) > 0 && isDashes(lines[0]) {
		for j := 1; j < len(lines); j++ {
			if isDashes(lines[j]) {
				for k := 0; k <= j; k++ {
					blank(k)
				}
				break
			}
		}
	}
	for i, l := range lines {
		if bytes.HasPrefix(bytes.TrimLeft(l, " \t"), []byte(":::")) {
			blank(i)
		}
	}
	if !changed {
		return src
	}
	return bytes.Join(lines, nil)
}

// Check returns a finding for each paragraph of f that spans more than one
// source line: soft-wrapped prose, a hard line break, or a lazy
// continuation line. The finding is on the paragraph's first line and
// quotes that line, trimmed, with any list or quote marker, cut at 80
// characters.
func Check(f *markdown.File) []report.Finding {
	var out []report.Finding
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		// goldmark turns the paragraphs of tight list items into text
		// blocks; they are prose all the same.
		switch n.(type) {
		case *ast.Paragraph, *ast.TextBlock:
		default:
			return ast.WalkContinue, nil
		}
		lines := n.Lines()
		if lines.Len() < 2 {
			return ast.WalkSkipChildren, nil
		}
		first, _ := f.Position(lines.At(0).Start)
		last, _ := f.Position(lines.At(lines.Len() - 1).Start)
		out = append(out, report.Finding{
			Path: f.Path, Line: first,
			Message: fmt.Sprintf("paragraph spans %d lines; write it on one line: %q", last-first+1, excerpt(f.Line(first))),
		})
		return ast.WalkSkipChildren, nil
	})
	return out
}

func excerpt(line []byte) string {
	s := strings.TrimSpace(string(line))
	if utf8.RuneCountInString(s) <= 80 {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:80]), " ") + "…"
}

const usage = "verify-md-wrap [-root DIR] [PATH ...]"

// Main runs the verify-md-wrap command with the arguments args (without the
// program name), writing findings to stdout and the summary and errors to
// stderr. It returns 0 when every paragraph is one line, 1 on findings, 2
// on a usage or I/O error (findings in the other files are still printed).
func Main(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("verify-md-wrap", usage, stderr)
	root := cli.RootFlag(fs)
	if err := fs.Parse(args); err != nil {
		return cli.ExitError
	}
	dir, err := cli.ResolveRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "verify-md-wrap: %v\n", err)
		return cli.ExitError
	}
	paths, err := cli.RelPaths(dir, fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "verify-md-wrap: %v\n", err)
		return cli.ExitError
	}
	files, errs := mdfiles.Find(dir, paths)
	findings := make([][]report.Finding, len(files))
	fileErrs := make([]error, len(files))
	markdown.Parallel(len(files), func(i int) {
		src, fds, err := markdown.Read(dir, files[i])
		if err != nil {
			fileErrs[i] = err
			return
		}
		findings[i] = fds
		if src == nil {
			return
		}
		f := markdown.Parse(files[i], Mask(src))
		if f.Incomplete != nil {
			findings[i] = append(findings[i], *f.Incomplete)
			return
		}
		findings[i] = append(findings[i], markdown.Unclosed(f)...)
		findings[i] = append(findings[i], Check(f)...)
	})
	var all []report.Finding
	for i := range files {
		all = append(all, findings[i]...)
		if fileErrs[i] != nil {
			errs = append(errs, fileErrs[i])
		}
	}
	report.Sort(all)
	if err := report.Print(stdout, all); err != nil {
		errs = append(errs, fmt.Errorf("write output: %w", err))
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "verify-md-wrap: %s\n", report.OneLine(e.Error()))
	}
	switch {
	case len(errs) > 0:
		fmt.Fprintf(stderr, "verify-md-wrap: %d error(s) and %d finding(s) in %d file(s) checked.\n", len(errs), len(all), len(files))
		return cli.ExitError
	case len(all) > 0:
		fmt.Fprintf(stderr, "verify-md-wrap: %d finding(s) in %d file(s) checked (write one physical line per paragraph).\n", len(all), len(files))
		return cli.ExitFindings
	}
	fmt.Fprintf(stderr, "verify-md-wrap: %d file(s) checked, no hard-wrapped prose paragraphs.\n", len(files))
	return cli.ExitClean
}
