package tools

import (
	"context"
	"errors"
	"fmt"
)

// Verdict is what a [Before] stage decides about a call. The verdicts are ordered: deny wins
// over ask and ask over allow, so the verdict of several stages is the largest.
type Verdict uint8

const (
	// VerdictAllow lets the call run, as far as this stage is concerned.
	VerdictAllow Verdict = iota
	// VerdictAsk runs the call only once a person has approved it (see [Approver]).
	VerdictAsk
	// VerdictDeny refuses the call: the tool does not run and the model reads the reason.
	VerdictDeny
)

// String returns "allow", "ask" or "deny".
func (v Verdict) String() string {
	switch v {
	case VerdictAllow:
		return "allow"
	case VerdictAsk:
		return "ask"
	case VerdictDeny:
		return "deny"
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

// Decision is a [Before] stage's answer about one call.
//
// Verdict is the decision. Reason says why, in a sentence a model can act on: for a deny it is
// the text of the failed result after "Error: ", for an ask it is what both the model (when no
// person can approve) and the person read. Prompt is what a person is shown to decide an ask
// (the call in full, such as the command it would run); empty means Reason. Grants names what an
// approval "for this session" covers: a later ask of the same owner whose grants have all been
// approved for the session runs without asking again; an ask without grants can only be
// approved once.
type Decision struct {
	Verdict Verdict
	Reason  string
	Prompt  string
	Grants  []string
}

// Allow returns the decision that lets a call run.
func Allow() Decision { return Decision{} }

// Before is a permission stage that runs before a tool: given the call's context ctx and the
// call exactly as the tool will receive it, it returns a [Decision]. Stages run in the order
// they were added ([Registry.UseBefore]) after every [Middleware], right before the tool, so no
// middleware can change the call after a stage has judged it. A deny stops the chain; every
// ask must then be approved (see [Approver]) before the tool runs. A stage that panics refuses
// the call.
//
//catalog:event tools/before
//catalog:mode serial
type Before func(ctx context.Context, call Call) Decision

// Action is what an [After] stage does with a result.
type Action uint8

const (
	// Accept passes the result on unchanged.
	Accept Action = iota
	// Replace passes Outcome.Result on instead.
	Replace
	// Block replaces the result with a failed one saying why (code [CodeBlocked]).
	Block
)

// Outcome is an [After] stage's answer about one result: Action, the replacement Result (for
// Replace) and the Reason (for Block, the text after "Error: result blocked: ").
type Outcome struct {
	Action Action
	Result Result
	Reason string
}

// After is a result stage: given the call's context ctx, the call and the result res that is
// about to be returned, it returns an [Outcome] that accepts, replaces or blocks it. After
// stages run in the order they were added ([Registry.UseAfter]) on the result every
// [Middleware] has had its say on, each seeing the previous one's output, so the last word on
// what the model reads is theirs. They run on every result, failures included. A stage that
// panics blocks the result.
//
//catalog:event tools/after
//catalog:mode serial
type After func(ctx context.Context, call Call, res Result) Outcome

// Approval is a person's answer to an ask.
type Approval uint8

const (
	// Decline refuses the call.
	Decline Approval = iota
	// ApproveOnce runs this call.
	ApproveOnce
	// ApproveSession runs this call and every later one of the same owner whose grants are
	// covered by the approved ones (see [Decision]).
	ApproveSession
)

// Approver asks a person about calls a [Before] stage wants approved.
//
//catalog:service tools/approver
type Approver interface {
	// Approve shows the ask d about call to a person and returns their answer. ctx is the call's
	// context: when it ends, Approve returns its error. It returns an error wrapping
	// ErrNoApprover when no person can be asked for this call (the model then reads that a
	// person must approve it), and any other error when asking failed; either way the call does
	// not run.
	Approve(ctx context.Context, call Call, d Decision) (Approval, error)
}

// ApproverFunc adapts a function to the [Approver] interface.
type ApproverFunc func(ctx context.Context, call Call, d Decision) (Approval, error)

// Approve returns f(ctx, call, d).
func (f ApproverFunc) Approve(ctx context.Context, call Call, d Decision) (Approval, error) {
	return f(ctx, call, d)
}

// ErrNoApprover is returned (possibly wrapped) by an [Approver] that has no person to ask for a
// call; a [Registry] without an approver behaves the same.
var ErrNoApprover = errors.New("no person can approve calls in this session")

// Error codes of calls the permission stages stopped.
const (
	// CodeApprovalRequired marks an ask that no person could answer, or whose asking failed.
	CodeApprovalRequired = "APPROVAL_REQUIRED"
	// CodeDeclined marks an ask a person declined.
	CodeDeclined = "DECLINED"
	// CodeBlocked marks a result an [After] stage blocked.
	CodeBlocked = "BLOCKED"
)

// Texts of the failed results the stages produce, after the reason. They tell the model what
// it may do next: never look for another way to the same effect.
const (
	approvalNeededText = "A person must approve this call and no one can be asked in this session. " +
		"Do not try to get the same effect another way; fix the call if it is wrong, otherwise ask the user to run it or to change the policy."
	declinedText = "Do not retry it or try to get the same effect another way; ask the user how to proceed."
)

// approvalRequired returns the failed result of an ask no person could answer (err wraps
// ErrNoApprover) or whose asking failed.
func approvalRequired(d Decision, err error) Result {
	if errors.Is(err, ErrNoApprover) {
		return ErrorResult(&Error{Code: CodeApprovalRequired, Message: "approval required: " + d.Reason + ". " + approvalNeededText, Err: err})
	}
	return ErrorResult(&Error{Code: CodeApprovalRequired, Message: "approval failed, the call did not run: " + err.Error(), Err: err})
}

// declined returns the failed result of an ask a person declined.
func declined(d Decision) Result {
	return ErrorResult(&Error{Code: CodeDeclined, Message: "a person declined this call (" + d.Reason + "). " + declinedText})
}
