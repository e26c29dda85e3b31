// Package launcher is the remote side of the backends that run commands on another kernel
// (bash-ssh, bash-container, bash-k8s): two small bash programs sent with every command, the
// launcher, which scrubs, tags, records the process group and execs one command, and the
// controller, which a second channel (an SSH session, a container exec) runs to stop or check
// process groups; with the Go code that builds their command lines and parses their reports. The
// channel is the backend's: it runs Command.Argv or Command.Line and hands back the output.
package launcher

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-go/dsh/internal/envpolicy"
)

// Nothing is installed on the remote side. A channel that takes one command line read by a login
// shell (SSH) sends Command.Line:
//
//	exec BASH --norc --noprofile -c 'PROGRAM' NAME 'ARG' ...
//
// with every argument single-quoted, so no byte of a command or of a variable's value is ever
// interpreted by that shell (--norc keeps Debian's bash from reading ~/.bashrc); a channel that
// takes an argument vector (a container exec) sends Command.Argv, the same words unquoted.

// launcherScript starts one command. Its arguments: the marker, the working directory, "1" when
// the channel carries stdin ("0": /dev/null), the bash to run, then seven counted lists (the
// envpolicy.Rules: scrub patterns, scrub prefixes, names to keep, carrier words, ordinary names,
// ordinary prefixes; then the NAME=VALUE entries to set), the value shape, and the command last.
// It scrubs the login environment by exactly the rules of envpolicy.Policy.ScrubbedEntry, matching
// values in the C locale, and tries the value shape on each variable only when it matches all
// values at once (one regular expression match in the common case).
//
// It makes sure it leads its own process group: OpenSSH's sshd starts every session in a new
// session (setsid); other channels (a container exec) may not, and then the launcher runs itself again under
// setsid(1), which keeps the process id. It changes directory, writes the control lines, removes the
// scrubbed variables, sets the others, and finally execs bash -c COMMAND: the command's shell keeps
// the launcher's process id, which is also the process group id, and is the process the channel waits
// for, so the exit status or the signal it reports is exactly the command's.
//
// The control lines: stdout begins "MARKER ok PID START\n" (START: the start time of the process in
// clock ticks since boot, read from /proc/PID/stat, empty without /proc), or "MARKER err workdir KIND MESSAGE\n"
// (KIND: notexist, notdir, permission) or "MARKER err bash MESSAGE\n" when the command cannot be
// started; stderr begins "MARKER\n". Whatever the login shell printed before them (a
// noisy profile) is dropped by the reader; everything after them is the command's own output.
const launcherScript = `_dsh_m=$1
if ! kill -0 -- "-$$" 2>/dev/null; then
	if [[ $0 != *-setsid ]] && hash setsid 2>/dev/null; then
		exec setsid "$BASH" --norc --noprofile -c "$BASH_EXECUTION_STRING" "$0-setsid" "$@"
	fi
	printf '%s err %s\n' "$_dsh_m" "the channel did not start the launcher in its own process group and setsid(1) is missing"
	exit 0
fi
_dsh_wd=$2 _dsh_in=$3 _dsh_sh=$4
shift 4
_dsh_pats=("${@:2:$1}")
shift $(($1 + 1))
_dsh_pres=("${@:2:$1}")
shift $(($1 + 1))
declare -A _dsh_keep=() _dsh_words=() _dsh_ord=()
for _dsh_n in "${@:2:$1}"; do _dsh_keep[$_dsh_n]=1; done
shift $(($1 + 1))
for _dsh_n in "${@:2:$1}"; do _dsh_words[$_dsh_n]=1; done
shift $(($1 + 1))
for _dsh_n in "${@:2:$1}"; do _dsh_ord[$_dsh_n]=1; done
shift $(($1 + 1))
_dsh_ordp=("${@:2:$1}")
shift $(($1 + 1))
_dsh_envs=("${@:2:$1}")
shift $(($1 + 1))
_dsh_shape=$1 _dsh_cmd=$2
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
_dsh_t=
if read -r _dsh_t 2>/dev/null </proc/$$/stat; then
	_dsh_f=(${_dsh_t##*) })
	_dsh_t=${_dsh_f[19]}
fi
printf '%s ok %d %s\n' "$_dsh_m" "$$" "$_dsh_t"
printf '%s\n' "$_dsh_m" >&2
[ "$_dsh_in" = 1 ] || exec </dev/null
_dsh_ifs=$IFS IFS='|'
_dsh_pp=${_dsh_pats[*]} _dsh_rp=${_dsh_pres[*]} _dsh_op=${_dsh_ordp[*]}
IFS=$_dsh_ifs
[ -n "$_dsh_pp" ] && _dsh_pp="*@($_dsh_pp)*"
[ -n "$_dsh_rp" ] && _dsh_rp="@($_dsh_rp)*"
[ -n "$_dsh_op" ] && _dsh_op="@($_dsh_op)*"
_dsh_lcs=${LC_ALL+1} _dsh_lca=${LC_ALL-}
LC_ALL=C
_dsh_all= _dsh_x=() _dsh_names=() _dsh_a=
((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404)) && _dsh_a=1
for _dsh_n in NAMES; do
	[[ $_dsh_n == _dsh_* ]] && continue
	[ -n "$_dsh_a" ] && [[ ${!_dsh_n@a} != *x* ]] && continue
	[ -n "${_dsh_keep[$_dsh_n]}" ] && continue
	_dsh_names+=("$_dsh_n")
	_dsh_all+=${!_dsh_n}$'\n'
done 2>/dev/null
[[ $_dsh_all =~ $_dsh_shape ]] && _dsh_all=1 || _dsh_all=
for _dsh_n in "${_dsh_names[@]}"; do
	_dsh_u=${_dsh_n^^}
	if { [ -n "$_dsh_all" ] && [[ ${!_dsh_n} =~ $_dsh_shape ]]; } ||
		{ [ -n "$_dsh_pp" ] && [[ $_dsh_u == $_dsh_pp ]]; } ||
		{ [ -n "$_dsh_rp" ] && [[ $_dsh_u == $_dsh_rp ]]; }; then
		_dsh_x+=("$_dsh_n")
		continue
	fi
	[ -n "${_dsh_ord[$_dsh_u]}" ] && continue
	[ -n "$_dsh_op" ] && [[ $_dsh_u == $_dsh_op ]] && continue
	for _dsh_w in ${_dsh_u//_/ }; do [ -n "${_dsh_words[$_dsh_w]}" ] && _dsh_x+=("$_dsh_n") && break; done
done 2>/dev/null
if [ -n "$_dsh_lcs" ]; then LC_ALL=$_dsh_lca; else unset LC_ALL; fi
unset "${_dsh_x[@]}" 2>/dev/null
_dsh_rest=()
for _dsh_kv in "${_dsh_envs[@]}"; do
	_dsh_n=${_dsh_kv%%=*}
	if [[ $_dsh_n =~ ^[A-Za-z][A-Za-z0-9_]*$|^_[A-Za-z0-9_]+$ ]] && [[ $_dsh_n != _dsh_* ]] && export -- "$_dsh_kv" 2>/dev/null; then continue; fi
	_dsh_rest+=("$_dsh_kv")
done
if [ ${#_dsh_rest[@]} -eq 0 ]; then exec -a bash "$_dsh_b" --norc -c "$_dsh_cmd"; fi
exec "$_dsh_ev" -- "${_dsh_rest[@]}" "$_dsh_b" --norc -c "$_dsh_cmd"
`

