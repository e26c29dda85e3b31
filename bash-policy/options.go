package bashpolicy

import (
	"slices"
	"strings"
)

// opts is the option syntax of a command that runs another one (env, timeout, xargs, …): which
// options it has and which take an argument. The policy must know them all to find where the
// inner command starts, so an option it does not know makes the command unknown.
type opts struct {
	flags   string   // short options without an argument
	withArg string   // short options with an argument, attached (-n5) or next (-n 5)
	optArg  string   // short options with an optional argument, attached only (-i{})
	long    []string // long options without an argument
	longArg []string // long options with an argument, =value or next word
	longOpt []string // long options with an optional argument, =value only
}

// parse reads the options at the start of ws. It returns the index of the first operand (len(ws)
// when there is none), the options seen (a short option by its letter, a long one by its name
// with the dashes; the value is its argument or ""), and false when a word cannot be read: one
// that is not literal where an option may be, or an option the syntax does not know.
func (o opts) parse(ws []word) (int, map[string]string, bool) {
	seen := map[string]string{}
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if !w.lit {
			return i, seen, false
		}
		t := w.text
		switch {
		case t == "--":
			return i + 1, seen, true
		case t == "-" || !strings.HasPrefix(t, "-"):
			return i, seen, true
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t, "=")
			switch {
			case slices.Contains(o.long, name) && !hasVal, slices.Contains(o.longOpt, name):
				seen[name] = val
			case slices.Contains(o.longArg, name):
				if !hasVal {
					if i+1 >= len(ws) || !ws[i+1].lit {
						return i, seen, false
					}
					i++
					val = ws[i].text
				}
				seen[name] = val
			default:
				return i, seen, false
			}
		default:
			var ok bool
			if i, ok = o.short(ws, i, seen); !ok {
				return i, seen, false
			}
		}
	}
	return len(ws), seen, true
}

// short reads the cluster of short options ws[i] into seen and returns the index of the last
// word it used, and false for an unknown option or a missing argument.
func (o opts) short(ws []word, i int, seen map[string]string) (int, bool) {
	t := ws[i].text
	for k := 1; k < len(t); k++ {
		c := t[k : k+1]
		switch {
		case strings.Contains(o.flags, c):
			seen[c] = ""
		case strings.Contains(o.optArg, c):
			seen[c] = t[k+1:]
			return i, true
		case strings.Contains(o.withArg, c):
			if k+1 < len(t) {
				seen[c] = t[k+1:]
				return i, true
			}
			if i+1 >= len(ws) || !ws[i+1].lit {
				return i, false
			}
			seen[c] = ws[i+1].text
			return i + 1, true
		default:
			return i, false
		}
	}
	return i, true
}

// has reports whether any of the options names was seen.
func has(seen map[string]string, names ...string) bool {
	for _, n := range names {
		if _, ok := seen[n]; ok {
			return true
		}
	}
	return false
}

// Option syntaxes of the wrappers the policy looks through (GNU coreutils, findutils, sudo,
// util-linux, bash builtins).
var (
	envOpts = opts{flags: "i0v", withArg: "uCS",
		long:    []string{"--ignore-environment", "--null", "--debug", "--help", "--version", "--list-signal-handling"},
		longArg: []string{"--unset", "--chdir", "--split-string"},
		longOpt: []string{"--block-signal", "--default-signal", "--ignore-signal"}}
	niceOpts    = opts{withArg: "n", longArg: []string{"--adjustment"}, long: []string{"--help", "--version"}}
	nohupOpts   = opts{long: []string{"--help", "--version"}}
	timeoutOpts = opts{flags: "v", withArg: "sk",
		long:    []string{"--foreground", "--preserve-status", "--verbose", "--help", "--version"},
		longArg: []string{"--signal", "--kill-after"}}
	stdbufOpts = opts{withArg: "ioe", longArg: []string{"--input", "--output", "--error"}, long: []string{"--help", "--version"}}
	xargsOpts  = opts{flags: "0oprtx", withArg: "adEILnPs", optArg: "eil",
		long: []string{"--null", "--open-tty", "--interactive", "--no-run-if-empty", "--verbose", "--exit",
			"--show-limits", "--help", "--version"},
		longArg: []string{"--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
		longOpt: []string{"--eof", "--replace"}}
	timeOpts = opts{flags: "apvq", withArg: "fo",
		long:    []string{"--append", "--portability", "--verbose", "--quiet", "--help", "--version"},
		longArg: []string{"--format", "--output"}}
	setsidOpts = opts{flags: "cfw", long: []string{"--ctty", "--fork", "--wait", "--help", "--version"}}
	ioniceOpts = opts{flags: "t", withArg: "cnpPu",
		long: []string{"--ignore", "--help", "--version"}, longArg: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}}
	sudoOpts = opts{flags: "AbEHKknPSBNlvVieh", withArg: "CDgprRtTUu",
		long: []string{"--askpass", "--background", "--set-home", "--remove-timestamp", "--reset-timestamp",
			"--non-interactive", "--preserve-groups", "--stdin", "--bell", "--list", "--validate", "--version",
			"--shell", "--login", "--edit", "--help"},
		longArg: []string{"--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role",
			"--type", "--command-timeout", "--other-user", "--user"},
		longOpt: []string{"--preserve-env"}}
	doasOpts    = opts{flags: "nsL", withArg: "uC"}
	commandOpts = opts{flags: "pvV"}
	execOpts    = opts{flags: "cl", withArg: "a"}
	noOpts      = opts{}
	hashOpts    = opts{flags: "rltd", withArg: "p"}
	readOpts    = opts{flags: "ers", withArg: "adinNptu"}
	mapfileOpts = opts{flags: "t", withArg: "dnOsuCc"}
	unsetOpts   = opts{flags: "fvn"}
	cdOpts      = opts{flags: "LPe@"}
	pushdOpts   = opts{flags: "n"}
	bindOpts    = opts{flags: "lpPvVsSX", withArg: "mqurf"}
	completeOpt = opts{flags: "abcdefgjksuvDEIrp", withArg: "oAGWFCXPS"}
)
