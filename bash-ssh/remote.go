package bashssh

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-go/dsh/internal/envpolicy"
)

// The remote side of the executor is two small bash programs sent with every session (nothing is
// installed on the remote host): the launcher, which starts one command, and the controller, which
// signals process groups and checks whether they are still alive.
//
// A session's command line is read by the remote user's login shell, which must understand POSIX
// single quotes (sh, bash, dash, zsh, ksh). It is always
//
//	exec BASH --norc --noprofile -c 'PROGRAM' NAME 'ARG' ...
//
// with every argument single-quoted, so no byte of a command or of a variable's value is ever
// interpreted by the login shell. --norc keeps Debian's bash from reading ~/.bashrc, which it does
// for shells started by sshd.

// launcherScript starts one command. Its arguments: the marker, the working directory, "1" when
// the session carries stdin ("0": /dev/null), the bash to run, then four counted lists (scrub
// patterns, scrub prefixes, names to keep, NAME=VALUE entries to set) and the command last.
//
// It makes sure it leads its own process group: OpenSSH's sshd already starts every session in a
// new session (setsid); other servers may not, and then the launcher runs itself again under
// setsid(1), which keeps the process id. It changes directory, writes the control lines, removes the
// scrubbed variables, sets the others, and finally execs bash -c COMMAND: the command's shell keeps
// the launcher's process id, which is also the process group id, and is the process sshd waits
// for, so the exit status or the signal sshd reports is exactly the command's.
//
// The control lines: stdout begins "MARKER ok PID\n", or "MARKER err workdir KIND MESSAGE\n"
// (KIND: notexist, notdir, permission) or "MARKER err bash MESSAGE\n" when the command cannot be
// started; stderr begins "MARKER\n". Whatever the login shell printed before them (a
// noisy profile) is dropped by the reader; everything after them is the command's own output.
const launcherScript = `_dsh_m=$1
if ! kill -0 -- "-$$" 2>/dev/null; then
	if [ "$0" != dsh-bash-ssh-setsid ] && hash setsid 2>/dev/null; then
		exec setsid "$BASH" --norc --noprofile -c "$BASH_EXECUTION_STRING" dsh-bash-ssh-setsid "$@"
	fi
	printf '%s err %s\n' "$_dsh_m" "the SSH server did not start the session in its own process group and setsid(1) is missing"
	exit 0
fi
_dsh_wd=$2 _dsh_in=$3 _dsh_sh=$4
shift 4
_dsh_pats=("${@:2:$1}")
shift $(($1 + 1))
_dsh_pres=("${@:2:$1}")
shift $(($1 + 1))
declare -A _dsh_keep=()
for _dsh_n in "${@:2:$1}"; do _dsh_keep[$_dsh_n]=1; done
shift $(($1 + 1))
_dsh_envs=("${@:2:$1}")
shift $(($1 + 1))
_dsh_cmd=$1
unset CDPATH
case $_dsh_wd in
'~') _dsh_wd=${HOME:-.} ;;
'~/'*) _dsh_wd=${HOME:-.}/${_dsh_wd:2} ;;
/*) ;;
*) _dsh_wd=${HOME:-.}/$_dsh_wd ;;
esac
if ! cd -- "$_dsh_wd" 2>/dev/null; then
	_dsh_e=$( (cd -- "$_dsh_wd") 2>&1)
	_dsh_e=${_dsh_e##*cd: }
	if [ ! -e "$_dsh_wd" ]; then _dsh_k=notexist; elif [ ! -d "$_dsh_wd" ]; then _dsh_k=notdir; else _dsh_k=permission; fi
	printf '%s err workdir %s %s\n' "$_dsh_m" "$_dsh_k" "${_dsh_e//$'\n'/ }"
	exit 0
fi
case $_dsh_sh in
*/*) _dsh_b=$_dsh_sh ;;
*) hash -- "$_dsh_sh" 2>/dev/null && _dsh_b=${BASH_CMDS[$_dsh_sh]} ;;
esac
if [ -z "$_dsh_b" ] || [ ! -x "$_dsh_b" ]; then
	printf '%s err bash %s\n' "$_dsh_m" "$_dsh_sh: not found in the remote PATH"
	exit 0
fi
unset OLDPWD
hash env 2>/dev/null && _dsh_ev=${BASH_CMDS[env]}
printf '%s ok %d\n' "$_dsh_m" "$$"
printf '%s\n' "$_dsh_m" >&2
[ "$_dsh_in" = 1 ] || exec </dev/null
for _dsh_n in NAMES; do
	[[ $_dsh_n == _dsh_* ]] && continue
	[ -n "${_dsh_keep[$_dsh_n]}" ] && continue
	_dsh_u=${_dsh_n^^}
	for _dsh_p in "${_dsh_pats[@]}"; do [[ $_dsh_u == *"$_dsh_p"* ]] && { unset "$_dsh_n"; continue 2; }; done
	for _dsh_p in "${_dsh_pres[@]}"; do [[ $_dsh_u == "$_dsh_p"* ]] && { unset "$_dsh_n"; continue 2; }; done
done 2>/dev/null
_dsh_rest=()
for _dsh_kv in "${_dsh_envs[@]}"; do
	_dsh_n=${_dsh_kv%%=*}
	if [[ $_dsh_n =~ ^[A-Za-z][A-Za-z0-9_]*$|^_[A-Za-z0-9_]+$ ]] && [[ $_dsh_n != _dsh_* ]] && export -- "$_dsh_kv" 2>/dev/null; then continue; fi
	_dsh_rest+=("$_dsh_kv")
done
if [ ${#_dsh_rest[@]} -eq 0 ]; then exec -a bash "$_dsh_b" --norc -c "$_dsh_cmd"; fi
exec "$_dsh_ev" -- "${_dsh_rest[@]}" "$_dsh_b" --norc -c "$_dsh_cmd"
`

