package ptyshell

import "github.com/dsh-go/dsh/internal/proctree"

// procStat is what this package reads of a process (internal/proctree's view).
type procStat = proctree.Stat

// waiter identifies one thread blocked reading the terminal: the thread and the number of
// times it has been scheduled, which changes once it wakes up (so a later wait in the same
// thread is told apart from the one already answered).
type waiter struct {
	pid, tid int
	start    uint64
	switches uint64
}
