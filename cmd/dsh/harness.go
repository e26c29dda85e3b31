package main

import (
	"fmt"

	"github.com/dsh-go/dsh/internal/proctree"
	"github.com/dsh-go/dsh/internal/supervisor"
)

// protect is the start of every command that runs tools (dsh mcp, dsh call), before anything is
// started or read. It makes this process non-dumpable, so that no command can read its /proc
// files (its unscrubbed environment above all: `cat /proc/$PPID/environ`), then runs dsh under
// its supervisor (Linux), so that no command outlives dsh even when dsh is killed: the process
// that was started stays as the supervisor and never returns from here; its child, the worker,
// runs dsh and marks itself non-dumpable in turn (execve made it dumpable again). It returns an
// error when either cannot be done: dsh must not run without them.
func protect() error {
	if err := proctree.SetDumpable(false); err != nil {
		return fmt.Errorf("hide this process's /proc files from the commands: %w", err)
	}
	return supervisor.Main()
}