// controlScript signals and watches process groups. Its arguments: the marker its report line
// starts with, the mode ("stop" or "check"),
// the grace period in milliseconds, the extended grep pattern that marks this executor's processes
// (own), the pattern of the tags whose processes are stopped even outside their group (sweep, may be
// empty), then the process group ids.
//
// On Linux a group counts as alive while it has a member that is not a zombie (read from
// /proc/PID/stat), and it is only ever signalled once one of its live members has been seen
// carrying an environment entry that matches own: a group id the executor recorded may since have
// been reused by an unrelated group, which is then left alone. Without /proc, any member counts and
// the group id is trusted. A group once seen gone is never signalled again.
//
// It reports on one line that starts with the marker (a login shell may print before it). "check"
// reports "alive" and the ids of the groups still alive. "stop" sends SIGTERM to the groups and to
// every process whose environment matches sweep, then SIGKILL when the grace period has passed or
// when it reads the line "kill" on its standard input, and waits until nothing is left; it reports
// "gone", or "survivors ..." when something outlived SIGKILL by 10 s.
const controlScript = `m=$1 mode=$2 g=$3 own=$4 sweep=$5
shift 5
groups=("$@") tp=()
procfs=0
[ -r /proc/self/stat ] && procfs=1
declare -A verified=()
now() {
	if [ -n "$EPOCHREALTIME" ]; then t=${EPOCHREALTIME/[.,]/}; t=$((10#$t / 1000)); else t=$((SECONDS * 1000)); fi
}
scan() {
	local p f s r pid cand=() keep=() files=()
	for p in "${groups[@]}"; do kill -0 -- "-$p" 2>/dev/null && cand+=("$p"); done
	if [ ${#cand[@]} -eq 0 ] || [ $procfs = 0 ]; then
		groups=("${cand[@]}")
		return
	fi
	local -A want=() pgof=() live=()
	for p in "${cand[@]}"; do want[$p]=1; done
	for f in /proc/[0-9]*/stat; do
		read -r s 2>/dev/null <"$f" || continue
		r=${s##*) }
		case ${r%% *} in Z | X) continue ;; esac
		r=${r#* }
		r=${r#* }
		r=${r%% *}
		[ -n "${want[$r]}" ] || continue
		pid=${f#/proc/}
		pid=${pid%/stat}
		live[$r]=1
		[ -n "${verified[$r]}" ] && continue
		pgof[$pid]=$r
		files+=("/proc/$pid/environ")
	done
	if [ ${#files[@]} -gt 0 ]; then
		while IFS= read -r f; do
			pid=${f#/proc/}
			pid=${pid%/environ}
			verified[${pgof[$pid]}]=1
		done < <(grep -lsaEz -e "$own" "${files[@]}" 2>/dev/null)
	fi
	for p in "${cand[@]}"; do [ -n "${live[$p]}" ] && [ -n "${verified[$p]}" ] && keep+=("$p"); done
	groups=("${keep[@]}")
}
tagged() {
	tp=()
	[ -n "$sweep" ] && [ $procfs = 1 ] || return 0
	local l
	while IFS= read -r l; do
		l=${l#/proc/}
		tp+=("${l%/environ}")
	done < <(grep -lsaEz -e "$sweep" /proc/[0-9]*/environ 2>/dev/null)
}
alive() {
	scan
	[ ${#groups[@]} -gt 0 ] && return 0
	tagged
	[ ${#tp[@]} -gt 0 ]
}
sig() {
	local p
	for p in "${groups[@]}"; do kill -s "$1" -- "-$p" 2>/dev/null; done
	tagged
	for p in "${tp[@]}"; do kill -s "$1" "$p" 2>/dev/null; done
}
scan
if [ "$mode" = check ]; then
	echo "$m alive ${groups[*]}"
	exit 0
fi
sig TERM
now
start=$t killed=0 eof=0 end=0
if [ "$g" -le 0 ]; then
	sig KILL
	killed=1 end=$((t + 10000))
fi
while alive; do
	now
	if [ $killed = 0 ] && ((t - start >= g)); then
		sig KILL
		killed=1 end=$((t + 10000))
	fi
	if [ $killed = 1 ] && ((t > end)); then
		echo "$m survivors ${groups[*]} ${tp[*]}"
		exit 1
	fi
	if [ $eof = 0 ]; then
		if read -r -t 0.02 l; then
			if [ "$l" = kill ] && [ $killed = 0 ]; then
				sig KILL
				now
				killed=1 end=$((t + 10000))
			fi
		elif (($? <= 128)); then
			eof=1
		fi
	else
		sleep 0.02
	fi
done
echo "$m gone"
`

