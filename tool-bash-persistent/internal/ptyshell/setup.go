package ptyshell

import (
	"strings"
)

// controlVars are the shell variables the set-up gives values of its own. They are shell
// variables, never exported: a program the shell starts (a nested bash, su, nix-shell) inherits
// none of them, so it cannot print our markers, carry the shell's token or ignore end-of-file.
// The same names are dropped from the environment the shell starts with.
var controlVars = []string{"PS1", "PS2", "PROMPT_COMMAND", "IGNOREEOF", "HISTFILE", "HISTSIZE"}

// setupScript returns the shell's set-up, the one place where its settings live: bash reads it
// with --rcfile before its first prompt (it is removed once that prompt is seen). token marks
// the markers; each marker also carries the shell's $$, so a nested shell that was handed the
// variables anyway (export, set -a) prints markers of its own process, which are not ours.
//
//   - PS1 shows an OSC 133 A escape before the visible prompt Prompt: bash prints it itself (on
//     standard error), whatever functions, builtins or traps the commands defined.
//   - PS2 shows the continuation escape before "> ".
//   - PROMPT_COMMAND prints the OSC 133 D escape with $? before every prompt (on standard
//     output, like the end marker), then re-asserts PS1 and PS2 and unexports all three.
//   - IGNOREEOF keeps an end-of-file meant for a program from ending the shell; HISTFILE and
//     HISTSIZE turn history off (nothing is read, kept or written).
func setupScript(token string) string {
	ps1 := `\[\e]133;A;aid=` + token + `;pid=$$\a\]` + Prompt
	ps2 := `\[\e]133;dsh-ps2;aid=` + token + `;pid=$$\a\]> `
	pc := `\builtin printf '\033]133;D;%s;aid=` + token + `;pid=%s\007' "$?" "$$"; ` +
		`PS1=` + shellQuote(ps1) + `; PS2=` + shellQuote(ps2) + `; \builtin export -n PS1 PS2 PROMPT_COMMAND`
	lines := []string{
		"PS1=" + shellQuote(ps1),
		"PS2=" + shellQuote(ps2),
		"PROMPT_COMMAND=" + shellQuote(pc),
		"IGNOREEOF=10",
		"HISTFILE=",
		"HISTSIZE=0",
		`\builtin export -n ` + strings.Join(controlVars, " "),
	}
	return strings.Join(lines, "\n") + "\n"
}

// shellQuote returns s as one single-quoted bash word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// environ returns base without the control variables and the entries of set, followed by set:
// the environment the shell starts with, one entry per name.
func environ(base, set []string) []string {
	drop := map[string]bool{}
	for _, name := range controlVars {
		drop[name] = true
	}
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		drop[name] = true
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		name, _, ok := strings.Cut(kv, "=")
		if ok && !drop[name] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