// controlScript signals and watches the processes of commands. Its arguments: the marker its
// report line starts with, the mode ("stop" or "check"), the grace period in milliseconds, the
// extended grep pattern that marks this executor's processes (own), the pattern of the tags whose
// processes are stopped even outside their group (sweep, may be empty), the start time of the
// executor's first command in clock ticks since boot (since, empty but in the final stop), then the
// targets: "PGID" or "PGID:START", START being the start time the launcher reported for the
// command's leader.
//
// On Linux, a process counts as alive while one of its threads is not a zombie (a leader thread may
// exit while others run), and its tag is read from the environment of a live thread. A recorded
// group is the command's while its leader still exists with the recorded start time, whatever its
// processes did to their environment: its id cannot have been reused. After that the group needs a
// live member carrying an environment entry that matches own, for the id may since belong to an
// unrelated group, which is then left alone. A group, once it is the command's, stays so while it
// has members; its members, the other members of its session, the processes whose tag matches
// sweep, and all their descendants are found on every scan and remembered (pid and start time)
// while the controller runs, so that a process re-parented to init is still stopped. Without /proc,
// any member counts and the group id is trusted. A group once seen gone is never signalled again.
//
// It reports on one line that starts with the marker (a login shell may print before it). "check"
// reports "alive" and the ids of the groups still alive. "stop" sends SIGTERM to the groups and to
// every process found, then SIGKILL when the grace period has passed or when it reads the line
// "kill" on its standard input, and waits until nothing is left; it reports "gone", or "survivors
// ..." when something outlived SIGKILL by 10 s. With since set, "gone" is followed by
// "unreadable PID:NAME ..." for every live process of the controller's user started since then
// whose environment cannot be read (a non-dumpable process), sshd's own excepted: the controller
// cannot tell whether those are the executor's, and leaves them running.
const controlScript = `m=$1 mode=$2 g=$3 own=$4 sweep=$5 since=$6
shift 6
groups=() tp=()
procfs=0 nf=0
if [ -r /proc/self/stat ] && read -r -a tp </proc/$$/stat; then procfs=1 nf=${#tp[@]} tp=(); fi
declare -A gstart=() verified=() known=() st=() envf=() comm=()
for a; do
	groups+=("${a%%:*}")
	[[ $a == *:?* ]] && gstart[${a%%:*}]=${a#*:}
done
now() {
	if [ -n "$EPOCHREALTIME" ]; then t=${EPOCHREALTIME/[.,]/}; t=$((10#$t / 1000)); else t=$((SECONDS * 1000)); fi
}
# table reads every live process: st (start time), envf (the environment file of a live thread),
# comm, and the lists pids, ppid, pgrp, sess in step. A stat line whose comm has no blank splits
# into as many words as the controller's own (nf); another is split after its last ") ".
table() {
	local f s tf ts
	local -a fl
	st=() envf=() comm=() pids=() ppid=() pgrp=() sess=()
	for f in /proc/[0-9]*/stat; do
		read -r -a fl 2>/dev/null <"$f" || continue
		if [ ${#fl[@]} -ne $nf ]; then
			read -r s 2>/dev/null <"$f" || continue
			ts=${s#*(}
			fl=("${fl[0]}" "(${ts%) *})" ${s##*) })
		fi
		case ${fl[2]} in Z | X)
			[ "${fl[19]:-0}" -gt 1 ] || continue
			s=
			for tf in /proc/${fl[0]}/task/[0-9]*/stat; do
				read -r ts 2>/dev/null <"$tf" || continue
				ts=${ts##*) }
				case ${ts%% *} in Z | X) ;; *) s=${tf%stat}environ && break ;; esac
			done
			[ -n "$s" ] || continue
			envf[${fl[0]}]=$s
			;;
		*) envf[${fl[0]}]=/proc/${fl[0]}/environ ;;
		esac
		s=${fl[1]#(}
		comm[${fl[0]}]=${s%)}
		st[${fl[0]}]=${fl[21]}
		pids+=("${fl[0]}") ppid+=("${fl[3]}") pgrp+=("${fl[4]}") sess+=("${fl[5]}")
	done
}
# tagged prints the pids, among the live ones, whose environment matches the pattern $1.
tagged() {
	local p f
	local -a files=()
	for p; do files+=("${envf[$p]}"); done
	[ ${#files[@]} -gt 0 ] || return 0
	while IFS= read -r f; do
		f=${f#/proc/}
		echo "${f%%/*}"
	done < <(grep -lsaEz -e "$1" "${files[@]}" 2>/dev/null)
}
scan() {
	local p i n cand=() keep=()
	for p in "${groups[@]}"; do kill -0 -- "-$p" 2>/dev/null && cand+=("$p"); done
	if [ $procfs = 0 ]; then
		groups=("${cand[@]}")
		return
	fi
	table
	local -A want=() live=() ours=() ss=() unv=()
	for p in "${cand[@]}"; do
		want[$p]=1
		[ -n "${gstart[$p]}" ] && [ "${st[$p]}" = "${gstart[$p]}" ] && verified[$p]=1
	done
	n=${#pids[@]}
	for ((i = 0; i < n; i++)); do
		p=${pgrp[i]}
		[ -n "${want[$p]}" ] || continue
		live[$p]=1
		[ -n "${verified[$p]}" ] || unv[${pids[i]}]=$p
	done
	if [ ${#unv[@]} -gt 0 ]; then
		while IFS= read -r p; do verified[${unv[$p]}]=1; done < <(tagged "$own" "${!unv[@]}")
	fi
	for p in "${cand[@]}"; do [ -n "${live[$p]}" ] && [ -n "${verified[$p]}" ] && keep+=("$p"); done
	groups=("${keep[@]}")
	[ "$mode" = check ] && return
	for p in "${!known[@]}"; do [ "${st[$p]}" = "${known[$p]}" ] && ours[$p]=1; done
	for p in "${groups[@]}"; do ss[$p]=1; done
	for ((i = 0; i < n; i++)); do
		[ -n "${ss[${pgrp[i]}]}" ] && ss[${sess[i]}]=1
	done
	for ((i = 0; i < n; i++)); do
		[ -n "${ss[${sess[i]}]}" ] && ours[${pids[i]}]=1
	done
	if [ -n "$sweep" ]; then
		while IFS= read -r p; do ours[$p]=1; done < <(tagged "$sweep" "${pids[@]}")
	fi
	local more=1
	while [ $more = 1 ]; do
		more=0
		for ((i = 0; i < n; i++)); do
			[ -z "${ours[${pids[i]}]}" ] && [ -n "${ours[${ppid[i]}]}" ] && ours[${pids[i]}]=1 more=1
		done
	done
	unset 'ours[$$]'
	known=()
	for p in "${!ours[@]}"; do known[$p]=${st[$p]}; done
}
alive() {
	scan
	[ ${#groups[@]} -gt 0 ] || [ ${#known[@]} -gt 0 ]
}
sig() {
	local p
	for p in "${groups[@]}"; do kill -s "$1" -- "-$p" 2>/dev/null; done
	for p in "${!known[@]}"; do kill -s "$1" "$p" 2>/dev/null; done
}
# unreadable sets u to " PID:NAME" for every live process of this user started since $since whose
# environment cannot be read, sshd's excepted. It uses the table of the last scan.
unreadable() {
	local p k v s
	local -a fl
	u=
	[ -n "$since" ] && [ $procfs = 1 ] || return 0
	for p in "${pids[@]}"; do
		[ "$p" != $$ ] && [ "${st[$p]}" -ge "$since" ] || continue
		[ -r "${envf[$p]}" ] && continue
		case ${comm[$p]} in sshd | sshd-session | sshd-auth) continue ;; esac
		k=
		while read -r k v _; do [ "$k" = Uid: ] && break; done 2>/dev/null <"/proc/$p/status"
		[ "$k" = Uid: ] && [ "$v" = "$UID" ] || continue
		# A process that exited meanwhile was unreadable only because it is gone.
		read -r s 2>/dev/null <"/proc/$p/stat" || continue
		fl=(${s##*) })
		case ${fl[0]} in Z | X) [ "${fl[17]:-0}" -gt 1 ] || continue ;; esac
		[ "${fl[19]}" = "${st[$p]}" ] && u+=" $p:${comm[$p]//[!A-Za-z0-9._-]/_}"
	done
}
scan
if [ "$mode" = check ]; then
	echo "$m alive ${groups[*]}"
	exit 0
fi
if [ ${#groups[@]} -gt 0 ] || [ ${#known[@]} -gt 0 ]; then
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
			echo "$m survivors ${groups[*]} ${!known[*]}"
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
fi
unreadable
echo "$m gone${u:+ unreadable$u}"
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

// MaxCommandLine is the longest command line an SSH session may carry: sshd hands it to the login shell
// as one argument, and Linux limits one argument to 128 KiB (MAX_ARG_STRLEN).
const MaxCommandLine = 128<<10 - 1

// Quote returns s as one word for a POSIX shell: single-quoted, with every single quote written
// '\”. It is safe for any bytes but NUL, which no argument can carry.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Command is one program for a channel to run: Argv for a channel that takes an argument vector,
// Line (the same words, quoted) for one that hands a line to a login shell.
type Command struct {
	Argv []string
	Line string
}

func command(bashPath, program, argv0 string, args []string) Command {
	argv := append([]string{bashPath, "--norc", "--noprofile", "-c", program, argv0}, args...)
	var b strings.Builder
	b.WriteString("exec ")
	b.WriteString(Quote(bashPath))
	b.WriteString(" --norc --noprofile -c ")
	b.WriteString(Quote(program))
	b.WriteByte(' ')
	b.WriteString(argv0)
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(Quote(a))
	}
	return Command{Argv: argv, Line: b.String()}
}

// Launch is what the launcher needs to start one command. Name is the launcher's process name
// ($0, e.g. "dsh-bash-ssh"); Marker starts its control lines.
type Launch struct {
	Name    string
	Marker  string
	Workdir string
	Stdin   bool
	Bash    string
	Scrub   envpolicy.Rules
	Env     []string // NAME=VALUE, applied in order (a later entry wins); see EnvEntries
	Command string
}

// Build returns the command that runs l, or an error naming what cannot be sent.
func (l Launch) Build() (Command, error) {
	if strings.ContainsRune(l.Command, 0) {
		return Command{}, fmt.Errorf("the command contains a NUL byte, which cannot be passed to bash")
	}
	if strings.ContainsRune(l.Workdir, 0) {
		return Command{}, fmt.Errorf("the workdir contains a NUL byte")
	}
	args := []string{l.Marker, l.Workdir, "0", l.Bash}
	if l.Stdin {
		args[2] = "1"
	}
	r := l.Scrub
	for _, list := range [][]string{r.Patterns, r.Prefixes, r.Keep, r.CarrierWords, r.Ordinary, r.OrdinaryPrefixes, l.Env} {
		args = append(args, strconv.Itoa(len(list)))
		args = append(args, list...)
	}
	args = append(args, r.ValueShape, l.Command)
	return command(l.Bash, launcher, l.Name, args), nil
}

// Started is the launcher's first stdout line once parsed: the command's process (and group) id
// and its start time in clock ticks since boot ("" without /proc).
type Started struct {
	PID   int
	Start string
}

// LaunchError is a command the launcher could not start: Kind is "workdir" or "bash" (or "" for
// another reason), Sub the workdir's kind (notexist, notdir, permission), Message the rest.
type LaunchError struct {
	Kind, Sub, Message string
}

func (e *LaunchError) Error() string {
	if e.Kind == "workdir" {
		return "workdir: " + e.Message
	}
	return e.Message
}

// ParseStarted parses line, the launcher's control line after "MARKER " and without its newline.
// It returns a *LaunchError when the launcher reported that it could not start the command, and
// another error for a line it does not understand.
func ParseStarted(line string) (Started, error) {
	if rest, ok := strings.CutPrefix(line, "ok "); ok {
		pid, start, _ := strings.Cut(rest, " ")
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 {
			return Started{}, fmt.Errorf("launcher reported %q", line)
		}
		return Started{PID: n, Start: strings.TrimSpace(start)}, nil
	}
	if rest, ok := strings.CutPrefix(line, "err "); ok {
		if w, ok := strings.CutPrefix(rest, "workdir "); ok {
			sub, msg, _ := strings.Cut(w, " ")
			return Started{}, &LaunchError{Kind: "workdir", Sub: sub, Message: msg}
		}
		if b, ok := strings.CutPrefix(rest, "bash "); ok {
			return Started{}, &LaunchError{Kind: "bash", Message: b}
		}
		return Started{}, &LaunchError{Message: rest}
	}
	return Started{}, fmt.Errorf("launcher reported %q", line)
}

// EnvEntries returns the NAME=VALUE entries every command gets: the terminal overrides, then
// extra (which wins over them), then the tag. extra is validated: a name that cannot be passed is an
// error naming it.
func EnvEntries(extra map[string]string, tag string) ([]string, error) {
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

// Target is a process group to stop (PGID 0 when it never became known), the start time of its
// leader as the launcher reported it ("" when unknown) and the tag its processes carry.
type Target struct {
	PGID  int
	Start string
	Tag   string
}

// Control is one run of the controller. Name is its process name; Marker starts its report line;
// Mode is "stop" or "check"; Own is the pattern of the executor's tags (OwnPattern); Sweep the
// pattern of the tags stopped even outside their group (TagsPattern, may be empty); Since the
// start time of the executor's first command, set only in a final stop.
type Control struct {
	Name, Bash, Marker, Mode string
	Grace                    time.Duration
	Own, Sweep, Since        string
	Targets                  []Target
}

// Build returns the command that runs c. A stop reads "kill" on its stdin as a request for SIGKILL
// before the grace has passed.
func (c Control) Build() Command {
	args := []string{c.Marker, c.Mode, strconv.FormatInt(c.Grace.Milliseconds(), 10), c.Own, c.Sweep, c.Since}
	for _, t := range c.Targets {
		if t.PGID <= 0 {
			continue
		}
		a := strconv.Itoa(t.PGID)
		if t.Start != "" {
			a += ":" + t.Start
		}
		args = append(args, a)
	}
	return command(c.Bash, controlScript, c.Name, args)
}

// Report returns the controller's report in out (its stdout): the rest of the first line that
// starts with marker and a blank, and whether there was one.
func Report(out []byte, marker string) (string, bool) {
	prefix := marker + " "
	s := string(out)
	i := strings.Index(s, prefix)
	if i < 0 {
		return "", false
	}
	r, _, _ := strings.Cut(s[i+len(prefix):], "\n")
	return r, true
}

// Unreadable is a process a final stop left running because its environment cannot be read.
type Unreadable struct {
	PID  string
	Name string
}

// ParseStop parses a stop's report: nil error for "gone", with the processes it could not inspect.
func ParseStop(report string) ([]Unreadable, error) {
	rest, ok := strings.CutPrefix(report, "gone")
	if !ok {
		return nil, fmt.Errorf("controller reported %q", report)
	}
	var procs []Unreadable
	if list, ok := strings.CutPrefix(rest, " unreadable "); ok {
		for _, f := range strings.Fields(list) {
			pid, name, _ := strings.Cut(f, ":")
			procs = append(procs, Unreadable{PID: pid, Name: name})
		}
	}
	return procs, nil
}

// ParseCheck parses a check's report: the process groups still alive.
func ParseCheck(report string) (map[int]bool, error) {
	rest, ok := strings.CutPrefix(report, "alive")
	if !ok {
		return nil, fmt.Errorf("controller reported %q", report)
	}
	alive := map[int]bool{}
	for _, f := range strings.Fields(rest) {
		if n, err := strconv.Atoi(f); err == nil {
			alive[n] = true
		}
	}
	return alive, nil
}

// OwnPattern returns the extended grep pattern that matches the tag of every command of the
// executor tagged execTag.
func OwnPattern(execTag string) string { return "^" + envpolicy.TagVar + "=" + execTag + "-[0-9]+$" }

// TagsPattern returns the extended grep pattern that matches exactly the given tags, or "" for
// none.
func TagsPattern(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return "^" + envpolicy.TagVar + "=(" + strings.Join(tags, "|") + ")$"
}
