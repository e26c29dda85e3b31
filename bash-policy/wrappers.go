package bashpolicy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wrapperOpts are the option syntaxes of the commands that run the command after their options.
var wrapperOpts = map[string]opts{
	"builtin": noOpts, "command": commandOpts, "exec": execOpts, "env": envOpts, "nice": niceOpts,
	"nohup": nohupOpts, "timeout": timeoutOpts, "stdbuf": stdbufOpts, "time": timeOpts,
	"setsid": setsidOpts, "ionice": ioniceOpts, "sudo": sudoOpts, "doas": doasOpts,
}

// wrapper judges the command that the wrapper name (one of wrapperOpts) runs with args, and the
// variables it sets for it.
func (j *judge) wrapper(f frame, s *syntax.Stmt, name string, args []word, subject string) {
	if name == "nice" && len(args) > 0 && args[0].lit && len(args[0].text) > 1 && args[0].text[0] == '-' &&
		strings.Trim(args[0].text[1:], "0123456789") == "" {
		args = args[1:] // nice -10 cmd
	}
	i, seen, ok := wrapperOpts[name].parse(args)
	if !ok {
		j.unknown(f, subject, "gives %s an argument the policy cannot read or an option it does not know, so it cannot tell which command %s runs", name, name)
		return
	}
	if has(seen, "--help", "--version") {
		return
	}
	switch name {
	case "command":
		if has(seen, "v", "V") {
			return // describes the command, runs nothing
		}
	case "env":
		if has(seen, "S", "--split-string") {
			j.unknown(f, subject, "splits a string into a command (env -S), which the policy does not read")
			return
		}
		if i < len(args) && args[i].text == "-" {
			i++
		}
		i = j.envAssigns(f, args, i)
	case "timeout":
		i++ // the duration
	case "ionice":
		if has(seen, "p", "P", "u", "--pid", "--pgid", "--uid") {
			return // changes running processes, runs nothing
		}
	case "sudo", "doas":
		if has(seen, "l", "v", "V", "K", "e", "C", "--list", "--validate", "--edit") {
			return // lists, validates, edits files or checks a configuration
		}
		i = j.envAssigns(f, args, i)
		if i >= len(args) && has(seen, "s", "i", "--shell", "--login") {
			j.unknown(f, subject, "starts an interactive shell as another user, which the policy cannot see")
			return
		}
	}
	if i < len(args) {
		j.inner(f, s, args[i:], subject)
	}
}

// envAssigns judges the NAME=VALUE words of args from i on, which env and sudo put in the
// environment of the command they run, and returns the index of the first other word.
func (j *judge) envAssigns(f frame, args []word, i int) int {
	for ; i < len(args); i++ {
		w := args[i]
		if !w.lit || strings.IndexByte(w.text, '=') <= 0 {
			return i
		}
		name, value, _ := strings.Cut(w.text, "=")
		j.assignValue(f, name, word{text: value, src: w.src, lit: true, single: true}, w.src, false)
	}
	return i
}

// xargs judges the command xargs runs: its operands (echo when none) followed by the items it
// reads, or with a replacement string (-I, -i, --replace) its operands with every word holding
// that string made unknown.
func (j *judge) xargs(f frame, s *syntax.Stmt, args []word, subject string) {
	i, seen, ok := xargsOpts.parse(args)
	if !ok {
		j.unknown(f, subject, "gives xargs an argument the policy cannot read or an option it does not know, so it cannot tell which command xargs runs")
		return
	}
	if has(seen, "--help", "--version", "--show-limits") && i >= len(args) {
		return
	}
	repl := seen["I"]
	for _, opt := range []string{"i", "--replace"} {
		if v, ok := seen[opt]; ok {
			repl = v
			if repl == "" {
				repl = "{}"
			}
		}
	}
	inner := append([]word(nil), args[i:]...)
	if len(inner) == 0 {
		inner = []word{{text: "echo", src: "echo", lit: true, single: true}}
	}
	if repl != "" {
		substitute(inner, repl)
	} else {
		inner = append(inner, unknownWord("…"))
	}
	j.inner(f, s, inner, subject)
}

