package bashpolicy

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// otherShells speak a language other than bash's: the policy cannot read what they run.
var otherShells = map[string]bool{
	"zsh": true, "ksh": true, "mksh": true, "ksh93": true, "fish": true, "csh": true, "tcsh": true,
	"yash": true, "ash": true, "posh": true, "pwsh": true, "rc": true, "es": true, "elvish": true, "nu": true, "xonsh": true,
}

// runners run another command in a way the policy does not look through (their options, a
// command string of their own, a remote side): what they run cannot be judged.
var runners = map[string]bool{
	"chroot": true, "chrt": true, "flock": true, "ltrace": true, "nsenter": true, "parallel": true,
	"runuser": true, "script": true, "setpriv": true, "sg": true, "strace": true, "su": true,
	"taskset": true, "unshare": true, "valgrind": true, "watch": true, "expect": true, "unbuffer": true,
}

// special judges what the simple command ws (program name, words as written in subject) of
// statement s runs or changes beyond itself: the command a wrapper runs, the code a shell, eval
// or trap runs, a definition that a later command would use, a directory change.
func (j *judge) special(f frame, s *syntax.Stmt, name string, ws []word, subject string) {
	args := ws[1:]
	switch name {
	case "bash", "sh", "dash":
		j.shell(f, s, name, args, subject)
	case "busybox":
		if len(args) > 0 && args[0].lit && !strings.HasPrefix(args[0].text, "-") {
			j.inner(f, s, args, subject)
		}
	case "eval":
		j.eval(f, args, subject)
	case "source", ".":
		j.unknown(f, subject, "runs a script inside the shell, which the policy cannot see")
	case "trap":
		j.trap(f, args, subject)
	case "alias":
		j.alias(f, args, subject)
	case "hash":
		j.hash(f, s, args, subject)
	case "enable":
		j.enable(f, args, subject)
	case "fc":
		j.unknown(f, subject, "runs commands from the shell's history, which the policy cannot see")
	case "bind":
		// Only the options that list or remove bindings; a binding typed or run on a key is code.
		if n, seen, ok := bindOpts.parse(args); !ok || n < len(args) || has(seen, "x", "f") {
			j.unknown(f, subject, "changes key bindings, which can type or run commands in the shell")
		}
	case "complete", "compgen":
		j.complete(f, args, subject)
	case "builtin", "command", "exec", "env", "nice", "nohup", "timeout", "stdbuf", "time", "setsid", "ionice", "sudo", "doas":
		j.wrapper(f, s, name, args, subject)
	case "xargs":
		j.xargs(f, s, args, subject)
	case "find":
		j.find(f, s, args, subject)
	case "printf":
		j.operands(f, name, args, subject)
		j.setters(f, name, args, subject)
	case "read", "mapfile", "readarray", "getopts", "unset", "export", "declare", "typeset", "local", "readonly":
		j.setters(f, name, args, subject)
	case "cd", "pushd":
		j.chdir(f, name, args, subject)
	case "test", "[", "wait", "let", "shift", "exit", "return", "break", "continue", "ulimit":
		j.operands(f, name, args, subject)
	default:
		switch {
		case otherShells[name]:
			j.unknown(f, subject, "starts %s, whose language the policy does not read", name)
		case runners[name]:
			j.unknown(f, subject, "runs another command through %s, which the policy does not look through", name)
		}
	}
}

// shell judges bash, sh or dash (name) with the arguments args: the command string of -c, the
// script it reads from a literal here-document, or, for anything else it would run, unknown.
func (j *judge) shell(f frame, s *syntax.Stmt, name string, args []word, subject string) {
	cmdMode, stdin := false, false
	i := 0
options:
	for ; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			if cmdMode {
				break options // the command string
			}
			j.unknown(f, subject, "gives %s an argument the policy cannot read (%s)", name, w.src)
			return
		}
		t := w.text
		switch {
		case t == "--" || t == "-":
			i++
			break options
		case t == "--login" || t == "--rcfile" || t == "--init-file":
			j.unknown(f, subject, "starts %s with start-up files, which the policy cannot see", name)
			return
		case strings.HasPrefix(t, "--"):
			if !shellLongFlags[t] {
				j.unknown(f, subject, "gives %s the option %s, which the policy does not know", name, t)
				return
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for _, c := range t[1:] {
				switch {
				case c == 'c':
					cmdMode = true
				case c == 's':
					stdin = true
				case c == 'i' || c == 'l':
					j.unknown(f, subject, "starts an interactive or login %s, which reads start-up files the policy cannot see", name)
					return
				case c == 'o' || c == 'O':
					i++ // the option's name
				case !strings.ContainsRune("abefhkmnptuvxBCEHPTr", c):
					j.unknown(f, subject, "gives %s the option -%c, which the policy does not know", name, c)
					return
				}
			}
		default:
			break options
		}
	}
	var operands []word
	if i < len(args) {
		operands = args[i:]
	}
	switch {
	case cmdMode:
		if len(operands) == 0 {
			return // bash: -c: option requires an argument; nothing runs
		}
		if !operands[0].lit {
			j.unknown(f, subject, "runs a command string the policy cannot read (%s)", operands[0].src)
			return
		}
		j.code(f, operands[0].text, "run by `"+shorten(subject)+"`")
	case len(operands) > 0 && !stdin:
		j.unknown(f, subject, "runs the script %s, which the policy cannot see", operands[0].src)
	default:
		j.shellInput(f, s, name, subject)
	}
}

