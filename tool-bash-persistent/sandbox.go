package persistentbash

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtext"
	"github.com/dsh-go/dsh/internal/sandbox"
)

// confinement is the sandbox every shell of a Shells starts in: the prepared rules, the private
// temporary directory, and what a result says of them.
type confinement struct {
	sb        *sandbox.Sandbox
	prepared  *sandbox.Prepared
	policy    sandbox.Policy
	resolved  bash.Sandbox
	tmp       string
	variables map[string]string // what the sandbox sets in a shell's environment
}

// newConfinement prepares the sandbox of cfg (after withDefaults), or returns nil when it is off.
// Its errors match bash.ErrSandboxUnavailable when the machine cannot enforce the policy.
func newConfinement(cfg Config) (*confinement, error) {
	sb := cfg.Sandbox
	if err := sb.Validate(); err != nil {
		return nil, fmt.Errorf("persistentbash: Config: %w", err)
	}
	if !sb.Enabled() {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "dsh-pty-tmp-")
	if err != nil {
		return nil, fmt.Errorf("persistentbash: sandbox temporary directory: %w", err)
	}
	shell := sandbox.Shell{Tmp: tmp, Workspace: cfg.Workdir, WorkspaceWrite: sb.Mode == bash.SandboxWorkspaceWrite,
		Roots: sb.WritableRoots, Deny: sb.DenyPaths(), Network: sb.Network == bash.NetworkOn, BestEffort: sb.BestEffort}
	policy, err := shell.Policy()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("persistentbash: %w", err)
	}
	c := &confinement{sb: sandbox.New(sandbox.Options{}), tmp: tmp, policy: policy, variables: shell.Env()}
	c.prepared, err = c.sb.Prepare(c.policy)
	if err != nil {
		c.close()
		if ue := (*sandbox.UnavailableError)(nil); errors.As(err, &ue) {
			return nil, fmt.Errorf("persistentbash: %w: %s", bash.ErrSandboxUnavailable, strings.Join(ue.Missing, "; "))
		}
		return nil, fmt.Errorf("persistentbash: %w", err)
	}
	c.resolved = sb
	c.resolved.WritableRoots, c.resolved.DenyRead = policy.Writable, policy.DenyRead
	return c, nil
}

// env returns the variables the sandbox sets in a shell (sandbox.Shell.Env), or nil without one.
func (c *confinement) env() map[string]string {
	if c == nil {
		return nil
	}
	return c.variables
}

// notes returns the sandbox lines a result ends with: what was not enforced, and, for a command
// that failed, what the sandbox may have denied, read from its output.
func (c *confinement) notes(failed bool, output, workdir string) string {
	if c == nil {
		return ""
	}
	r := &bash.SandboxReport{Policy: c.resolved, Unenforced: c.prepared.Unenforced()}
	if failed {
		r.Denial = sandbox.Explain(c.policy, c.resolved.Mode == bash.SandboxReadOnly, workdir, output, c.resolved.String())
	}
	return strings.Join(bashtext.SandboxMarkers(r), "\n")
}

// description is what the tool's description adds about the sandbox in force.
func (c *confinement) description() string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf(" The shell runs in a sandbox (%s): its commands %s. "+
		"A command the sandbox stopped ends with a line `[sandbox: …]` saying what was denied.", c.resolved, bashtext.Confines(c.resolved))
}

// close releases the rules and removes the temporary directory.
func (c *confinement) close() {
	if c == nil {
		return
	}
	c.sb.Close()
	os.RemoveAll(c.tmp)
}
