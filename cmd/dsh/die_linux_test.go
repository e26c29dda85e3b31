package main

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd get SIGKILL should the test binary die first: a dsh whose supervisor is
// killed that way stops everything it started, so a crashed test leaves nothing behind.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
