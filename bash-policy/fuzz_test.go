package bashpolicy

import (
	"io"
	"path"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/dsh-go/dsh/tools"
)

// fuzzPolicy allows the harmless commands and every wrapper and shell, denies rm and asks for
// the rest: what stops rm is the parse, never a missing allow rule.
const fuzzPolicy = `{"default": "ask", "unknown": "ask",
	"allow": ["echo", "ls", "cat", "true", "printf", "bash", "sh", "eval", "env", "xargs", "find", "trap", "alias",
		"export", "cd", "command", "builtin", "exec", "nice", "nohup", "timeout", "stdbuf", "time", "declare", "hash"],
	"deny": ["rm"]}`

// FuzzDecide checks, whatever the command: Decide never panics; it is deterministic; a command
// bash cannot parse is never allowed; and a command holding a simple command that may run rm
// (found by walking the syntax tree independently of the policy, its name expanded in an empty
// environment) is never allowed, alone, with rm added after it, or as the string of bash -c.
func FuzzDecide(f *testing.F) {
	for _, tt := range decideTable {
		f.Add(tt.cmd)
	}
	for _, s := range []string{
		"", "\n", "#", "'", `"`, "$(", "<<EOF", "a=b", "(( x = 1 ))", "[[ x ]]", "f() { :; }", "{", "}",
		"echo ${x:-$(rm y)}", "echo ${x/$(rm y)/z}", "${!x}", "case x in $(rm y)) ;; esac", "for x in $(rm y); do :; done",
		"cat <<-EOF\n\trm\n\tEOF", "echo \\\nrm x", "r\\\nm x", "ls; exit; rm x", "a=$(b=$(rm x))",
		"(( ' a[$( rm x)]' ))", "let \"b[$(rm y)]\"", "[[ -v 'a[`rm x`]' ]]", "echo ${a[\"$(rm x)\"]}", "a['$(rm x)']+=1",
	} {
		f.Add(s)
	}
	p := mustPolicy(f, fuzzPolicy)
	where := Where{Workspace: "/nonexistent/ws"}
	f.Fuzz(func(t *testing.T, cmd string) {
		d := p.Decide(cmd, where)
		if again := p.Decide(cmd, where); again.Action != d.Action || again.Reason() != d.Reason() || again.Commands != d.Commands {
			t.Fatalf("%q: not deterministic: %s %q then %s %q", cmd, d.Action, d.Reason(), again.Action, again.Reason())
		}
		parsed, runsRM := oracle(cmd)
		if !parsed && d.Action == tools.VerdictAllow && len(cmd) <= MaxCommandBytes {
			t.Fatalf("%q: allowed, but it does not parse", cmd)
		}
		if runsRM && d.Action == tools.VerdictAllow {
			t.Fatalf("%q: allowed, but it holds a simple command that may run rm", cmd)
		}
		withRM := cmd + "\nrm -rf x"
		if _, rm := oracle(withRM); rm && p.Decide(withRM, where).Action == tools.VerdictAllow {
			t.Fatalf("%q: allowed", withRM)
		}
		inner := cmd + "\nrm x"
		if _, rm := oracle(inner); rm {
			wrapped := "bash -c " + singleQuote(inner)
			if p.Decide(wrapped, where).Action == tools.VerdictAllow {
				t.Fatalf("%q: allowed", wrapped)
			}
		}
	})
}

// oracle parses cmd the way bash reads it and reports whether it parses and whether one of its
// simple commands has a first word that expands, in an empty environment and without globbing,
// to something called rm. It shares nothing with the policy but the parser.
func oracle(cmd string) (parsed, runsRM bool) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return false, false
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		if firstFieldIsRM(c.Args[0]) {
			runsRM = true
		}
		return true
	})
	if !runsRM {
		runsRM = arithRunsRM(file)
	}
	return true, runsRM
}

// firstFieldIsRM reports whether the word w expands to fields of which the first is called rm,
// with every variable empty and every substitution printing nothing.
func firstFieldIsRM(w *syntax.Word) (rm bool) {
	defer func() {
		if recover() != nil {
			rm = false // a word the expander cannot handle: not one the oracle can judge
		}
	}()
	cfg := &expand.Config{
		CmdSubst:  func(io.Writer, *syntax.CmdSubst) error { return nil },
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "/dev/fd/63", nil },
	}
	fields, err := expand.Fields(cfg, w)
	return err == nil && len(fields) > 0 && path.Base(fields[0]) == "rm"
}

// singleQuote returns s as one single-quoted bash word.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// arithRunsRM reports whether a word that bash evaluates as arithmetic or as a subscripted name
// ((( )), $(( )), let, a subscript, a slice, [[ -v ]] and [[ ]]'s numeric comparisons) holds, in
// its quoted text, a command substitution of rm: bash removes the quotes and expands it again.
func arithRunsRM(file *syntax.File) (rm bool) {
	check := func(n syntax.Node) {
		if n == nil {
			return
		}
		syntax.Walk(n, func(n syntax.Node) bool {
			if w, ok := n.(*syntax.Word); ok {
				var b strings.Builder
				for _, p := range w.Parts {
					switch p := p.(type) {
					case *syntax.SglQuoted:
						b.WriteString(p.Value)
					case *syntax.DblQuoted:
						for _, in := range p.Parts {
							if l, ok := in.(*syntax.Lit); ok {
								b.WriteString(l.Value)
							}
						}
					}
				}
				if t := strings.ReplaceAll(strings.Join(strings.Fields(b.String()), " "), "$$", ""); strings.Contains(t, "$(rm") || strings.Contains(t, "$( rm") || strings.Contains(t, "`rm") {
					rm = true
				}
			}
			return true
		})
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ArithmCmd:
			check(n.X)
		case *syntax.ArithmExp:
			check(n.X)
		case *syntax.ParamExp:
			if n.Index != nil {
				check(n.Index)
			}
		case *syntax.Assign:
			if n.Index != nil {
				check(n.Index)
			}
		case *syntax.LetClause:
			for _, e := range n.Exprs {
				check(e)
			}
		case *syntax.BinaryTest:
			if n.Op >= syntax.TsEql && n.Op <= syntax.TsGtr {
				check(n.X)
				check(n.Y)
			}
		case *syntax.UnaryTest:
			if w, ok := n.X.(*syntax.Word); ok && n.Op == syntax.TsVarSet && strings.Contains(sourceText(w), "[") {
				check(n.X) // a name is evaluated only for its subscript
			}
		}
		return true
	})
	return rm
}

// sourceText returns the literal text of the parts of w, quotes dropped.
func sourceText(w *syntax.Word) string {
	var b strings.Builder
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			b.WriteString(n.Value)
		case *syntax.SglQuoted:
			b.WriteString(n.Value)
		}
		return true
	})
	return b.String()
}
