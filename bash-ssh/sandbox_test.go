package bashssh

import (
	"errors"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
)

// TestSandboxRefused checks that every sandbox but off is refused, by Resolve, Run and Start, with
// an error that says why, and that nothing runs.
func TestSandboxRefused(t *testing.T) {
	ex := newExecutor(t, serverConfig(sharedServer(t)))
	for _, mode := range []bash.SandboxMode{bash.SandboxReadOnly, bash.SandboxWorkspaceWrite} {
		req := bash.Request{Command: "true", Sandbox: bash.Sandbox{Mode: mode}}
		_, errResolve := ex.Resolve(req)
		_, errRun := ex.Run(t.Context(), req)
		_, errStart := ex.Start(req)
		for _, err := range []error{errResolve, errRun, errStart} {
			if !errors.Is(err, bash.ErrSandboxUnavailable) || !strings.Contains(err.Error(), "cannot confine a command on the remote host") {
				t.Errorf("%s: %v, want a sandbox-unavailable error saying why", mode, err)
			}
		}
	}
	if len(ex.List()) != 0 {
		t.Errorf("a refused Start left tasks: %v", ex.List())
	}
	if _, err := runReq(ex, bash.Request{Command: "true", Sandbox: bash.Sandbox{Mode: bash.SandboxOff}}); err != nil {
		t.Errorf("sandbox off: %v", err)
	}
}
