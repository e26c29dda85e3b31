package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	bashpolicy "github.com/dsh-go/dsh/bash-policy"
	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/tools"
)

// guard puts the safety stages of cfg in front of the tools of ts and returns the tools to
// serve: the permission policy (when cfg has one) as a Before stage, with a line stating it
// appended to the description of every tool it judges, and the redaction of the harness's
// secrets as an After stage (unless cfg.NoRedact), and with a sandbox the ask for a command
// that wants to leave it. Without a policy the tools are served as their packages made them.
func (ts *toolset) guard(cfg config, list []*tools.Tool) []*tools.Tool {
	if !cfg.NoRedact {
		secrets := harnessSecrets()
		ts.reg.UseAfter(tools.Redact(secrets))
		ts.redact = tools.RedactText(secrets) // for what leaves by another way: progress messages
	}
	if cfg.Sandbox.Enabled() && !cfg.Persistent {
		ts.reg.UseBefore(askUnsandboxed) // see unsandboxed.go
	}
	if cfg.Policy == nil {
		return list
	}
	ts.stage = cfg.Policy.Stage(bashpolicy.StageConfig{Workspace: ts.dir, Persistent: cfg.Persistent})
	ts.reg.UseBefore(ts.stage.Before)
	note := cfg.Policy.Describe()
	out := make([]*tools.Tool, len(list))
	for i, t := range list {
		out[i] = t
		if t.Name == "bash" {
			own := *t // the provider's tool stays as its package made it
			own.Description += "\n\n" + note
			out[i] = &own
		}
	}
	return out
}

// harnessSecrets returns the variables of dsh's environment that the scrub keeps from every
// command (its own keys and tokens), as the secrets to redact from results.
func harnessSecrets() []tools.Secret {
	var out []tools.Secret
	for _, kv := range envpolicy.Default().Removed(os.Environ()) {
		name, value, _ := strings.Cut(kv, "=")
		out = append(out, tools.Secret{Name: name, Value: value})
	}
	return out
}

// forget drops what the stages remember of owner (approvals for its session, where its shell
// is), once its session has ended.
func (ts *toolset) forget(owner string) {
	ts.reg.Forget(owner)
	if ts.stage != nil {
		ts.stage.Forget(owner)
	}
}

// The MCP side of an ask: the server answers the registry's asks by eliciting the client's
// user, with the multi-round-trip pattern of the SDK (SEP-2322). The first time a call reaches
// the ask, the handler returns an input request instead of a result; the client (or, for a
// client on an older protocol, the SDK on the server's side through ServerSession.Elicit) asks
// its user and sends the call again with the answer, which the approver reads on the second
// run. The request state binds the answer to the session, the call and what was shown, with a
// key only this server knows.

// approvalInput is the key of the elicitation in a call's input requests and responses.
const approvalInput = "approval"

// approvalKey is the context key of a call's askState.
type approvalKey struct{}

// askState is what one MCP call carries to the approver and back: whether its client can be
// asked, the answer it brought (responses, under state), and the elicitation to send when it
// has none.
type askState struct {
	canAsk    bool
	responses mcp.InputResponseMap
	state     string

	pending      *mcp.ElicitParams
	pendingState string
}

// errAwaitingApproval is the approver's error when it has sent its question to the client:
// the handler answers with the question instead of the result.
var errAwaitingApproval = errors.New("waiting for the client's user to approve the call")

// approver answers the registry's asks for the calls of an MCP session (see askState).
type approver struct {
	key []byte // signs request states: a client cannot forge an approval for another call
}

func newApprover() *approver {
	a := &approver{key: make([]byte, 32)}
	_, _ = rand.Read(a.key) // crypto/rand.Read never fails
	return a
}

// Approve returns the answer the call brought back for d, or sends the question: it returns
// tools.ErrNoApprover when the call has no MCP client that can be asked (dsh call, a client
// without the elicitation capability).
func (a *approver) Approve(ctx context.Context, call tools.Call, d tools.Decision) (tools.Approval, error) {
	st, _ := ctx.Value(approvalKey{}).(*askState)
	if st == nil || !st.canAsk {
		return tools.Decline, tools.ErrNoApprover
	}
	tag := a.sign(call, d)
	if st.state == tag {
		if res, ok := st.responses[approvalInput].(*mcp.ElicitResult); ok {
			return approvalOf(res), nil
		}
	}
	st.pending, st.pendingState = elicitation(d), tag
	return tools.Decline, errAwaitingApproval
}

// sign returns the request state of the ask d about call: an HMAC of the owner, the call and
// what the user is shown.
func (a *approver) sign(call tools.Call, d tools.Decision) string {
	m := hmac.New(sha256.New, a.key)
	owner := ""
	if call.Agent != nil {
		owner = call.Agent.Owner
	}
	for _, s := range []string{owner, call.Name, string(call.Args), d.Prompt, d.Reason} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// The choices of the elicitation form.
const (
	choiceOnce    = "once"
	choiceSession = "session"
	choiceDecline = "decline"
)

// elicitation returns the question put to the user about the ask d.
func elicitation(d tools.Decision) *mcp.ElicitParams {
	prompt := d.Prompt
	if prompt == "" {
		prompt = d.Reason
	}
	return &mcp.ElicitParams{
		Message: prompt + "\n\nApprove it once, approve it for this session, or decline.",
		RequestedSchema: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"decision": {
					Type:        "string",
					Title:       "Decision",
					Description: "once: run this command; session: also run the same command again in this session without asking; decline: do not run it.",
					OneOf: []*jsonschema.Schema{ // a titled single-select enum (MCP 2025-11-25)
						{Const: jsonschema.Ptr[any](choiceOnce), Title: "Approve once"},
						{Const: jsonschema.Ptr[any](choiceSession), Title: "Approve for this session"},
						{Const: jsonschema.Ptr[any](choiceDecline), Title: "Decline"},
					},
				},
			},
			Required: []string{"decision"},
		},
	}
}

// approvalOf reads the user's answer: an accepted form with "once" or "session"; anything else
// (decline, cancel, a form without a choice) declines.
func approvalOf(res *mcp.ElicitResult) tools.Approval {
	if res.Action != "accept" {
		return tools.Decline
	}
	switch res.Content["decision"] {
	case choiceOnce:
		return tools.ApproveOnce
	case choiceSession:
		return tools.ApproveSession
	}
	return tools.Decline
}

// withAsk returns ctx carrying the ask state of the MCP call req.
func withAsk(ctx context.Context, req *mcp.CallToolRequest) (context.Context, *askState) {
	st := &askState{responses: req.Params.InputResponses, state: req.Params.RequestState}
	if caps := req.ClientCapabilities(); caps != nil && caps.Elicitation != nil {
		st.canAsk = caps.Elicitation.Form != nil || caps.Elicitation.URL == nil // no mode given means form
	}
	return context.WithValue(ctx, approvalKey{}, st), st
}

// question returns the MCP result that asks the client's user about the call, once the
// approver has prepared the question in st; false when there is none.
func (st *askState) question() (*mcp.CallToolResult, bool) {
	if st.pending == nil {
		return nil, false
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: st.pending},
		RequestState:  st.pendingState,
	}, true
}
