package gates

import (
	"syscall"
	"unsafe"
)

// waitExited blocks until the process pid has exited, leaving it
// unreaped (waitid with WNOWAIT), so that its PID stays reserved. It
// reports false if the wait failed and the process may still run.
func waitExited(pid int) bool {
	const (
		pPID    = 1
		wExited = 4
		wNoWait = 0x01000000
	)
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wExited|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			return errno == 0
		}
	}
}
