package bashpolicy

import (
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/dsh-go/dsh/tools"
)

// Limits of what the policy reads.
const (
	// MaxCommandBytes is the longest command the policy decides: a longer one is denied with a
	// text saying so. It is the kernel's limit on one argument (bash -c carries the command as
	// one), so nothing longer could run as a one-shot command anyway.
	MaxCommandBytes = 128 << 10
	// maxDepth bounds the nesting of code inside code (bash -c inside eval inside a trap …).
	maxDepth = 16
	// maxParsed bounds the bytes parsed for one command, nested code included.
	maxParsed = 4 * MaxCommandBytes
	// maxFindings bounds the findings a decision lists; the verdict still counts every one.
	maxFindings = 64
)

// Where is where a command would run: its workspace, the directories it may start in, and what
// the policy knows of the shell around it.
//
// Workspace is the directory the command may write into: a redirection that writes anywhere
// else is asked. Dirs are the directories the command may start in, the base of relative paths
// (nil means Workspace alone); Lost means the policy no longer knows where the shell is, so a
// redirection to a relative path cannot be judged. Home is the home directory a bare cd goes to
// ("" : unknown). CDPath tells the policy that CDPATH is set in the shell's environment, so a cd
// to a relative name may land anywhere.
type Where struct {
	Workspace string
	Dirs      []string
	Lost      bool
	Home      string
	CDPath    bool

	root string // Workspace with its symbolic links resolved, when the caller knows it
}

// Decision is the policy's verdict on one command.
//
// Action is the verdict of the whole command: deny when anything in it is denied, otherwise ask
// when anything is asked, otherwise allow. Findings lists what was not allowed, in the order the
// policy met it (at most 64; Dropped counts the rest). Commands is the number of simple commands
// judged. Dirs and Lost describe where the shell may be once the command has run (see
// [Where]); a persistent shell's next command starts from them.
type Decision struct {
	Action   tools.Verdict
	Findings []Finding
	Dropped  int
	Commands int
	Dirs     []string
	Lost     bool
}

// Finding is one part of a command the policy did not allow: a simple command, a redirection, an
// assignment, a definition or code it cannot read.
//
// Action is its verdict. Subject is the part as written (for a simple command, its source
// text). Rule is the rule that decided, "" when none did. Why says why, as the end of a
// sentence that starts with the subject. Unknown is set when the policy could not judge the
// part, so Action is the policy's "unknown" outcome.
type Finding struct {
	Action  tools.Verdict
	Subject string
	Rule    string
	Why     string
	Unknown bool
}

// String returns the finding as a sentence: the subject, shortened to one line, then why.
func (f Finding) String() string { return "`" + shorten(f.Subject) + "` " + f.Why }

// shorten returns s cut to its first line and at most 120 bytes, marked with "…" when cut.
func shorten(s string) string {
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	if len(s) > 120 {
		i := 120
		for i > 0 && s[i]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			i--
		}
		s, cut = s[:i], true
	}
	if cut {
		s += "…"
	}
	return s
}

// Reason returns why the command was not allowed, for people and models: the first deny
// finding when it was denied, the asked findings (up to three) when it was asked, "" when it was
// allowed.
func (d Decision) Reason() string {
	var parts []string
	for _, f := range d.Findings {
		if f.Action != d.Action {
			continue
		}
		if d.Action == tools.VerdictDeny {
			return f.String()
		}
		if len(parts) == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", d.count(d.Action)-3))
			break
		}
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}

// count returns the number of listed findings with verdict v, plus the dropped ones (which are
// at least as severe as some listed one, so they are counted with the verdict of the decision).
func (d Decision) count(v tools.Verdict) int {
	n := 0
	for _, f := range d.Findings {
		if f.Action == v {
			n++
		}
	}
	if v == d.Action {
		n += d.Dropped
	}
	return n
}

// Decide judges command, to be run in where, and returns the decision. It never fails: what it
// cannot judge (a syntax error included) is a finding with the policy's unknown outcome, and a
// command over [MaxCommandBytes] is denied.
func (p *Policy) Decide(command string, where Where) Decision {
	j := &judge{p: p, where: where}
	if len(command) > MaxCommandBytes {
		j.add(frame{}, tools.VerdictDeny, command, "", fmt.Sprintf("is %d bytes long, more than the %d bytes the command policy reads; split it into smaller commands", len(command), MaxCommandBytes), false)
		return j.decision()
	}
	j.script(frame{}, command)
	j.checkWrites()
	j.checkUses()
	return j.decision()
}

