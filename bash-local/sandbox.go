package bashlocal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-local/internal/proc"
	"github.com/dsh-go/dsh/bash/bashtext"
	"github.com/dsh-go/dsh/internal/sandbox"
)

// confinement is the sandbox of one call: the prepared rules, the variables the sandbox adds to
// the command's environment, and the policy to report.
type confinement struct {
	prepared *sandbox.Prepared
	policy   sandbox.Policy
	resolved bash.Sandbox // as the result reports it
	readOnly bool
	workdir  string
	env      map[string]string
}

// confine prepares the sandbox of spec, a resolved request, or returns nil when spec runs
// unconfined. Its errors match bash.ErrSandboxUnavailable when this machine cannot enforce the
// policy.
func (e *Executor) confine(spec bash.Request) (*confinement, error) {
	sb := spec.Sandbox
	if !sb.Enabled() {
		return nil, nil
	}
	tmp, err := e.tmp.Path()
	if e.isClosed() {
		return nil, bash.ErrClosed // Close removed the directory, or is about to
	}
	if err != nil {
		return nil, fmt.Errorf("bashlocal: sandbox temporary directory: %w", err)
	}
	workdir, err := filepath.Abs(spec.Workdir)
	if err != nil {
		return nil, fmt.Errorf("bashlocal: sandbox workdir: %w", err)
	}
	shell := sandbox.Shell{Tmp: tmp, WorkspaceWrite: sb.Mode == bash.SandboxWorkspaceWrite, Roots: sb.WritableRoots,
		Deny: sb.DenyPaths(), Network: sb.Network == bash.NetworkOn, BestEffort: sb.BestEffort}
	if shell.WorkspaceWrite {
		// The workspace is the executor's working directory, not the call's: a model picks the
		// call's (tool-bash passes its workdir argument through), and must not pick what it may
		// write.
		if shell.Workspace = e.cfg.Workdir; shell.Workspace == "" {
			if shell.Workspace, err = os.Getwd(); err != nil {
				return nil, fmt.Errorf("bashlocal: sandbox workspace: %w", err)
			}
		}
	}
	policy, err := shell.Policy()
	if err != nil {
		return nil, fmt.Errorf("bashlocal: %w", err)
	}
	prepared, err := e.sb.Prepare(policy)
	if ue := (*sandbox.UnavailableError)(nil); errors.As(err, &ue) {
		return nil, fmt.Errorf("bashlocal: %w: %s", bash.ErrSandboxUnavailable, strings.Join(ue.Missing, "; "))
	}
	if err != nil {
		return nil, fmt.Errorf("bashlocal: %w", err)
	}
	resolved := sb
	resolved.WritableRoots, resolved.DenyRead = policy.Writable, policy.DenyRead
	return &confinement{
		prepared: prepared, policy: policy, resolved: resolved,
		readOnly: sb.Mode == bash.SandboxReadOnly, workdir: workdir, env: shell.Env(),
	}, nil
}

// environ merges the sandbox's variables under the request's own, which win.
func (c *confinement) environ(request map[string]string) map[string]string {
	if c == nil {
		return request
	}
	merged := make(map[string]string, len(c.env)+len(request))
	for k, v := range c.env {
		merged[k] = v
	}
	for k, v := range request {
		merged[k] = v
	}
	return merged
}

// report returns what a result says of the sandbox: the policy, what was not enforced and, when
// the command failed, what the sandbox may have denied (read from its standard error).
func (c *confinement) report(failed bool, stderr string) *bash.SandboxReport {
	if c == nil {
		return nil
	}
	r := &bash.SandboxReport{Policy: c.resolved, Unenforced: c.prepared.Unenforced()}
	if failed {
		r.Denial = sandbox.Explain(c.policy, c.readOnly, c.workdir, stderr, c.resolved.String())
	}
	return r
}

// note is the line a background task's last read carries about its sandbox, or "".
func (c *confinement) note(failed bool, stderr string) string {
	return strings.Join(bashtext.SandboxMarkers(c.report(failed, stderr)), "\n")
}

func (e *Executor) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// SandboxPolicy implements bash.SandboxDescriber: it returns the configured sandbox policy.
func (e *Executor) SandboxPolicy() bash.Sandbox { return e.cfg.Sandbox }

// failed reports whether exit is a death by a signal or a non-zero exit code.
func failed(exit proc.Exit) bool { return exit.Signal != "" || (exit.Code != nil && *exit.Code != 0) }