// shellLongFlags are the long options of bash that change nothing the policy judges.
var shellLongFlags = map[string]bool{
	"--norc": true, "--noprofile": true, "--posix": true, "--noediting": true, "--restricted": true,
	"--verbose": true, "--help": true, "--version": true, "--dump-strings": true, "--dump-po-strings": true,
	"--debugger": true, "--pretty-print": true,
}

// shellInput judges a shell that reads its commands from its standard input: they are judged when
// the statement s feeds it a here-document or here-string the policy can read, and unknown
// otherwise (a pipe, a file, the terminal).
func (j *judge) shellInput(f frame, s *syntax.Stmt, name, subject string) {
	var in *syntax.Redirect
	if s != nil {
		for _, r := range s.Redirs {
			if r.N != nil && r.N.Value != "0" {
				continue
			}
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
				in = r // the last one wins
			}
		}
	}
	if in == nil || (in.Op != syntax.Hdoc && in.Op != syntax.DashHdoc && in.Op != syntax.WordHdoc) {
		j.unknown(f, subject, "reads commands from its standard input (a pipe, a file or the terminal), which the policy cannot see")
		return
	}
	body, ok := inputText(f.src, in)
	if !ok {
		j.unknown(f, subject, "reads commands from a here-document with expansions, which the policy cannot read")
		return
	}
	j.code(f, body, "fed to "+name+" by `"+shorten(sourceOf(f.src, s))+"`")
}

// inputText returns the text the redirection r (a here-document or here-string of src) feeds,
// and false when it holds expansions whose value the policy cannot know.
func inputText(src string, r *syntax.Redirect) (string, bool) {
	if r.Op == syntax.WordHdoc {
		w := resolve(src, r.Word)
		return w.text + "\n", w.lit
	}
	if r.Hdoc == nil {
		return "", true
	}
	for _, p := range r.Hdoc.Parts {
		if _, ok := p.(*syntax.Lit); !ok {
			return "", false
		}
	}
	if quotedDelimiter(r.Word) {
		return r.Hdoc.Lit(), true
	}
	text, err := expand.Document(&expand.Config{}, r.Hdoc)
	return text, err == nil
}

// quotedDelimiter reports whether the here-document delimiter w is quoted, which makes the body
// literal text.
func quotedDelimiter(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); !ok || strings.ContainsRune(l.Value, '\\') {
			return true
		}
	}
	return false
}

// eval judges the code eval runs: its arguments joined with spaces, after the "--" that ends its
// (empty) options.
func (j *judge) eval(f frame, args []word, subject string) {
	if len(args) > 0 && args[0].lit && args[0].text == "--" {
		args = args[1:]
	}
	texts := make([]string, 0, len(args))
	for _, a := range args {
		if !a.lit {
			j.unknown(f, subject, "evaluates code the policy cannot read (%s)", a.src)
			return
		}
		texts = append(texts, a.text)
	}
	if len(texts) > 0 {
		j.code(f, strings.Join(texts, " "), "run by `"+shorten(subject)+"`")
	}
}

// trap judges the command a trap would run later.
func (j *judge) trap(f frame, args []word, subject string) {
	if len(args) > 0 && args[0].lit && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) < 2 { // listing (-l, -p, -P), or a single signal reset to its default
		if len(args) == 1 && !args[0].lit {
			j.unknown(f, subject, "sets a trap the policy cannot read (%s)", args[0].src)
		}
		return
	}
	if !args[0].lit {
		j.unknown(f, subject, "sets a trap whose command the policy cannot read (%s)", args[0].src)
		return
	}
	switch t := args[0].text; t {
	case "", "-", "-l", "-p", "-P":
	default:
		j.code(f, t, "run later by the trap `"+shorten(subject)+"`")
	}
}

