package bashpolicy

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// varKind is what setting a variable can make bash or a program do.
type varKind uint8

const (
	plainVar   varKind = iota
	commandVar         // its value is a command line a program runs (PAGER, GIT_SSH_COMMAND, …)
	pathVar            // PATH: where program names are looked up
	dirVar             // CDPATH: where cd goes
	codeVar            // makes bash or every program load code the policy cannot see
)

// specialVars are the variables whose value the policy judges when they are set.
var specialVars = map[string]varKind{
	"PATH": pathVar, "CDPATH": dirVar,
	// Command lines that programs run.
	"PROMPT_COMMAND": commandVar, "PAGER": commandVar, "GIT_PAGER": commandVar, "MANPAGER": commandVar,
	"EDITOR": commandVar, "VISUAL": commandVar, "GIT_EDITOR": commandVar, "GIT_SEQUENCE_EDITOR": commandVar,
	"GIT_SSH": commandVar, "GIT_SSH_COMMAND": commandVar, "GIT_ASKPASS": commandVar, "SSH_ASKPASS": commandVar,
	"SUDO_ASKPASS": commandVar, "GIT_EXTERNAL_DIFF": commandVar, "LESSOPEN": commandVar, "LESSCLOSE": commandVar,
	"BROWSER": commandVar, "GIT_PROXY_COMMAND": commandVar,
	// Code bash or the programs it starts would load or run.
	"BASH_ENV": codeVar, "ENV": codeVar, "SHELLOPTS": codeVar, "BASHOPTS": codeVar, "PS0": codeVar,
	"PS1": codeVar, "PS2": codeVar, "PS4": codeVar, "BASH_ALIASES": codeVar, "BASH_CMDS": codeVar,
	"BASH_LOADABLES_PATH": codeVar, "INPUTRC": codeVar, "EXECIGNORE": codeVar, "GIT_EXEC_PATH": codeVar,
	"GIT_TEMPLATE_DIR": codeVar, "GIT_DIR": codeVar, "GIT_WORK_TREE": codeVar,
}

// kindOf returns what setting the variable name can do.
func kindOf(name string) varKind {
	if k, ok := specialVars[name]; ok {
		return k
	}
	for _, prefix := range []string{"BASH_FUNC_", "LD_", "DYLD_", "GIT_CONFIG"} {
		if strings.HasPrefix(name, prefix) {
			return codeVar
		}
	}
	return plainVar
}

// kindText says, between commas after a variable's name, what a variable of kind k is.
var kindText = map[varKind]string{
	commandVar: "a command line that programs run",
	pathVar:    "where program names are looked up",
	dirVar:     "where cd looks for directories",
	codeVar:    "which makes bash or the programs it starts load or run code",
}

// assign judges the assignment a of frame f (NAME=VALUE, NAME+=VALUE, NAME[i]=V, NAME=(…)).
func (j *judge) assign(f frame, a *syntax.Assign) {
	if a.Name == nil {
		return
	}
	name, subject := a.Name.Value, sourceOf(f.src, a)
	if a.Index != nil || a.Array != nil {
		if kindOf(name) != plainVar {
			j.unknown(f, subject, "sets %s, %s, in a way the policy does not follow", name, kindText[kindOf(name)])
		}
		return
	}
	if a.Naked {
		return // declared without a value (export NAME, readonly NAME)
	}
	v := word{lit: true, single: true}
	if a.Value != nil {
		if taintedValue(a.Value) {
			j.taint(name)
		}
		v = resolve(f.src, a.Value)
		if text, ok := literalValue(a.Value); ok && !v.lit {
			v.text, v.lit = text, true // an assignment does not glob: x=a[\$\(rm\ x\)] is literal
		}
	}
	j.assignValue(f, name, v, subject, a.Append)
}

// assignValue judges setting the variable name to the value v (appending to it with appended),
// written as subject.
func (j *judge) assignValue(f frame, name string, v word, subject string, appended bool) {
	k := kindOf(name)
	switch {
	case k == plainVar:
		if v.lit {
			// bash evaluates a value as arithmetic in $(( )), (( )) and [[ -eq ]], running any
			// command substitution in it: judge it now.
			j.laterCode(f, v.text, "run if bash evaluates the value of "+name)
		}
	case k == pathVar && v.lit:
		j.path(f, name, v.text, subject, appended)
	case k == commandVar && v.lit && !appended:
		if strings.TrimSpace(v.text) != "" {
			j.code(f, v.text, "run by programs through "+name)
		}
	case k == dirVar:
		j.lost = true
		j.unknown(f, subject, "sets %s, %s, so the policy can no longer tell which directory the shell is in", name, kindText[k])
	case k == codeVar:
		j.unknown(f, subject, "sets %s, %s the policy cannot see", name, kindText[k])
	default:
		j.unknown(f, subject, "sets %s, %s, to a value the policy cannot read", name, kindText[k])
	}
}

