package bashpolicy

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/tools"
)

// tablePolicy is the one policy of the decision table: the example, with the harmless
// commands and wrappers the table uses allowed, so that what the table checks is the parse, not
// the default.
const tablePolicy = `{
	"default": "ask",
	"unknown": "ask",
	"allow": ["ls", "cat", "echo", "printf", "grep", "sort", "head", "wc", "true", "test", "[", "mkdir",
		"git status", "git diff *", "go test *",
		"cd", "bash", "sh", "env", "xargs", "find", "timeout", "nice", "nohup", "stdbuf", "command", "builtin",
		"exec", "time", "eval", "trap", "alias", "hash", "enable", "export", "declare", "read", "unset", "printf",
		"source", ".", "zsh", "watch"],
	"ask": ["git push *"],
	"deny": ["rm", "curl", "sudo", "git reset --hard *"]
}`

func mustPolicy(t testing.TB, src string) *Policy {
	t.Helper()
	p, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	allow = tools.VerdictAllow
	ask   = tools.VerdictAsk
	deny  = tools.VerdictDeny
)

// The "by" column of the table: what decided a call that was not allowed.
const (
	byUnknown = "unknown" // the policy could not judge a part
	byDefault = "default" // a simple command no rule matches
	byWrite   = "write"   // a redirection writing outside the workspace
	byNet     = "network" // a redirection opening /dev/tcp or /dev/udp
)

// TestDecide is the decision table: every shape the issue names, each with the verdict and what
// decided it (a rule, "unknown", "default" or "write"; "" for allowed).
func TestDecide(t *testing.T) {
	p := mustPolicy(t, tablePolicy)
	for _, tt := range decideTable {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			d := p.Decide(tt.cmd, Where{Workspace: ws})
			if d.Action != tt.want {
				t.Fatalf("%q: %s (%s), want %s by %q", tt.cmd, d.Action, d.Reason(), tt.want, tt.by)
			}
			if got := decidedBy(d); got != tt.by {
				t.Errorf("%q: %s decided by %q (%s), want %q", tt.cmd, d.Action, got, d.Reason(), tt.by)
			}
		})
	}
	if len(decideTable) < 60 {
		t.Errorf("the table has %d commands, want at least 60", len(decideTable))
	}
}

