// Package rfc implements verify-rfc, the gate on the decision records in
// docs/rfc/. A record lives at docs/rfc/{proposed,implemented,rejected}/
// yyyy-mm-dd-topic.md, where the date is when the topic was first proposed
// and the folder is its status. Its first four lines are fixed:
//
//	# RFC: <title>
//
//	Status: proposed | implemented | rejected — <reason>
//
// The status must agree with the folder and appear once. The first "##"
// section is "Problem"; a proposed record also has "Proposal",
// "Acceptance criteria" and "Risks"; an implemented one "Decision" and
// "Consequences" and no plan-like sections; a rejected one "Proposal".
// Every record has "Alternatives considered". All violations are reported,
// not just the first.
package rfc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/markdown"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/dsh-go/dsh/scripts/internal/rootpath"
	"github.com/yuin/goldmark/ast"
)

// Dir is the root-relative folder of the records.
const Dir = "docs/rfc"

// Lifecycles are the allowed status folders, in the order they are listed
// in messages.
var Lifecycles = []string{"proposed", "implemented", "rejected"}

// rules holds what each lifecycle requires of a record.
var rules = map[string]struct {
	status   *regexp.Regexp
	want     string   // the status line, as shown in messages
	required []string // sections besides Problem and Alternatives considered
	banned   []string // section prefixes not allowed (lower case)
}{
	"proposed": {
		status:   regexp.MustCompile(`^Status: proposed$`),
		want:     "Status: proposed",
		required: []string{"Proposal", "Acceptance criteria", "Risks"},
	},
	"implemented": {
		status:   regexp.MustCompile(`^Status: implemented$`),
		want:     "Status: implemented",
		required: []string{"Decision", "Consequences"},
		banned:   []string{"proposal", "plan", "migration plan", "acceptance criteria"},
	},
	"rejected": {
		status:   regexp.MustCompile(`^Status: rejected — \S.*$`),
		want:     "Status: rejected — <reason>",
		required: []string{"Proposal"},
	},
}

// alwaysRequired are the sections every record has.
const (
	firstSection = "Problem"
	alternatives = "Alternatives considered"
)

// extraFiles may sit in docs/rfc/ or a lifecycle folder without being records.
var extraFiles = map[string]bool{"README.md": true, "AGENTS.md": true}

var titleRE = regexp.MustCompile(`^# RFC: \S`)

