//go:build linux

package ptyshell

import (
	"os"
	"testing"

	"github.com/dsh-go/dsh/internal/proctree"
)

func TestReadsTTYIgnoresRunningAndUnknownCalls(t *testing.T) {
	checkLeaks(t)
	self, _ := proctree.ReadStat(os.Getpid())
	for _, line := range []string{"running", "-1 0x7ffd 0x7f00", "", "61 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8", "zz 0x0 0x0 0x0 0x0 0x0 0x0 0 0"} {
		if _, ok := readsTTY(self, line, 1); ok {
			t.Errorf("%q read as a terminal wait", line)
		}
	}
}
