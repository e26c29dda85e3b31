//go:build !unix

package gates

import (
	"fmt"
	"os"
	"syscall"
)

func newGroupAttr() *syscall.SysProcAttr { return nil }

// signalGroup cannot reach a process group on this system; doc-sync's
// children there see only what the console sends them.
func signalGroup(pgid int, sig os.Signal) {}

func signalName(s syscall.Signal) string { return fmt.Sprintf("signal %d", int(s)) }
