//go:build linux && amd64

package ptyshell

// System call numbers that can block reading a terminal (x86-64).
const (
	sysRead        = 0
	sysPoll        = 7
	sysPread64     = 17
	sysReadv       = 19
	sysSelect      = 23
	sysEpollWait   = 232
	sysPselect6    = 270
	sysPpoll       = 271
	sysEpollPwait  = 281
	sysPreadv      = 295
	sysPreadv2     = 327
	sysEpollPwait2 = 441
)
