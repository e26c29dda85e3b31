//go:build !linux

package ptyshell

import (
	"os"

	"golang.org/x/sys/unix"
)

// Outside Linux there is no /proc: the stdin-wait probe is off, and Close stops the shell and its
// process group only (internal/proctree's fallback; processes in other groups may survive).

func foregroundGroup(fd uintptr) (int, error) { return unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }

func eofChar(fd uintptr) byte {
	t, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	if err != nil || t.Cc[unix.VEOF] == 0 {
		return 0x04
	}
	return t.Cc[unix.VEOF]
}

func setModes(fd uintptr) error {
	t, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	if err != nil {
		return err
	}
	terminalModes(t)
	return unix.IoctlSetTermios(int(fd), unix.TIOCSETA, t)
}

func ttyDev(*os.File) (uint64, error) { return 0, nil }

func ttyWaiters(int, int, uint64) []waiter { return nil }

func writesTTY(int, int, uint64) bool { return true }

func cmdline(int) (string, bool) { return "", false }
