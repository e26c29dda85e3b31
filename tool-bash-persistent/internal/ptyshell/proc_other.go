//go:build !linux

package ptyshell

import (
	"os"

	"golang.org/x/sys/unix"
)

// Outside Linux there is no /proc: the stdin-wait probe is off and Close stops the shell's own
// process group and the shell only (processes in other groups may survive).

type procStat struct {
	pid     int
	state   byte
	ppid    int
	pgrp    int
	session int
	ttyNr   uint64
	start   uint64
}

func (s procStat) dead() bool { return s.state == 'Z' }

func readStat(pid int) (procStat, bool) {
	if unix.Kill(pid, 0) != nil {
		return procStat{}, false
	}
	return procStat{pid: pid, state: 'S', pgrp: pid}, true
}

func childrenOf(int) ([]int, bool) { return nil, false }

func hasEnv(int, string) bool { return false }

func becomeSubreaper() {}

func signalExact(st procStat, sig unix.Signal) {
	_ = unix.Kill(-st.pid, sig)
	_ = unix.Kill(st.pid, sig)
}

func reap(procStat, int) {}

func members(shellPid int, _ string, _ map[int]uint64) []procStat {
	if st, ok := readStat(shellPid); ok {
		return []procStat{st}
	}
	return nil
}

func foregroundGroup(fd uintptr) (int, error) { return unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }

func eofChar(fd uintptr) byte {
	t, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	if err != nil || t.Cc[unix.VEOF] == 0 {
		return 0x04
	}
	return t.Cc[unix.VEOF]
}

func setEchoOff(fd uintptr) error {
	t, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	if err != nil {
		return err
	}
	t.Lflag &^= unix.ECHO | unix.ECHONL
	return unix.IoctlSetTermios(int(fd), unix.TIOCSETA, t)
}

func ttyDev(*os.File) (uint64, error) { return 0, nil }

type waiter struct {
	pid, tid int
	start    uint64
	switches uint64
}

func ttyWaiters(int, int, uint64) []waiter { return nil }
