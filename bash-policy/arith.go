package bashpolicy

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// evalText judges text, a literal string bash may evaluate as arithmetic or as a variable name
// with a subscript (an operand of (( )), [[ -eq ]], [[ -v ]], a name given to read, printf -v,
// declare, unset …): bash expands a subscript or operand again when it evaluates it, so the
// command substitutions in it run, even those that were quoted when the string was written.
func (j *judge) evalText(f frame, text, subject string) {
	if !strings.ContainsAny(text, "$`") {
		return
	}
	if strings.ContainsAny(text, `'"\`) {
		j.unknown(f, subject, "holds quoted code (%s) that bash runs when it evaluates it as arithmetic or as a subscript", shorten(text))
		return
	}
	if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(text)); err != nil {
		j.unknown(f, subject, "holds code (%s) that bash may run when it evaluates it as arithmetic or as a subscript, which the policy cannot parse", shorten(text))
		return
	}
	j.laterCode(f, text, "run when bash evaluates `"+shorten(text)+"` as arithmetic or as a subscript")
}

// arithWords judges the words of the arithmetic expression x whose quotes hide code from the
// parser: bash removes the quotes and evaluates what is left.
func (j *judge) arithWords(f frame, x syntax.Node, subject string) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			j.quotedOperand(f, w, subject)
			j.useWord(f, w, subject)
		}
		if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil && p.Short && !p.Dollar.IsValid() {
			j.uses = append(j.uses, varUse{p.Param.Value, subject, f}) // a[i]: the element's value
		}
		return true
	})
}

// quotedOperand judges the word w, evaluated as arithmetic or as a name after its quotes are
// removed, when it holds quotes or backslashes.
func (j *judge) quotedOperand(f frame, w *syntax.Word, subject string) {
	if w == nil {
		return
	}
	quoted := false
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		case *syntax.Lit:
			quoted = quoted || strings.ContainsRune(p.Value, '\\')
		}
	}
	if !quoted {
		return
	}
	if text, ok := literalValue(w); ok {
		j.evalText(f, text, subject)
	}
}

// nameText judges text, a variable name bash resolves: the subscript of NAME[SUB] is evaluated.
func (j *judge) nameText(f frame, text, subject string) {
	if i := strings.IndexByte(text, '['); i > 0 {
		j.evalText(f, text[i:], subject)
	}
}

// literalValue returns the value of w when it holds no expansion, as an assignment gives it
// (quotes and backslashes removed, no globbing, no word splitting), and false otherwise.
func literalValue(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if !p.Dollar {
				b.WriteString(p.Value)
				continue
			}
			s, err := expand.Literal(&expand.Config{}, &syntax.Word{Parts: []syntax.WordPart{p}})
			if err != nil {
				return "", false
			}
			b.WriteString(s)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, in := range p.Parts {
				l, ok := in.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(l.Value, "$`\"\\\n"))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes of s that escape the next character (any character when
// only is "", else only those in only); a backslash before a newline removes both.
func unescape(s, only string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (only == "" || strings.IndexByte(only, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// testArith are the operators of test whose operands are numbers.
var testArith = map[string]bool{"-eq": true, "-ne": true, "-lt": true, "-le": true, "-gt": true, "-ge": true}

// operands judges the literal words of the builtin name (args) that bash may evaluate as
// arithmetic or as a variable name: the operands of test's -v, -R and numeric comparisons,
// wait -p's name, let's expressions, printf's arguments (numeric conversions) and the numbers
// of shift, exit, return, break, continue and ulimit.
func (j *judge) operands(f frame, name string, args []word, subject string) {
	if name == "printf" {
		args = printfArgs(args)
	}
	for i, a := range args {
		if !a.lit {
			continue
		}
		switch name {
		case "test", "[":
			if (a.text == "-v" || a.text == "-R") && i+1 < len(args) && args[i+1].lit {
				j.nameText(f, args[i+1].text, subject)
			}
			if testArith[a.text] {
				for _, k := range []int{i - 1, i + 1} {
					if k >= 0 && k < len(args) && args[k].lit {
						j.evalText(f, args[k].text, subject)
					}
				}
			}
		case "wait":
			if a.text == "-p" && i+1 < len(args) && args[i+1].lit {
				j.nameText(f, args[i+1].text, subject)
			}
		default:
			j.evalText(f, a.text, subject)
		}
	}
}

// alwaysTainted are the variables whose value comes from outside what the policy reads: the
// positional parameters, the last argument of the previous command, a regular expression's
// matches and the command being run.
var alwaysTainted = map[string]bool{"_": true, "@": true, "*": true, "BASH_REMATCH": true, "BASH_COMMAND": true,
	"BASH_EXECUTION_STRING": true, "BASH_ARGV": true, "READLINE_LINE": true, "COMP_LINE": true, "COMP_WORDS": true}

// varUse is a variable whose value bash evaluates as arithmetic, met in frame f in subject.
type varUse struct {
	name, subject string
	f             frame
}

// taint records that the variable name may hold a value the policy cannot read.
func (j *judge) taint(name string) {
	if i := strings.IndexByte(name, '['); i > 0 {
		name = name[:i]
	}
	if j.tainted == nil {
		j.tainted = map[string]bool{}
	}
	j.tainted[name] = true
}

// useWord records the variable that the arithmetic operand w names (x, $x, ${x}, a[i]).
func (j *judge) useWord(f frame, w *syntax.Word, subject string) {
	if w == nil || len(w.Parts) != 1 {
		return
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if isName(p.Value) && (p.Value[0] < '0' || p.Value[0] > '9') { // a bare number is no name
			j.uses = append(j.uses, varUse{p.Value, subject, f})
		}
	case *syntax.ParamExp:
		if p.Param != nil && !p.Length {
			j.uses = append(j.uses, varUse{p.Param.Value, subject, f})
		}
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			j.useWord(f, &syntax.Word{Parts: p.Parts}, subject)
		}
	}
}

// isName reports whether s is a variable name, or a positional parameter.
func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return s != "" && strings.Trim(s, "0123456789") == "" && s != "0"
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// checkUses makes unknown every arithmetic use of a variable that may hold a value the policy
// cannot read (read from input, a command's output, a positional parameter): bash would run the
// code such a value may hide in a subscript.
func (j *judge) checkUses() {
	seen := map[string]bool{}
	for _, u := range j.uses {
		positional := strings.Trim(u.name, "0123456789") == ""
		if seen[u.name] || !(j.tainted[u.name] || alwaysTainted[u.name] || positional) {
			continue
		}
		seen[u.name] = true
		j.unknown(u.f, u.subject, "evaluates %s as arithmetic, and its value, which the policy cannot read, may hide code in a subscript", u.name)
	}
}

// taintedValue reports whether the assigned value w may be one the policy cannot read: any
// expansion but arithmetic and the shell's numeric parameters.
func taintedValue(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit, *syntax.SglQuoted, *syntax.ArithmExp:
		case *syntax.ParamExp:
			if p.Param == nil || !strings.Contains("?#$!", p.Param.Value) || len(p.Param.Value) != 1 {
				return true
			}
		case *syntax.DblQuoted:
			if taintedValue(&syntax.Word{Parts: p.Parts}) {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// printfArgs returns the words of a printf command that its conversions consume: not -v and its
// name (judged as a name by setters), not "--", and not the format, which bash never evaluates.
func printfArgs(args []word) []word {
	if len(args) >= 2 && args[0].text == "-v" {
		args = args[2:]
	}
	if len(args) > 0 && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) > 0 {
		args = args[1:]
	}
	return args
}
