//go:build !linux

package proc

import "golang.org/x/sys/unix"

// Stat is what the process layer knows of a process. Outside Linux there is no /proc to read:
// trees are tracked by process group only.
type Stat struct {
	PID       int
	State     byte
	PPID      int
	PGRP      int
	Session   int
	StartTime uint64
}

// Dead reports whether the process has exited.
func (s Stat) Dead() bool { return s.State == 'Z' || s.State == 'X' }

// Scan reports false: there is no process table to scan on this system.
func Scan(fn func(Stat) bool) bool { return false }

// HasEnv reports false: the environment of other processes cannot be read on this system.
func HasEnv(pid int, entry string, prefix bool) bool { return false }

func signalExact(st Stat, sig unix.Signal) {}

const procAvailable = false

func reapOrphan(st Stat, leader int) {}