// path judges setting PATH (name) to value: every directory on it must be one of the system's
// program directories, or a program name could run a program the policy does not know.
func (j *judge) path(f frame, name, value, subject string, appended bool) {
	dirs := strings.Split(value, ":")
	if appended && len(dirs) > 1 && dirs[0] == "" {
		dirs = dirs[1:] // PATH+=:/dir
	}
	for _, d := range dirs {
		if d == "" || !systemDirs[path.Clean(d)] {
			shown := d
			if shown == "" {
				shown = "the current directory"
			}
			j.unknown(f, subject, "puts %s on %s, so a program name could run a program the policy does not know", shown, name)
			return
		}
	}
}

// setVar judges setting the variable named by the word n to a value the policy cannot see (read,
// a for loop, an arithmetic assignment, unset, …).
func (j *judge) setVar(f frame, n word, subject string) {
	if !n.lit {
		j.unknown(f, subject, "sets a variable the policy cannot name (%s)", n.src)
		return
	}
	j.nameText(f, n.text, subject)
	k := kindOf(n.text)
	if k == plainVar {
		return
	}
	if k == dirVar {
		j.lost = true
	}
	if k == codeVar {
		j.unknown(f, subject, "sets %s, %s the policy cannot see", n.text, kindText[k])
		return
	}
	j.unknown(f, subject, "sets %s, %s, to a value the policy cannot see", n.text, kindText[k])
}

// decl judges a declaration clause (declare, local, export, readonly, typeset): the command
// against the rules, then each option and assignment.
func (j *judge) decl(f frame, d *syntax.DeclClause) {
	variant, subject := d.Variant.Value, sourceOf(f.src, d)
	ws := []word{{text: variant, src: variant, lit: true, single: true}}
	for _, a := range d.Args {
		switch {
		case a.Name == nil && a.Value != nil:
			ws = append(ws, resolve(f.src, a.Value))
		case a.Name != nil:
			w := word{text: a.Name.Value, src: sourceOf(f.src, a), lit: a.Index == nil && a.Array == nil, single: true}
			if !a.Naked && a.Value != nil {
				v := resolve(f.src, a.Value)
				w.text, w.lit = w.text+"="+v.text, w.lit && v.lit
			} else if !a.Naked {
				w.text += "="
			}
			ws = append(ws, w)
		}
	}
	j.commands++
	v, r, why, unknown := j.p.judgeRules(variant, ws)
	j.add(f, v, subject, r, why, unknown)
	for i, a := range d.Args {
		switch {
		case a.Name == nil && a.Value != nil:
			j.declOption(f, variant, ws[i+1], subject)
		case a.Name != nil && a.Naked && variant != "export" && variant != "readonly":
			j.setVar(f, word{text: a.Name.Value, lit: true, single: true}, subject) // local PATH: unset in the function
		case a.Name != nil:
			j.assign(f, a)
		}
	}
}

// declOption judges a word of a declaration that is not an assignment the parser could see: an
// option, or a word whose value bash reads only when it runs.
func (j *judge) declOption(f frame, variant string, w word, subject string) {
	switch {
	case !w.lit:
		j.unknown(f, subject, "declares a variable the policy cannot name (%s)", w.src)
	case strings.HasPrefix(w.text, "-") || strings.HasPrefix(w.text, "+"):
		if variant != "export" && strings.ContainsRune(w.text, 'n') {
			j.unknown(f, subject, "makes a name reference (%s), through which a later assignment may set any variable", w.text)
		}
	default:
		j.nameText(f, strings.SplitN(w.text, "=", 2)[0], subject)
		if name, value, ok := strings.Cut(w.text, "="); ok {
			j.assignValue(f, name, word{text: value, src: w.src, lit: true, single: true}, subject, false)
		}
	}
}

// declWords judges export, declare, typeset, local or readonly (name) run as a plain command
// with the words args (through builtin or command, where the parser sees no assignments).
func (j *judge) declWords(f frame, name string, args []word, subject string) {
	for _, w := range args {
		j.declOption(f, name, w, subject)
	}
}

// let judges a let clause against the rules; the variables it assigns are judged as the walk
// reaches its arithmetic.
func (j *judge) let(f frame, l *syntax.LetClause) {
	ws := []word{{text: "let", src: "let", lit: true, single: true}}
	for _, e := range l.Exprs {
		ws = append(ws, word{src: sourceOf(f.src, e), single: true})
	}
	j.commands++
	v, r, why, unknown := j.p.judgeRules("let", ws)
	j.add(f, v, sourceOf(f.src, l), r, why, unknown)
}