var nameRE = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$`)

// Result is the outcome of [Check].
type Result struct {
	Findings []report.Finding // sorted
	Errors   []error          // I/O failures, each naming its path
	Records  int              // records whose format was checked
}

// Check checks the layout of docs/rfc/ under root and the format of every
// record in it. A root without docs/rfc/ has nothing to check.
func Check(root string) Result {
	var res Result
	base := filepath.Join(root, filepath.FromSlash(Dir))
	if _, err := os.Stat(base); os.IsNotExist(err) {
		return res
	}
	if _, inside, err := rootpath.Resolve(root, Dir); err == nil && !inside {
		res.Findings = append(res.Findings, report.Finding{Path: Dir, Message: markdown.OutsideRoot})
		return res
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("%s: %w", Dir, unwrap(err)))
		return res
	}
	allowed := "allowed: " + strings.Join(Lifecycles, ", ")
	for _, e := range entries {
		rel := Dir + "/" + e.Name()
		isDir, outside := entryIsDir(root, rel, e)
		switch {
		case outside:
			res.Findings = append(res.Findings, report.Finding{Path: rel, Message: markdown.OutsideRoot})
		case isDir && slices.Contains(Lifecycles, e.Name()):
			checkLifecycle(root, e.Name(), &res)
		case isDir:
			res.Findings = append(res.Findings, report.Finding{Path: rel, Message: "unknown lifecycle folder (" + allowed + ")"})
		case extraFiles[e.Name()]:
		default:
			res.Findings = append(res.Findings, report.Finding{Path: rel, Message: "records live in " + Dir + "/{" + strings.Join(Lifecycles, ",") + "}/yyyy-mm-dd-topic.md"})
		}
	}
	report.Sort(res.Findings)
	return res
}

func checkLifecycle(root, lifecycle string, res *Result) {
	dir := Dir + "/" + lifecycle
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("%s: %w", dir, unwrap(err)))
		return
	}
	for _, e := range entries {
		rel := dir + "/" + e.Name()
		isDir, outside := entryIsDir(root, rel, e)
		switch {
		case outside:
			res.Findings = append(res.Findings, report.Finding{Path: rel, Message: markdown.OutsideRoot})
		case isDir:
			res.Findings = append(res.Findings, report.Finding{Path: rel, Message: "expected " + Dir + "/{lifecycle}/yyyy-mm-dd-topic.md, not a folder"})
		case extraFiles[e.Name()]:
		case !validName(e.Name()):
			res.Findings = append(res.Findings, report.Finding{Path: rel, Message: "filename must be yyyy-mm-dd-topic.md (a real date, then lower-case words joined by '-')"})
		default:
			src, fds, err := markdown.Read(root, rel)
			res.Findings = append(res.Findings, fds...)
			if err != nil {
				res.Errors = append(res.Errors, err)
				continue
			}
			res.Records++
			if src == nil {
				continue
			}
			if f := markdown.Parse(rel, src); f.Incomplete != nil {
				res.Findings = append(res.Findings, *f.Incomplete)
			} else {
				res.Findings = append(res.Findings, Format(f, lifecycle)...)
			}
		}
	}
}

func validName(name string) bool {
	m := nameRE.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	_, err := time.Parse("2006-01-02", m[1])
	return err == nil
}

// Format checks the header and sections of the record f, which sits in the
// lifecycle folder named lifecycle, and returns every violation.
func Format(f *markdown.File, lifecycle string) []report.Finding {
	var out []report.Finding
	add := func(line int, format string, args ...any) {
		out = append(out, report.Finding{Path: f.Path, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	rule := rules[lifecycle]

	if !titleRE.Match(f.Line(1)) {
		add(1, `line 1 must be the title "# RFC: <title>"`)
	}
	for _, n := range []int{2, 4} {
		if len(strings.TrimSpace(string(f.Line(n)))) != 0 {
			add(n, "line %d must be blank", n)
		}
	}
	status := string(f.Line(3))
	switch {
	case rule.status.MatchString(status):
	case strings.HasPrefix(status, "Status:"):
		word := strings.Fields(strings.TrimPrefix(status, "Status:") + " ?")[0]
		if word == lifecycle {
			add(3, "status line %q must read %q", status, rule.want)
		} else {
			add(3, "status line %q does not match the folder %s/ (want %q)", status, lifecycle, rule.want)
		}
	default:
		add(3, "line 3 must be the status line %q", rule.want)
	}

	code := codeLines(f)
	for n := 4; n <= f.Lines(); n++ {
		if !code[n] && strings.HasPrefix(string(f.Line(n)), "Status:") {
			add(n, "a second Status: line; the status is line 3 alone")
		}
	}

	type section struct {
		title string
		line  int
	}
	var sections []section
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			if h.Level == 2 {
				line := 1
				if l := h.Lines(); l.Len() > 0 {
					line, _ = f.Position(l.At(0).Start)
				}
				sections = append(sections, section{strings.TrimSpace(markdown.HeadingText(h, f.Src)), line})
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	if len(sections) == 0 || sections[0].title != firstSection {
		line := 1
		if len(sections) > 0 {
			line = sections[0].line
		}
		add(line, "the first section must be \"## %s\"", firstSection)
	}
	seen := map[string]int{}
	for _, s := range sections {
		if prev, dup := seen[s.title]; dup {
			add(s.line, "section %q repeats the one on line %d", "## "+s.title, prev)
		} else {
			seen[s.title] = s.line
		}
		low := strings.ToLower(s.title)
		for _, b := range rule.banned {
			if strings.HasPrefix(low, b) {
				add(s.line, "an %s record has no %q section; record what was decided in \"## Decision\"", lifecycle, "## "+s.title)
				break
			}
		}
	}
	for _, want := range append([]string{firstSection}, append(rule.required, alternatives)...) {
		if _, ok := seen[want]; !ok {
			add(0, "missing section %q (required in %s/)", "## "+want, lifecycle)
		}
	}
	return out
}

// codeLines returns the set of 1-based lines inside code blocks of f.
func codeLines(f *markdown.File) map[int]bool {
	out := map[int]bool{}
	_ = ast.Walk(f.Doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			l := n.Lines()
			for i := 0; i < l.Len(); i++ {
				line, _ := f.Position(l.At(i).Start)
				out[line] = true
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// entryIsDir reports whether the entry e, at rel under root, is a
// directory, following a symbolic link, and whether the link leads outside
// root (and is then not followed).
func entryIsDir(root, rel string, e os.DirEntry) (isDir, outside bool) {
	if e.Type()&os.ModeSymlink == 0 {
		return e.IsDir(), false
	}
	real, inside, err := rootpath.Resolve(root, rel)
	if err != nil {
		return false, false
	}
	if !inside {
		return false, true
	}
	st, err := os.Stat(real)
	return err == nil && st.IsDir(), false
}

func unwrap(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

const usage = "verify-rfc [-root DIR]"

// Main runs the verify-rfc command with the arguments args (without the
// program name), writing findings to stdout and the summary and errors to
// stderr. It returns 0 when docs/rfc/ is well formed, 1 on findings, 2 on a
// usage or I/O error.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("verify-rfc", usage, stderr)
	root := cli.RootFlag(fs)
	if err := fs.Parse(args); err != nil {
		return cli.ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "verify-rfc: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cli.ExitError
	}
	dir, err := cli.ResolveRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "verify-rfc: %v\n", err)
		return cli.ExitError
	}
	res := Check(dir)
	errs := res.Errors
	if err := report.Print(stdout, res.Findings); err != nil {
		errs = append(errs, fmt.Errorf("write output: %w", err))
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "verify-rfc: %s\n", report.OneLine(e.Error()))
	}
	switch {
	case len(errs) > 0:
		fmt.Fprintf(stderr, "verify-rfc: %d error(s) and %d finding(s) in %d record(s) checked.\n", len(errs), len(res.Findings), res.Records)
		return cli.ExitError
	case len(res.Findings) > 0:
		fmt.Fprintf(stderr, "verify-rfc: %d finding(s) in %d record(s) checked.\n", len(res.Findings), res.Records)
		return cli.ExitFindings
	}
	fmt.Fprintf(stderr, "verify-rfc: %d record(s) checked, layout and format consistent.\n", res.Records)
	return cli.ExitClean
}
