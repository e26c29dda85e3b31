package ptyshell

import "github.com/dsh-go/dsh/internal/proctree"

// procStat is what this package reads of a process (internal/proctree's view).
type procStat = proctree.Stat

// waiter identifies one thread blocked reading the terminal: the thread and the number of
// times it has been scheduled, which changes once it wakes up (so a later wait in the same
// thread is told apart from the one already answered). editor is set when it waits the way a
// line editor does (select, poll or epoll on the terminal), as bash does at its prompt, rather
// than in a read (as the read builtin does).
type waiter struct {
	pid, tid int
	start    uint64
	switches uint64
	editor   bool
}
