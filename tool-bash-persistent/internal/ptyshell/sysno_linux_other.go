//go:build linux && !amd64 && !arm64

package ptyshell

// On other architectures the stdin-wait probe is off: no number matches.
const (
	sysRead        = -1
	sysPoll        = -2
	sysPread64     = -3
	sysReadv       = -4
	sysSelect      = -5
	sysEpollWait   = -6
	sysPselect6    = -7
	sysPpoll       = -8
	sysEpollPwait  = -9
	sysPreadv      = -10
	sysPreadv2     = -11
	sysEpollPwait2 = -12
)
