package main

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// watchPeer returns a function that watches for the client's end of out going away, or nil when
// out has no file descriptor to watch (it is not a syscall.Conn, such as an *os.File or a
// *net.UnixConn).
//
// The returned function starts the watch and returns a channel that is closed when the reading
// end of out is gone: poll(2) reports POLLERR on a pipe whose readers all closed it, and
// POLLHUP on a socket whose peer closed it. A socket whose peer only shut down its writing
// half, and a file or terminal, never report either. The watch ends when stop is closed; its
// goroutines and file descriptors are released then. It returns nil (a channel that never
// closes) when the watch cannot start.
//
// The end of stdin alone cannot tell a client that closed stdin but still reads stdout from a
// client that is gone; this watch can, without writing anything to out.
func watchPeer(out any) func(stop <-chan struct{}) <-chan struct{} {
	sc, ok := out.(syscall.Conn)
	if !ok {
		return nil
	}
	return func(stop <-chan struct{}) <-chan struct{} {
		fd, err := dupFD(sc)
		if err != nil {
			return nil
		}
		wakeR, wakeW, err := os.Pipe() // close-on-exec on every platform, unlike unix.Pipe2
		if err != nil {
			unix.Close(fd)
			return nil
		}
		gone := make(chan struct{})
		go func() {
			<-stop
			wakeW.Close() // the poll below sees POLLHUP on wakeR
		}()
		go func() {
			defer unix.Close(fd)
			defer wakeR.Close()
			fds := []unix.PollFd{{Fd: int32(fd)}, {Fd: int32(wakeR.Fd()), Events: unix.POLLIN}}
			for {
				_, err := unix.Poll(fds, -1)
				switch {
				case errors.Is(err, unix.EINTR):
					continue
				case err != nil, fds[1].Revents != 0:
					return
				case fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
					close(gone)
					return
				case fds[0].Revents&unix.POLLNVAL != 0:
					return
				}
			}
		}()
		return gone
	}
}

// dupFD returns a close-on-exec duplicate of sc's file descriptor, which the caller owns: the
// watch must not hold the original, which its owner may close at any time.
func dupFD(sc syscall.Conn) (int, error) {
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(orig uintptr) {
		fd, derr = unix.FcntlInt(orig, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, err
	}
	return fd, derr
}