// judge is the state of one decision.
type judge struct {
	p        *Policy
	where    Where
	action   tools.Verdict
	findings []Finding
	dropped  int
	commands int
	parsed   int             // bytes parsed so far, nested code included
	writes   []write         // redirections that write, checked once every cd is known
	cds      []string        // directories cd and pushd may change to
	lost     bool            // a directory change the policy cannot follow
	tainted  map[string]bool // variables that may hold a value the policy cannot read
	uses     []varUse        // variables evaluated as arithmetic
}

// frame is the code being walked: its source text src, what runs it (via, "" at the top, for
// messages) and how deep it is nested in other code.
type frame struct {
	src   string
	via   string
	depth int
}

// nested returns the frame of code that the subject of f runs, described by how.
func (f frame) nested(how string) frame {
	return frame{via: how, depth: f.depth + 1}
}

func (j *judge) decision() Decision {
	d := Decision{Action: j.action, Findings: j.findings, Dropped: j.dropped, Commands: j.commands}
	d.Dirs, d.Lost = j.dirs()
	return d
}

// add records a finding about subject in f with verdict v; an allowed one is not recorded.
func (j *judge) add(f frame, v tools.Verdict, subject, rule, why string, unknown bool) {
	if v == tools.VerdictAllow {
		return
	}
	if v > j.action {
		j.action = v
	}
	if len(j.findings) == maxFindings {
		j.dropped++
		return
	}
	if f.via != "" {
		why += " (" + f.via + ")"
	}
	j.findings = append(j.findings, Finding{Action: v, Subject: subject, Rule: rule, Why: why, Unknown: unknown})
}

// unknown records that the policy cannot judge subject, and why.
func (j *judge) unknown(f frame, subject, format string, args ...any) {
	j.add(f, j.p.unknown, subject, "", fmt.Sprintf(format, args...), true)
}

var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// script parses src, code run by what f describes, and judges everything in it.
func (j *judge) script(f frame, src string) {
	f.src = src
	j.parsed += len(src)
	switch {
	case f.depth > maxDepth:
		j.unknown(f, src, "nests code inside code more than %d levels deep, which the policy does not follow", maxDepth)
		return
	case j.parsed > maxParsed:
		j.unknown(f, src, "holds more nested code than the policy reads (%d bytes)", maxParsed)
		return
	}
	p := parsers.Get().(*syntax.Parser)
	file, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		j.unknown(f, src, "could not be parsed (%v), so the policy cannot tell what it would run; check its quoting and syntax", err)
		return
	}
	j.walk(f, file)
}

// walk judges every node under n, code of frame f. syntax.Walk reaches every simple command,
// including those in pipelines, lists, subshells, groups, function bodies, command and process
// substitutions and here-documents.
func (j *judge) walk(f frame, n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				j.redirect(f, r)
			}
			if c, ok := n.Cmd.(*syntax.CallExpr); ok {
				j.call(f, n, c)
			}
		case *syntax.DeclClause:
			j.decl(f, n)
		case *syntax.LetClause:
			j.let(f, n)
			for _, e := range n.Exprs {
				j.arithWords(f, e, sourceOf(f.src, n))
			}
		case *syntax.ForClause:
			if it, ok := n.Loop.(*syntax.WordIter); ok && it.Name != nil {
				j.setVar(f, word{text: it.Name.Value, lit: true, single: true}, sourceOf(f.src, n))
			}
		case *syntax.ParamExp:
			if n.Index != nil {
				j.arithWords(f, n.Index, sourceOf(f.src, n))
			}
			if n.Slice != nil {
				j.arithWords(f, n.Slice.Offset, sourceOf(f.src, n))
				j.arithWords(f, n.Slice.Length, sourceOf(f.src, n))
			}
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) && n.Param != nil {
				j.setVar(f, word{text: n.Param.Value, lit: true, single: true}, sourceOf(f.src, n))
			}
		case *syntax.ArithmCmd:
			j.arithWords(f, n.X, sourceOf(f.src, n))
		case *syntax.ArithmExp:
			j.arithWords(f, n.X, sourceOf(f.src, n))
		case *syntax.CStyleLoop:
			for _, e := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
				if e != nil {
					j.arithWords(f, e, sourceOf(f.src, n))
				}
			}
		case *syntax.Assign:
			if n.Index != nil {
				j.arithWords(f, n.Index, sourceOf(f.src, n))
			}
		case *syntax.ArrayElem:
			if n.Index != nil {
				j.arithWords(f, n.Index, sourceOf(f.src, n))
			}
		case *syntax.BinaryTest:
			if n.Op >= syntax.TsEql && n.Op <= syntax.TsGtr {
				for _, x := range []syntax.TestExpr{n.X, n.Y} {
					if w, ok := x.(*syntax.Word); ok {
						j.quotedOperand(f, w, sourceOf(f.src, n))
						j.useWord(f, w, sourceOf(f.src, n))
					}
				}
			}
		case *syntax.UnaryTest:
			if w, ok := n.X.(*syntax.Word); ok && (n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar) {
				if text, ok := literalValue(w); ok {
					j.nameText(f, text, sourceOf(f.src, n))
				}
			}
		case *syntax.BinaryArithm:
			if arithAssign[n.Op] {
				j.arithTarget(f, n.X, n)
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				j.arithTarget(f, n.X, n)
			}
		}
		return true
	})
}