// alias judges each alias definition as the command a later use would run: the value followed
// by the words the use gives it, which the policy cannot know yet.
func (j *judge) alias(f frame, args []word, subject string) {
	for _, a := range args {
		if !a.lit {
			j.unknown(f, subject, "defines an alias the policy cannot read (%s)", a.src)
			continue
		}
		name, value, ok := strings.Cut(a.text, "=")
		if !ok || strings.HasPrefix(a.text, "-") {
			continue // alias -p, or printing an alias
		}
		j.code(f, value+` "$@"`, "run by a later use of the alias "+name)
	}
}

// hash judges hash -p PATH NAME, which makes NAME run PATH, like a command PATH with arguments
// the policy cannot know yet.
func (j *judge) hash(f frame, s *syntax.Stmt, args []word, subject string) {
	_, seen, ok := hashOpts.parse(args)
	if !ok {
		j.unknown(f, subject, "changes the shell's table of programs in a way the policy cannot read")
		return
	}
	if p, ok := seen["p"]; ok {
		g := f
		g.via = "run by a later use of a name `" + shorten(subject) + "` binds"
		j.command(g, s, []word{{text: p, src: p, lit: true, single: true}, unknownWord(`"$@"`)}, p+` "$@"`)
	}
}

// enable judges enable: loading a builtin from a shared object runs code the policy cannot see.
func (j *judge) enable(f frame, args []word, subject string) {
	for _, a := range args {
		if !a.lit || strings.HasPrefix(a.text, "-") && strings.ContainsRune(a.text, 'f') {
			j.unknown(f, subject, "loads a builtin from a shared object, code the policy cannot see")
			return
		}
	}
}

// complete judges the command strings completion runs (complete -C, compgen -C) and the word
// list compgen expands (-W).
func (j *judge) complete(f frame, args []word, subject string) {
	_, seen, ok := completeOpt.parse(args)
	if !ok {
		j.unknown(f, subject, "sets up completion the policy cannot read")
		return
	}
	if c, ok := seen["C"]; ok {
		j.code(f, c, "run by completion set up by `"+shorten(subject)+"`")
	}
	if w, ok := seen["W"]; ok {
		j.laterCode(f, w, "expanded by `"+shorten(subject)+"`")
	}
}

// laterCode judges the command and process substitutions in text, a string bash expands later
// (a word list, or a variable's value that an arithmetic context evaluates).
func (j *judge) laterCode(f frame, text, how string) {
	if !strings.Contains(text, "$(") && !strings.Contains(text, "`") && !strings.Contains(text, "<(") && !strings.Contains(text, ">(") {
		return
	}
	g := f.nested(how)
	g.src = text
	w, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(text))
	if err != nil {
		return // bash could not expand it either
	}
	j.parsed += len(text)
	if g.depth > maxDepth || j.parsed > maxParsed {
		j.unknown(g, text, "nests more code than the policy reads")
		return
	}
	j.walk(g, w)
}

// chdir records where cd or pushd may take the shell, so that redirections to relative paths
// are judged against every directory the shell may be in.
func (j *judge) chdir(f frame, name string, args []word, subject string) {
	spec := cdOpts
	if name == "pushd" {
		spec = pushdOpts
		if len(args) == 1 && args[0].lit && len(args[0].text) > 1 && strings.Trim(args[0].text[1:], "0123456789") == "" &&
			(args[0].text[0] == '+' || args[0].text[0] == '-') {
			return // pushd +N / -N rotates the stack: only directories it was in
		}
	}
	i, seen, ok := spec.parse(args)
	switch {
	case !ok || has(seen, "P"):
		j.lost = true // unreadable, or cd -P: the physical directory, links resolved
	case i >= len(args):
		if name == "cd" { // cd with no operand: the home directory
			if j.where.Home == "" {
				j.lost = true
			} else {
				j.cds = append(j.cds, j.where.Home)
			}
		}
	case !args[i].lit:
		j.lost = true
	case args[i].text == "-":
		// the previous directory: one the shell was already in
	default:
		t := args[i].text
		if j.where.CDPath && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "./") && !strings.HasPrefix(t, "../") && t != "." && t != ".." {
			j.lost = true // CDPATH may send it anywhere
			return
		}
		j.cds = append(j.cds, t)
	}
}
