//go:build !linux

package proc

import "golang.org/x/sys/unix"

// Scan reports false: there is no process table to scan on this system.
func Scan(fn func(Stat) bool) bool { return false }

// HasEnv reports false: the environment of other processes cannot be read on this system.
func HasEnv(pid int, entry string, prefix bool) bool { return false }

func signalExact(st Stat, sig unix.Signal) {}

const procAvailable = false

func reapOrphan(st Stat, leader int) {}
