//go:build !linux

package proctree

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Outside Linux there is no /proc: a tree is its process group and its leader.

const available = false

func readStat(pid int) (Stat, bool) {
	if err := unix.Kill(pid, 0); err != nil && err != unix.EPERM {
		return Stat{}, false
	}
	return Stat{PID: pid, State: 'S', Threads: 1}, true
}

func snapshot() ([]Stat, bool) { return nil, false }

func childrenOf(int) ([]int, bool) { return nil, false }

func readTag(int, string, bool) (has, readable bool) { return false, false }

func readTagOf(Stat, string, bool) (has, readable bool) { return false, false }

// signalExact signals by pid alone: without pidfds or start times, a pid reused since st was
// read cannot be told apart. Callers only signal processes they know are alive members.
func signalExact(st Stat, sig syscall.Signal) { _ = unix.Kill(st.PID, sig) }

func reap(Stat) {}

func becomeSubreaper() error { return nil }

func setDumpable(bool) error { return nil }

func dumpable() bool { return true }

func closeOnExecInherited() {
	for fd := 3; fd < 1024; fd++ { // no close_range here: the usual descriptor limit
		syscall.CloseOnExec(fd)
	}
}
