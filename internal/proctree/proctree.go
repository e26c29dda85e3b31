// Package proctree finds and stops every process of a command's tree: the members of its
// process group or session, its descendants, and the processes that left both (setsid, a double
// fork, nohup) but still carry the tag the command was started with (an environment entry such
// as envpolicy.TagVar's), read from any live thread of the process. Stopping is one loop for
// every user: the soft signals, a grace period, SIGKILL, and "gone" only after two scans in a
// row found nothing.
//
// A process that hides its tag (it made itself non-dumpable, so that a normal user cannot read
// its environment) is found by ancestry instead: this process is the child subreaper of its
// commands (BecomeSubreaper), so what escapes is re-parented here, and a child in another
// session that no one here started and waits for (Own, StartOwned) is an escapee (Tree.Orphans).
//
// On Linux the tree is found through /proc and every process is signalled through a pidfd
// after its start time was checked, so a recycled pid is never hit. Elsewhere there is no /proc
// to read: only the process group and the leader are tracked (Available reports which).
package proctree

import (
	"strconv"
	"strings"
	"syscall"
)

// Available reports whether this system lets processes outside a process group be found (Linux,
// through /proc). Without it, a tree is its process group and its leader.
const Available = available

// Stat is what the package knows of a process: on Linux, the fields it reads from
// /proc/PID/stat. A process is identified by PID and StartTime together.
type Stat struct {
	PID       int
	State     byte
	PPID      int
	PGRP      int
	Session   int
	TTY       uint64 // the controlling terminal's device number, 0 for none
	Threads   int    // live threads, counting a leader thread that exited while others run
	StartTime uint64 // clock ticks after boot
}

// Dead reports whether the process has exited (a zombie waiting to be reaped, or dead). A
// process whose leader thread exited while other threads run (pthread_exit in main) shows its
// leader as a zombie but is alive: its thread count tells it apart.
func (s Stat) Dead() bool {
	return (s.State == 'Z' || s.State == 'X' || s.State == 'x') && s.Threads <= 1
}

// ParseStat parses the contents of /proc/PID/stat. The command name is in parentheses and may
// itself contain spaces and parentheses, so fields are counted from the last ')'. It reports
// false for anything that is not a stat line of a positive pid.
func ParseStat(data string) (Stat, bool) {
	open := strings.IndexByte(data, '(')
	closing := strings.LastIndexByte(data, ')')
	if open <= 0 || closing < open {
		return Stat{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(data[:open]))
	if err != nil || pid <= 0 {
		return Stat{}, false
	}
	// After ")": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
	// stime cutime cstime priority nice num_threads itrealvalue starttime ...
	f := strings.Fields(data[closing+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, false
	}
	st := Stat{PID: pid, State: f[0][0]}
	var errs [6]error
	st.PPID, errs[0] = strconv.Atoi(f[1])
	st.PGRP, errs[1] = strconv.Atoi(f[2])
	st.Session, errs[2] = strconv.Atoi(f[3])
	var tty int64
	tty, errs[3] = strconv.ParseInt(f[4], 10, 64)
	st.TTY = uint64(tty)
	st.Threads, errs[4] = strconv.Atoi(f[17])
	st.StartTime, errs[5] = strconv.ParseUint(f[19], 10, 64)
	for _, e := range errs {
		if e != nil {
			return Stat{}, false
		}
	}
	return st, true
}

// ReadStat returns the stat of process pid, or false when it does not exist (or, outside Linux,
// a Stat holding only the pid when it does).
func ReadStat(pid int) (Stat, bool) { return readStat(pid) }

// Snapshot returns the stat of every process this process can see, or false when the process
// table cannot be read (always, outside Linux).
func Snapshot() ([]Stat, bool) { return snapshot() }

// ChildrenOf returns the pids of the children of pid, or false when the system does not say.
func ChildrenOf(pid int) ([]int, bool) { return childrenOf(pid) }

// HasTag reports whether process pid was started with the environment entry tag ("NAME=value"),
// or with an entry that starts with tag when prefix is set. The environment is read from the
// process or, when its leader thread has exited, from any of its live threads. It reports false
// when no environment can be read (the process is gone, or made itself non-dumpable and this
// process lacks CAP_SYS_PTRACE).
func HasTag(pid int, tag string, prefix bool) bool {
	has, _ := readTag(pid, tag, prefix)
	return has
}

// Signal sends sig to the process st describes, and to no other: on Linux the pid is pinned
// with a pidfd and its start time checked before the signal is sent (by kill(2) after the same
// check on a kernel without pidfds). A process that is gone is not an error.
func Signal(st Stat, sig syscall.Signal) { signalExact(st, sig) }

// Reap collects the exit status of st when it is a zombie child of this process with st's start
// time, so that an escapee re-parented here (see BecomeSubreaper) does not stay a zombie. It
// never reaps an owned process (see Own): its exit status belongs to whoever waits for it.
func Reap(st Stat) { reap(st) }

// BecomeSubreaper makes this process the child subreaper of its descendants (Linux), so that a
// process leaving a tree by a double fork is re-parented here rather than to init, and is reaped
// once stopped. It is process-wide, lasts for the life of the process, and is done once however
// often it is called; it returns the error of that one attempt (always nil outside Linux, where
// there is no such thing).
func BecomeSubreaper() error { return becomeSubreaper() }

// SetDumpable sets whether this process is dumpable (Linux). A process that is not cannot be
// read through /proc by other processes of its user, its own commands included: its
// environment, memory, open files and working directory (its command line and stat stay
// readable). It also gets no core dump and cannot be traced by its user. The setting is
// process-wide and is reset by execve, so the commands this process starts are dumpable again
// and their /proc files stay readable here. It returns the error of prctl(2); outside Linux it
// does nothing and returns nil (darwin and freebsd show a process's environment to its user
// through sysctl, which no call turns off).
func SetDumpable(on bool) error { return setDumpable(on) }

// Dumpable reports whether this process is dumpable (always true outside Linux).
func Dumpable() bool { return dumpable() }

// CloseOnExecInherited marks every descriptor from 3 up open in this process now close-on-exec,
// so that no command it starts inherits one: descriptors a parent left open when it started this
// process (an editor, a CI runner) are not close-on-exec, while Go opens its own with the flag.
// A command still gets its standard streams and what exec.Cmd.ExtraFiles hands over (dup2 clears
// the flag in the child). Call it before the first command starts; it is cheap to call again.
func CloseOnExecInherited() { closeOnExecInherited() }
