//go:build !linux

package supervisor

import (
	"os"
	"syscall"
)

var extraTerminating = []os.Signal{syscall.SIGEMT}

// Outside Linux there is no child subreaper: a supervisor could not keep the worker's escapees
// below it, so none is started.
func main() error { return nil }