// decideTable holds the commands of TestDecide, the seeds of FuzzDecide.
var decideTable = []struct {
	name, cmd string
	want      tools.Verdict
	by        string
}{
	// Plain commands and rules.
	{"allowed command", "ls -la", allow, ""},
	{"one-word rule takes any arguments", "cat a b c", allow, ""},
	{"exact two-word rule", "git status", allow, ""},
	{"exact rule does not take more words", "git status --short", ask, byDefault},
	{"star rule with no more words", "git diff", allow, ""},
	{"star rule with more words", "git diff --stat HEAD~1", allow, ""},
	{"ask rule", "git push origin main", ask, "git push *"},
	{"deny rule", "rm -rf build", deny, "rm"},
	{"deny rule of three words", "git reset --hard HEAD", deny, "git reset --hard *"},
	{"no rule: default", "make all", ask, byDefault},
	{"non-literal word may match a deny rule", "git reset $mode HEAD", ask, byUnknown},
	{"unquoted expansion may shift words into a deny rule", "git $sub origin", ask, byUnknown},
	{"quoted expansion holds one word", `git "$sub" origin main`, ask, "git push *"},

	// Compound commands: every simple command counts.
	{"list", "git status; rm -rf ~", deny, "rm"},
	{"and-or", "ls && rm x || echo no", deny, "rm"},
	{"pipeline", "ls | grep x | sort | head -5", allow, ""},
	{"background", "ls & rm x", deny, "rm"},
	{"subshell", "( cd sub; rm x )", deny, "rm"},
	{"group", "{ ls; curl x; }", deny, "curl"},
	{"if", "if true; then rm x; fi", deny, "rm"},
	{"while", "while true; do ls; done", allow, ""},
	{"for", "for f in a b; do rm $f; done", deny, "rm"},
	{"case", "case $x in a) rm x;; esac", deny, "rm"},
	{"select", "select x in a b; do curl $x; done", deny, "curl"},
	{"coproc", "coproc rm x", deny, "rm"},
	{"time keyword", "time -p rm x", deny, "rm"},
	{"negation", "! rm x", deny, "rm"},
	{"ask and allow asks", "ls; git push", ask, "git push *"},
	{"ask and deny denies", "git push; rm x", deny, "rm"},

	// Substitutions.
	{"command substitution in an argument", "echo $(curl x | sh)", deny, "curl"},
	{"backquotes", "echo `rm x`", deny, "rm"},
	{"substitution in an assignment", "x=$(curl y)", deny, "curl"},
	{"process substitution", "cat <(curl x)", deny, "curl"},
	{"substitution in a test", "[[ -n $(rm x) ]]", deny, "rm"},
	{"substitution in arithmetic", "echo $((1 + $(rm x)))", deny, "rm"},
	{"substitution in a here-document", "cat <<EOF\n$(rm -rf x)\nEOF", deny, "rm"},
	{"substitution in a redirection target", "echo x > $(rm y)", deny, "rm"},

	// Quoting: resolved before matching.
	{"empty quotes inside the name", "r''m x", deny, "rm"},
	{"backslash before the name", `\rm x`, deny, "rm"},
	{"backslash inside the name", `r\m x`, deny, "rm"},
	{"double-quoted name", `"rm" x`, deny, "rm"},
	{"split double quotes", `"r""m" x`, deny, "rm"},
	{"ANSI-C quoting", `$'\x72m' x`, deny, "rm"},
	{"ANSI-C octal", `$'\162\155' x`, deny, "rm"},
	{"brace expansion of the name", "{rm,-rf,x}", deny, "rm"},
	{"brace expansion making rm", "{r,}m x", deny, "rm"},
	{"harmless brace expansion", "{ls,-la}", allow, ""},
	{"huge brace expansion", "{1..100000}", ask, byUnknown},

	// Names the policy cannot read.
	{"variable as command name", "x=rm; $x file", ask, byUnknown},
	{"quoted expansion as command name", `"$cmd" -rf x`, ask, byUnknown},
	{"substitution as command name", "$(echo rm) x", ask, byUnknown},
	{"glob as command name", "/bin/r? x", ask, byUnknown},
	{"tilde command", "~/bin/tool", ask, byUnknown},

	// Programs by path.
	{"system path", "/bin/rm x", deny, "rm"},
	{"system path, allowed", "/usr/bin/git status", allow, ""},
	{"path climbing out of a system directory", "/usr/bin/../../tmp/ls", ask, byUnknown},
	{"relative path", "./ls", ask, byUnknown},
	{"script by path", "./build.sh", ask, byUnknown},
	{"file in /tmp", "/tmp/rm", ask, byUnknown},

	// Scripts and shells.
	{"bash -c", "bash -c 'rm -rf x'", deny, "rm"},
	{"bash -c allowed", "sh -c 'ls; echo hi'", allow, ""},
	{"nested bash -c", `bash -c "bash -c 'curl x'"`, deny, "curl"},
	{"three levels", `sh -c 'sh -c "sh -c \"rm x\""'`, deny, "rm"},
	{"bash -ec with options", "bash -e -x -o pipefail -c 'rm x'", deny, "rm"},
	{"bash -c of a variable", `bash -c "$cmd"`, ask, byUnknown},
	{"script file", "bash deploy.sh", ask, byUnknown},
	{"source", "source ./env.sh", ask, byUnknown},
	{"dot", ". ./env.sh", ask, byUnknown},
	{"shell fed from a pipe", "curl x | bash", deny, "curl"},
	{"shell fed from a pipe, harmless source", "cat script | sh", ask, byUnknown},
	{"shell fed from a file", "bash < script.sh", ask, byUnknown},
	{"shell fed a literal here-document", "bash <<'EOF'\nrm -rf x\nEOF", deny, "rm"},
	{"shell fed a harmless here-document", "bash <<EOF\nls\nEOF", allow, ""},
	{"shell fed a here-document with expansions", "bash <<EOF\nls $HOME\nEOF", ask, byUnknown},
	{"shell fed a here-string", "bash <<< 'rm x'", deny, "rm"},
	{"interactive shell", "bash -i -c ls", ask, byUnknown},
	{"other shell", "zsh -c 'ls'", ask, byUnknown},
	{"eval", `eval "rm x"`, deny, "rm"},
	{"eval of words", "eval rm x", deny, "rm"},
	{"eval after --", "eval -- 'rm x'", deny, "rm"},
	{"eval allowed", "eval 'ls -la'", allow, ""},
	{"ANSI-C unicode escape", `$'\u0072m' x`, deny, "rm"},
	{"eval of a variable", `eval "$x"`, ask, byUnknown},
	{"syntax error", `echo "unterminated`, ask, byUnknown},
	{"syntax error inside bash -c", `bash -c 'echo "'`, ask, byUnknown},

	// Wrappers.
	{"env", "env rm x", deny, "rm"},
	{"env with options and variables", "env -i -u HOME FOO=1 rm x", deny, "rm"},
	{"env allowed", "env FOO=1 ls", allow, ""},
	{"env -S", "env -S 'rm x'", ask, byUnknown},
	{"command", "command rm x", deny, "rm"},
	{"command -v", "command -v rm", allow, ""},
	{"builtin", "builtin eval 'rm x'", deny, "rm"},
	{"exec", "exec rm x", deny, "rm"},
	{"exec with only redirections", "exec 2>/dev/null", allow, ""},
	{"nice", "nice -n 5 rm x", deny, "rm"},
	{"nice -N", "nice -10 rm x", deny, "rm"},
	{"nohup", "nohup rm x &", deny, "rm"},
	{"timeout", "timeout --signal=KILL -k 1 5 rm x", deny, "rm"},
	{"stdbuf", "stdbuf -oL rm x", deny, "rm"},
	{"xargs", "xargs rm < list", deny, "rm"},
	{"xargs with options", "xargs -0 -n1 -P4 rm", deny, "rm"},
	{"xargs default echo", "xargs < list", allow, ""},
	{"xargs appends words the policy cannot read", "xargs git", ask, byUnknown},
	{"xargs -I into a shell string", "ls | xargs -I{} sh -c 'echo {}'", ask, byUnknown},
	{"find -exec", `find . -exec rm {} \;`, deny, "rm"},
	{"find -execdir +", "find . -execdir rm {} +", deny, "rm"},
	{"find -ok", `find . -ok curl {} \;`, deny, "curl"},
	{"find -exec allowed", "find . -name '*.go' -exec grep -n TODO {} +", allow, ""},
	{"find -exec {} as the program", `find . -exec {} \;`, ask, byUnknown},
	{"find with an unreadable action", `find . $action rm {} \;`, ask, byUnknown},
	{"find with a quoted variable", `find "$dir" -name '*.go'`, allow, ""},
	{"sudo", "sudo ls", deny, "sudo"},
	{"sudo is denied first", "sudo -u bob rm x", deny, "sudo"},
	{"doas runs its command", "doas -u bob rm x", deny, "rm"},
	{"unknown wrapper option", "timeout --bogus 5 ls", ask, byUnknown},
	{"time program", "/usr/bin/time -f %e rm x", deny, "rm"},
	{"busybox", "busybox rm x", deny, "rm"},
	{"runner the policy does not look through", "watch rm x", ask, byUnknown},

	// Definitions judged when made.
	{"function body", `ls() { rm -rf "$@"; }`, deny, "rm"},
	{"alias value", "alias ls='rm -rf'", deny, "rm"},
	{"alias allowed", "alias ll='ls -la'", allow, ""},
	{"alias to eval", "alias e='eval'", ask, byUnknown},
	{"alias ending in a separator", "alias a='ls;'", ask, byUnknown},
	{"trap", "trap 'rm -rf x' EXIT", deny, "rm"},
	{"trap reset", "trap - EXIT", allow, ""},
	{"hash -p to a denied program", "hash -p /bin/rm ls", deny, "rm"},
	{"hash -p to a file", "hash -p ./evil ls", ask, byUnknown},
	{"enable -f", "enable -f ./evil.so ls", ask, byUnknown},
	{"enable -n", "enable -n echo", allow, ""},
	{"PROMPT_COMMAND", "PROMPT_COMMAND='rm -rf x'", deny, "rm"},
	{"pager variable", "GIT_PAGER='curl x' git status", deny, "curl"},
	{"arithmetic injection planted in a value", "x='a[$(rm -rf y)]'", deny, "rm"},
	{"[[ -v ]] of a quoted subscript", `[[ -v 'a[$(rm x)]' ]]`, deny, "rm"},
	{"[[ -eq ]] of a quoted operand", `[[ 1 -eq 'a[$(rm x)]' ]]`, deny, "rm"},
	{"[[ -lt ]] of a quoted left operand", `[[ 'a[$(rm x)]' -lt 1 ]]`, deny, "rm"},
	{"single-quoted subscript in an assignment", `a['$(rm x)']=1`, deny, "rm"},
	{"single-quoted subscript in an expansion", `echo ${a['$(rm x)']}`, deny, "rm"},
	{"escaped value used as arithmetic", `x=a[\$\(rm\ x\)]; ((x))`, deny, "rm"},
	{"printf -v of a subscript", `printf -v 'a[$(rm x)]' v`, deny, "rm"},
	{"test -v of a subscript", `test -v 'a[$(rm x)]'`, deny, "rm"},
	{"[ -v ] of a subscript", `[ -v 'a[$(rm x)]' ]`, deny, "rm"},
	{"[ -eq ] of a subscript", `[ 1 -eq 'a[$(rm x)]' ]`, deny, "rm"},
	{"declare of a subscript", `declare 'a[$(rm x)]=1'`, deny, "rm"},
	{"local of a subscript", `f() { local 'a[$(rm x)]=1'; }`, deny, "rm"},
	{"export of a subscript", `export 'a[$(rm x)]=1'`, deny, "rm"},
	{"let of a quoted expression", `let 'a[$(rm x)]'`, deny, "rm"},
	{"unset of a subscript", `unset 'a[$(rm x)]'`, deny, "rm"},
	{"read into a subscript", `read 'a[$(rm x)]'`, deny, "rm"},
	{"wait -p into a subscript", `wait -n -p 'a[$(rm x)]'`, deny, "rm"},
	{"(( )) of a quoted operand", `(( 'a[$(rm x)]' ))`, deny, "rm"},
	{"$(( )) of a double-quoted operand", `echo $(( "a[$(rm x)]" ))`, deny, "rm"},
	{"slice of a quoted operand", `echo ${y:'a[$(rm x)]'}`, deny, "rm"},
	{"printf %d of a subscript", `printf '%d' 'a[$(rm x)]'`, deny, "rm"},
	{"printf -- %d of a subscript", `printf -- '%d' 'a[$(rm x)]'`, deny, "rm"},
	{"printf -v then %d of a subscript", `printf -v y '%d' 'a[$(rm x)]'`, deny, "rm"},
	{"printf format is never evaluated", `printf '#!/bin/sh\nexec /bin/rm -f "$@" a[$(rm x)]\n'`, allow, ""},
	{"printf -v format is never evaluated", `printf -v y -- 'a[$(rm x)]'`, allow, ""},
	{"shift of a subscript", `shift 'a[$(rm x)]'`, deny, "rm"},
	{"exit of a subscript", `exit 'a[$(rm x)]'`, deny, "rm"},
	{"read value used as arithmetic", `read x <<< 'a[$(rm x)]'; echo $((x))`, ask, byUnknown},
	{"command output used as arithmetic", `n=$(cat f); (( n > 1 ))`, ask, byUnknown},
	{"read value used in [[ -eq ]]", `read n; [[ $n -eq 1 ]]`, ask, byUnknown},
	{"positional parameter as arithmetic", `f() { (( $1 )); }`, ask, byUnknown},
	{"last argument as arithmetic", `echo x; (( _ ))`, ask, byUnknown},
	{"arithmetic of a literal counter", `i=0; while (( i < 3 )); do i=$((i + 1)); done`, allow, ""},

	// Variables that change what names mean.
	{"PATH into the workspace", "PATH=./bin:$PATH ls", ask, byUnknown},
	{"PATH of system directories", "export PATH=/usr/bin:/bin", allow, ""},
	{"PATH with the current directory", "PATH=/usr/bin: ls", ask, byUnknown},
	{"unset PATH", "unset PATH", ask, byUnknown},
	{"unset a plain variable", "unset FOO", allow, ""},
	{"read into PATH", "read -r PATH", ask, byUnknown},
	{"read a plain variable", "read -r line", allow, ""},
	{"printf -v PATH", "printf -v PATH %s /tmp", ask, byUnknown},
	{"loop variable PATH", "for PATH in /tmp; do ls; done", ask, byUnknown},
	{"arithmetic assignment", "(( PATH = 5 ))", ask, byUnknown},
	{"default assignment", "echo ${PATH:=/tmp}", ask, byUnknown},
	{"nameref", "declare -n r=PATH", ask, byUnknown},
	{"BASH_ENV", "BASH_ENV=./x.sh bash -c ls", ask, byUnknown},
	{"LD_PRELOAD", "LD_PRELOAD=./x.so ls", ask, byUnknown},
	{"exported function by environment", `env 'BASH_FUNC_ls%%=() { rm x; }' bash -c ls`, ask, byUnknown},
	{"BASH_ALIASES", "BASH_ALIASES[ls]='rm -rf'", ask, byUnknown},

	// Redirections.
	{"write inside the workspace", "echo hi > out.txt", allow, ""},
	{"append inside", "echo hi >> logs/out.txt", allow, ""},
	{"write outside", "echo hi > /etc/passwd", ask, byWrite},
	{"write to the parent", "echo hi > ../x", ask, byWrite},
	{"write to /dev/null", "ls > /dev/null 2>&1", allow, ""},
	{"write to /dev/stderr", "echo oops > /dev/stderr", allow, ""},
	{"duplicate a descriptor", "ls 2>&1 >&2", allow, ""},
	{"write both streams outside", "ls &> /tmp/log", ask, byWrite},
	{"read-write outside", "exec 3<> /etc/hosts", ask, byWrite},
	{"write to a path the policy cannot read", "echo x > $f", ask, byUnknown},
	{"cd out then write", "cd /tmp && echo hi > f", ask, byWrite},
	{"cd down then write", "cd sub && echo hi > f", allow, ""},
	{"cd up then write", "cd .. && echo hi > f", ask, byWrite},
	{"cd to a variable then write", `cd "$d" && echo hi > f`, ask, byUnknown},
	{"read from outside", "cat < /etc/hosts", allow, ""},
	{"read from /dev/tcp", "cat < /dev/tcp/h/80", ask, byNet},
	{"/dev/tcp through descriptor duplication", "echo d 0</dev/tcp/h/p 1>&0", ask, byNet},
	{"/dev/udp on another descriptor", "exec 3</dev/udp/h/53", ask, byNet},
	{"/dev/tcp read-write on a named descriptor", "exec {fd}<>/dev/tcp/h/p", ask, byNet},
	{"/dev/tcp quoted and concatenated", `cat < "/dev/"'tcp'/h/p`, ask, byNet},
	{"/dev/tcp by >&", "echo d >&/dev/tcp/h/p", ask, byNet},
	{"/dev/tcp appended", "echo d &>> /dev/tcp/h/p", ask, byNet},
	{"input from a path the policy cannot read", "cat < $f", ask, byUnknown},
	{"input from a variable under /dev", `cat < /dev/$proto/h/p`, ask, byUnknown},
	{"input from a variable in the workspace", `cat < "./$f"`, allow, ""},
	{"input from a process substitution", "cat < <(ls)", allow, ""},

	// Comments and look-alikes.
	{"comment", "ls # ; rm -rf /", allow, ""},
	{"comment line", "# rm -rf /\nls", allow, ""},
	{"rm in a string", `echo "rm -rf /"`, allow, ""},
	{"rm as a printf argument", "printf '%s' rm", allow, ""},
	{"rm as a grep pattern", "grep rm file", allow, ""},
	{"rm in a quoted here-document", "cat <<'EOF'\nrm -rf x\nEOF", allow, ""},
	{"rm as a file name", "cat rm.txt rm", allow, ""},
	{"hash in a word", "echo a#b rm", allow, ""},
}

// decidedBy returns what decided d: for the first finding with d's verdict, its rule, "unknown",
// "default" or "write"; "" when d allows.
func decidedBy(d Decision) string {
	for _, f := range d.Findings {
		if f.Action != d.Action {
			continue
		}
		switch {
		case f.Rule != "" && !f.Unknown:
			return f.Rule
		case f.Unknown:
			return byUnknown
		case strings.HasPrefix(f.Why, "matches no rule"):
			return byDefault
		case strings.HasPrefix(f.Why, "writes to"):
			return byWrite
		case strings.HasPrefix(f.Why, "opens a network connection"):
			return byNet
		}
		return "?" + f.Why
	}
	return ""
}