// launcher is launcherScript with its variable-name loop filled in: bash lists every variable whose
// name starts with a given character with ${!X@}, so the launcher visits them all without a fork.
var launcher = func() string {
	var names strings.Builder
	for _, c := range "_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" {
		if names.Len() > 0 {
			names.WriteByte(' ')
		}
		fmt.Fprintf(&names, "${!%c@}", c)
	}
	return strings.Replace(launcherScript, "NAMES", names.String(), 1)
}()

// maxCommandLine is the longest command line a session may carry: sshd hands it to the login shell
// as one argument, and Linux limits one argument to 128 KiB (MAX_ARG_STRLEN).
const maxCommandLine = 128<<10 - 1

// quote returns s as one word for a POSIX shell: single-quoted, with every single quote written
// '\”. It is safe for any bytes but NUL, which no argument can carry.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// remoteCommand builds the command line of a session that runs program (launcher or controlScript)
// with bash at path bashPath, under the name argv0, with args.
func remoteCommand(bashPath, program, argv0 string, args []string) string {
	var b strings.Builder
	b.WriteString("exec ")
	b.WriteString(quote(bashPath))
	b.WriteString(" --norc --noprofile -c ")
	b.WriteString(quote(program))
	b.WriteByte(' ')
	b.WriteString(argv0)
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(quote(a))
	}
	return b.String()
}

// launchArgs is what the launcher needs to start one command.
type launchArgs struct {
	marker   string
	workdir  string
	stdin    bool
	bash     string
	patterns []string // upper-cased
	prefixes []string // upper-cased
	keep     []string
	env      []string // NAME=VALUE, applied in order (a later entry wins)
	command  string
}

// build returns the session command line for a, or an error naming what cannot be sent.
func (a launchArgs) build() (string, error) {
	if strings.ContainsRune(a.command, 0) {
		return "", fmt.Errorf("the command contains a NUL byte, which cannot be passed to bash")
	}
	if strings.ContainsRune(a.workdir, 0) {
		return "", fmt.Errorf("the workdir contains a NUL byte")
	}
	args := []string{a.marker, a.workdir, "0", a.bash}
	if a.stdin {
		args[2] = "1"
	}
	for _, list := range [][]string{a.patterns, a.prefixes, a.keep, a.env} {
		args = append(args, strconv.Itoa(len(list)))
		args = append(args, list...)
	}
	args = append(args, a.command)
	line := remoteCommand(a.bash, launcher, "dsh-bash-ssh", args)
	if len(line) > maxCommandLine {
		return "", fmt.Errorf("the command and its environment take %d bytes on the remote command line, more than the %d one argument may hold", len(line), maxCommandLine)
	}
	return line, nil
}

// envEntries returns the NAME=VALUE entries every command gets: the terminal overrides, then
// extra (which wins over them), then the tag. extra is validated: a name that cannot be passed is an
// error naming it.
func envEntries(extra map[string]string, tag string) ([]string, error) {
	vals := make(map[string]string, 5+len(extra))
	names := make([]string, 0, 5+len(extra))
	for _, kv := range envpolicy.TerminalOverrides() {
		name, value, _ := strings.Cut(kv, "=")
		vals[name] = value
		names = append(names, name)
	}
	extraNames := make([]string, 0, len(extra))
	for name, value := range extra {
		if !envpolicy.ValidName(name) {
			return nil, fmt.Errorf("environment variable name %q cannot be passed (empty, or with \"=\", NUL or a leading \"-\")", name)
		}
		if strings.ContainsRune(value, 0) {
			return nil, fmt.Errorf("environment variable %s has a NUL byte in its value", name)
		}
		if _, seen := vals[name]; !seen {
			extraNames = append(extraNames, name)
		}
		vals[name] = value
	}
	slices.Sort(extraNames)
	names = append(names, extraNames...)
	out := make([]string, 0, len(names)+1)
	for _, name := range names {
		out = append(out, name+"="+vals[name])
	}
	return append(out, envpolicy.TagVar+"="+tag), nil
}

// controlCommand builds the command line of a controller session.
func controlCommand(bashPath, marker, mode string, grace time.Duration, own, sweep string, pgids []int) string {
	args := []string{marker, mode, strconv.FormatInt(grace.Milliseconds(), 10), own, sweep}
	for _, p := range pgids {
		args = append(args, strconv.Itoa(p))
	}
	return remoteCommand(bashPath, controlScript, "dsh-bash-ssh-control", args)
}

// ownPattern returns the extended grep pattern that matches the tag of every command of the
// executor tagged execTag.
func ownPattern(execTag string) string { return "^" + envpolicy.TagVar + "=" + execTag + "-[0-9]+$" }

// tagsPattern returns the extended grep pattern that matches exactly the given tags, or "" for
// none.
func tagsPattern(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return "^" + envpolicy.TagVar + "=(" + strings.Join(tags, "|") + ")$"
}
