package ptyshell

import (
	"github.com/dsh-go/dsh/internal/proctree"
	"golang.org/x/sys/unix"
)

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

// terminalModes turns off, in t, echo (typed wrapper lines are never echoed back) and output
// post-processing (OPOST: the LF to CR LF translation). Translating costs the kernel a pass over
// every byte a program prints, and the sanitizer reads LF and CR LF alike; a program that turns
// it back on (stty sane) changes the speed of later output, not its text.
func terminalModes(t *unix.Termios) {
	t.Lflag &^= unix.ECHO | unix.ECHONL
	t.Oflag &^= unix.OPOST
}
