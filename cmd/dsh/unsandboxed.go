package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dsh-go/dsh/tools"
)

// A bash call may ask to run outside the sandbox (`sandbox: "off"` with a justification). That
// is never the model's to grant: dsh puts an ask stage in front of the tool, so a person decides
// through the registry's approver (an elicitation on the calling session), and the tool runs the
// command unconfined only when it finds that very ask among the call's approvals
// (tools.Approved). A call that cannot be put to a person is refused with the approval text.

// unsandboxedGrant names what an approval covers: one command, run outside the sandbox.
func unsandboxedGrant(command string) string { return "unsandboxed:" + command }

// unsandboxedArgs are the arguments of a bash call that the stage reads.
type unsandboxedArgs struct {
	Command       string `json:"command"`
	Sandbox       string `json:"sandbox"`
	Justification string `json:"justification"`
}

// askUnsandboxed is the Before stage: a bash call with sandbox "off" is asked, with the command
// and the model's reason shown to the person; anything else passes.
func askUnsandboxed(_ context.Context, call tools.Call) tools.Decision {
	if call.Name != "bash" {
		return tools.Allow()
	}
	var a unsandboxedArgs
	if json.Unmarshal(call.Args, &a) != nil || a.Sandbox != "off" {
		return tools.Allow() // the tool reports bad arguments itself
	}
	return tools.Decision{
		Verdict: tools.VerdictAsk,
		Reason:  "running a command outside the sandbox needs a person's approval",
		Prompt:  fmt.Sprintf("Run this command outside the sandbox?\n\n%s\n\nThe model's reason: %s", a.Command, a.Justification),
		Grants:  []string{unsandboxedGrant(a.Command)},
	}
}

// errUnsandboxedNotAsked is the tool's answer when the call reached it without the ask having
// been approved (a registry without the stage).
var errUnsandboxedNotAsked = errors.New("no person approved running this command outside the sandbox")

// approvedUnsandboxed is the bash tool's ApproveUnsandboxed: true only when the registry's
// stage asked a person about exactly this command and they approved.
func approvedUnsandboxed(ctx context.Context, _ tools.Call, command, _ string) (bool, error) {
	for _, d := range tools.Approved(ctx) {
		if slices.Contains(d.Grants, unsandboxedGrant(command)) {
			return true, nil
		}
	}
	return false, errUnsandboxedNotAsked
}