var arithAssign = map[syntax.BinAritOperator]bool{
	syntax.Assgn: true, syntax.AddAssgn: true, syntax.SubAssgn: true, syntax.MulAssgn: true,
	syntax.QuoAssgn: true, syntax.RemAssgn: true, syntax.AndAssgn: true, syntax.OrAssgn: true,
	syntax.XorAssgn: true, syntax.ShlAssgn: true, syntax.ShrAssgn: true, syntax.AndBoolAssgn: true,
	syntax.OrBoolAssgn: true, syntax.XorBoolAssgn: true, syntax.PowAssgn: true,
}

// arithTarget judges the variable x an arithmetic expression n assigns to.
func (j *judge) arithTarget(f frame, x syntax.ArithmExpr, n syntax.Node) {
	name := ""
	if w, ok := x.(*syntax.Word); ok {
		name = w.Lit()
		if pe, ok := w.Parts[0].(*syntax.ParamExp); ok && len(w.Parts) == 1 && pe.Param != nil {
			name = pe.Param.Value // a[i]=…
		}
	}
	j.setVar(f, word{text: name, lit: name != "", single: true}, sourceOf(f.src, n))
}

// call judges the simple command c of statement s: its assignments, then the command.
func (j *judge) call(f frame, s *syntax.Stmt, c *syntax.CallExpr) {
	for _, a := range c.Assigns {
		j.assign(f, a)
	}
	if len(c.Args) == 0 {
		return
	}
	subject := sourceOf(f.src, c)
	ws, ok := words(f.src, c.Args)
	if !ok {
		j.commands++
		j.unknown(f, subject, "has a brace expansion of more than %d words, which the policy does not follow", maxBraceWords)
		return
	}
	j.command(f, s, ws, subject)
}

// command judges the simple command ws (at least one word), written as subject, of statement s:
// its program name against the rules, then what it runs or changes in the shell.
func (j *judge) command(f frame, s *syntax.Stmt, ws []word, subject string) {
	j.commands++
	if !ws[0].lit {
		j.unknown(f, subject, "has a command name that is not a literal word (%s), so the policy cannot tell which program it runs", ws[0].src)
		return
	}
	name, ok := programName(ws[0].text)
	if !ok {
		j.unknown(f, subject, "runs %s by its path; the policy knows programs by name, and by path only in the system's program directories", ws[0].text)
		return
	}
	v, r, why, unknown := j.p.judgeRules(name, ws)
	j.add(f, v, subject, r, why, unknown)
	j.special(f, s, name, ws, subject)
}

// inner judges ws, the command that the command outer (of statement s) runs.
func (j *judge) inner(f frame, s *syntax.Stmt, ws []word, outer string) {
	if len(ws) == 0 {
		return
	}
	g := f
	g.via = "run by `" + shorten(outer) + "`"
	j.command(g, s, ws, joinSrc(ws))
}

// code judges src, code that the command outer runs, described as how ("run by `…`").
func (j *judge) code(f frame, src, how string) {
	j.script(f.nested(how), src)
}

// joinSrc returns the words ws as written, joined with spaces.
func joinSrc(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.src
	}
	return strings.Join(parts, " ")
}
