//go:build !linux

package proc

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socketpair returns a connected pair of stream sockets marked close-on-exec. Without
// SOCK_CLOEXEC (darwin) the flag is set after the call, under syscall.ForkLock so that no
// concurrent fork in this process inherits the descriptors in between (as package net does).
func socketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return fds, nil
}
