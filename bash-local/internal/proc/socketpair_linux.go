package proc

import "golang.org/x/sys/unix"

// socketpair returns a connected pair of stream sockets, both close-on-exec from birth.
func socketpair() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}