// substitute makes every word of ws that holds marker (a string replaced at run time) a word of
// unknown value.
func substitute(ws []word, marker string) {
	for k, w := range ws {
		if !w.lit || strings.Contains(w.text, marker) {
			ws[k] = word{src: w.src, single: w.single || w.lit}
		}
	}
}

// find judges the commands find runs with -exec, -execdir, -ok and -okdir, with {} (the file
// names it finds) made unknown. A word the policy cannot read may itself be such an action, so
// it makes find unknown when what follows it could complete one.
func (j *judge) find(f frame, s *syntax.Stmt, args []word, subject string) {
	for i, w := range args {
		if !w.single {
			j.unknown(f, subject, "gives find an argument that may expand to several words (%s), such as -exec and a command", w.src)
			return
		}
		if !w.lit && execTail(args[i+1:]) {
			j.unknown(f, subject, "gives find an argument the policy cannot read (%s) followed by what could complete an -exec action", w.src)
			return
		}
	}
	for i := 0; i < len(args); i++ {
		switch args[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
			end := execEnd(args, i+1)
			if end < 0 {
				return // find refuses an action without its terminator: nothing runs
			}
			inner := append([]word(nil), args[i+1:end]...)
			substitute(inner, "{}")
			j.inner(f, s, inner, subject)
			i = end
		}
	}
}

// execTail reports whether rest, the words after one that could be -exec, could hold a command
// and its terminator.
func execTail(rest []word) bool {
	for k, w := range rest {
		if k >= 1 && (!w.lit || w.text == ";" || w.text == "+") {
			return true
		}
	}
	return false
}

// execEnd returns the index of the word that ends the -exec action starting at start: ";" or a
// "+" right after "{}"; -1 when there is none.
func execEnd(args []word, start int) int {
	for k := start; k < len(args); k++ {
		switch {
		case args[k].text == ";":
			return k
		case args[k].text == "+" && k > start && args[k-1].text == "{}":
			return k
		}
	}
	return -1
}

// setters judges the builtins that set variables named by their arguments (read, printf -v,
// mapfile, getopts, unset, and export and declare when they come through builtin or command),
// and the callback mapfile runs.
func (j *judge) setters(f frame, name string, args []word, subject string) {
	var names []word
	switch name {
	case "read", "mapfile", "readarray", "unset":
		spec := map[string]opts{"read": readOpts, "mapfile": mapfileOpts, "readarray": mapfileOpts, "unset": unsetOpts}[name]
		i, seen, ok := spec.parse(args)
		if !ok {
			j.unknown(f, subject, "sets variables the policy cannot name")
			return
		}
		if name == "unset" && has(seen, "f") {
			return
		}
		if c, ok := seen["C"]; ok {
			j.code(f, c+` "$@"`, "run as the callback of `"+shorten(subject)+"`")
		}
		if a, ok := seen["a"]; ok {
			names = append(names, word{text: a, src: a, lit: true, single: true})
		}
		names = append(names, args[i:]...)
		if name != "read" && name != "unset" && len(names) > 1 {
			names = names[:1] // mapfile takes one array name; the rest is an error
		}
	case "printf":
		if len(args) >= 2 && (!args[0].lit || args[0].text == "-v") {
			if !args[0].single {
				j.unknown(f, subject, "may set a variable the policy cannot name (%s)", args[0].src)
				return
			}
			names = append(names, args[1])
		}
	case "getopts":
		if len(args) >= 2 {
			names = append(names, args[1])
		}
	default: // export, declare, typeset, local, readonly as plain words
		j.declWords(f, name, args, subject)
		return
	}
	switch {
	case name == "read" && len(names) == 0:
		j.taint("REPLY")
	case (name == "mapfile" || name == "readarray") && len(names) == 0:
		j.taint("MAPFILE")
	case name == "getopts":
		j.taint("OPTARG")
	}
	for _, n := range names {
		j.setVar(f, n, subject)
		if n.lit && name != "unset" {
			j.taint(n.text)
		}
	}
}
