//go:build linux && arm64

package ptyshell

// System call numbers that can block reading a terminal (arm64, the generic table: it has no
// select, poll or epoll_wait; negative numbers never match).
const (
	sysRead        = 63
	sysPoll        = -1
	sysPread64     = 67
	sysReadv       = 65
	sysSelect      = -2
	sysEpollWait   = -3
	sysPselect6    = 72
	sysPpoll       = 73
	sysEpollPwait  = 22
	sysPreadv      = 69
	sysPreadv2     = 286
	sysEpollPwait2 = 441
)
