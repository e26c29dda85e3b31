package toolbash

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtext"
	"github.com/dsh-go/dsh/tools"
)

// ApproveFunc asks a person whether the command of call may run outside the sandbox, for the
// reason justification the model gave; it returns true when they approved. An error (no one to
// ask, a cancelled context) counts as a refusal and is shown to the model.
type ApproveFunc func(ctx context.Context, call tools.Call, command, justification string) (bool, error)

// errNoApprover is what the model reads when it asks to leave the sandbox and nothing can
// approve that.
var errNoApprover = errors.New("running outside the sandbox needs a person's approval, and no approver is configured; the command did not run. Run it inside the sandbox, or ask the user to run it")

// sandboxDescription is what the bash tool's description adds about the sandbox in force: nothing
// for an executor that does not say or runs unconfined.
func sandboxDescription(ex bash.Executor) string {
	d, ok := ex.(bash.SandboxDescriber)
	if !ok || !d.SandboxPolicy().Enabled() {
		return ""
	}
	p := d.SandboxPolicy()
	return fmt.Sprintf(" Commands run in a sandbox (%s): they %s. "+
		"A command the sandbox stopped ends with a line `[sandbox: …]` saying what was denied. "+
		"To ask for one command to run outside the sandbox, pass `sandbox: \"off\"` with a `justification`: a person decides.", p, bashtext.Confines(p))
}

// unsandboxed returns the sandbox the call's request carries: the executor's (the zero value),
// or off when the model asked for it with a justification and the approver said yes. It returns
// an error for a bad sandbox argument and for a refusal.
func (s *Set) unsandboxed(ctx context.Context, call tools.Call, args BashArgs) (bash.Sandbox, error) {
	switch {
	case args.Sandbox == "":
		return bash.Sandbox{}, nil
	case args.Sandbox != string(bash.SandboxOff):
		return bash.Sandbox{}, fmt.Errorf("invalid sandbox: the only value is \"off\", got %q", args.Sandbox)
	case strings.TrimSpace(args.Justification) == "":
		return bash.Sandbox{}, errors.New("invalid justification: sandbox \"off\" needs a reason the command cannot run in the sandbox")
	}
	if d, ok := s.ex.(bash.SandboxDescriber); ok && !d.SandboxPolicy().Enabled() {
		return bash.Sandbox{}, nil // nothing to leave
	}
	if s.cfg.ApproveUnsandboxed == nil {
		return bash.Sandbox{}, errNoApprover
	}
	ok, err := s.cfg.ApproveUnsandboxed(ctx, call, args.Command, args.Justification)
	switch {
	case err != nil:
		return bash.Sandbox{}, fmt.Errorf("running outside the sandbox was not approved (%v); the command did not run", err)
	case !ok:
		return bash.Sandbox{}, errors.New("running outside the sandbox was refused; the command did not run")
	}
	return bash.Sandbox{Mode: bash.SandboxOff}, nil
}
