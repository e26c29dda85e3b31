package tools

import (
	"context"
	"fmt"
	"runtime/debug"
)

// permit runs the Before stages of c on call and returns (zero, true) when the tool may run,
// or the failed result that stands for the refusal and false. A deny ends the stages at once;
// the asks are collected and each one must then be approved, in stage order, unless the
// owner's approvals for the session already cover it.
func (r *Registry) permit(ctx context.Context, call Call, c chains) (approved []Decision, refusal Result, ok bool) {
	var asks []Decision
	for _, s := range c.before {
		d := s(ctx, call)
		switch d.Verdict {
		case VerdictAllow:
		case VerdictAsk:
			asks = append(asks, d)
		default: // VerdictDeny and anything unknown: refuse
			return nil, ErrorResult(&Error{Code: CodeDenied, Message: d.Reason}), false
		}
	}
	owner := ""
	if call.Agent != nil {
		owner = call.Agent.Owner
	}
	for _, d := range asks {
		if r.granted(owner, d.Grants) {
			approved = append(approved, d)
			continue
		}
		if c.approver == nil {
			return nil, approvalRequired(d, ErrNoApprover), false
		}
		a, err := c.approver.Approve(ctx, call, d)
		switch {
		case err != nil:
			return nil, approvalRequired(d, err), false
		case a == ApproveSession:
			r.grant(owner, d.Grants)
		case a == ApproveOnce:
		default:
			return nil, declined(d), false
		}
		approved = append(approved, d)
	}
	return approved, Result{}, true
}

// approvedKey is the context key of the asks a person approved for the call being run.
type approvedKey struct{}

// Approved returns the asks that were approved (by a person, now or earlier in the session) for
// the call whose context is ctx, as the tool runs it; nil when none was asked. A tool that must
// not do something without a person's consent (leave a sandbox, say) checks for its own ask
// here, so that approval can only come from the registry's permission stages, never from the
// call's arguments.
func Approved(ctx context.Context) []Decision {
	d, _ := ctx.Value(approvedKey{}).([]Decision)
	return d
}

// granted reports whether owner's approvals for the session cover every one of grants (never
// for the empty owner or an empty list).
func (r *Registry) granted(owner string, grants []string) bool {
	if owner == "" || len(grants) == 0 {
		return false
	}
	r.grantsMu.Lock()
	defer r.grantsMu.Unlock()
	have := r.grants[owner]
	for _, g := range grants {
		if !have[g] {
			return false
		}
	}
	return true
}

// grant records grants as approved for owner's session (nothing for the empty owner).
func (r *Registry) grant(owner string, grants []string) {
	if owner == "" || len(grants) == 0 {
		return
	}
	r.grantsMu.Lock()
	defer r.grantsMu.Unlock()
	if r.grants == nil {
		r.grants = map[string]map[string]bool{}
	}
	have := r.grants[owner]
	if have == nil {
		have = map[string]bool{}
		r.grants[owner] = have
	}
	for _, g := range grants {
		have[g] = true
	}
}

// runAfter passes res through the After stage s and returns what the model reads next. A
// panic in s blocks the result: the text of a result that could not be checked must not get
// through.
func (r *Registry) runAfter(ctx context.Context, call Call, s After, res Result) (out Result) {
	defer func() {
		if v := recover(); v != nil {
			out = ErrorResult(&Error{Code: CodeBlocked, Message: fmt.Sprintf("result blocked: a result stage of tool %q panicked", call.Name),
				Err: &PanicError{Tool: call.Name, Value: v, Stack: debug.Stack()}})
		}
	}()
	o := s(ctx, call, res)
	switch o.Action {
	case Accept:
		return res
	case Replace:
		if o.Result.Content == nil {
			o.Result.Content = []Content{}
		}
		return o.Result
	default: // Block and anything unknown
		return ErrorResult(&Error{Code: CodeBlocked, Message: "result blocked: " + o.Reason})
	}
}
