package tools

import (
	"encoding/json"
	"errors"
	"path/filepath"
)

// Call is one request from a model to run a tool.
//
// ID is the call id the model (or the harness) gave it, echoed in the [Result]. Name is the
// tool name. Args holds the raw JSON arguments exactly as the model sent them; a typed tool
// validates and decodes them itself, so Args is never trusted. Agent is the calling agent, or
// nil when the call does not come from an agent loop (a command-line call, a test).
//
// Cancellation travels separately, as the context.Context passed next to the call to
// [Registry.Execute], [Middleware] and the tool's handler; it is never stored in the Call.
//
// A Call marshals to JSON as {"id", "name", "arguments"} with the arguments as a JSON string
// holding the raw text (the convention of model APIs), so a session log can keep calls whose
// arguments are not valid JSON; Agent is not marshalled.
type Call struct {
	ID    string
	Name  string
	Args  json.RawMessage
	Agent *Agent
}

type callJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// MarshalJSON returns the call encoded as {"id", "name", "arguments"}, arguments as a string.
func (c Call) MarshalJSON() ([]byte, error) {
	return json.Marshal(callJSON{ID: c.ID, Name: c.Name, Arguments: string(c.Args)})
}

// UnmarshalJSON decodes data, in the form [Call.MarshalJSON] produces, into the call; Agent is
// left nil. It returns an error when data is not such an object.
func (c *Call) UnmarshalJSON(data []byte) error {
	var v callJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*c = Call{ID: v.ID, Name: v.Name}
	if v.Arguments != "" {
		c.Args = json.RawMessage(v.Arguments)
	}
	return nil
}

// Agent is the agent session a call comes from, as far as tools need to know it.
//
// Owner is an opaque token identifying the session (a session id, for instance). Tools that
// keep state across calls, such as background tasks, record it and compare it by value: two
// Agent values with the same Owner are the same owner. An empty Owner means "no owner".
//
// Dir is the session's working directory, the default for commands and the base for relative
// paths; empty means the tool's own default applies.
//
// Session is an opaque id of the session that tools may show to what they run (the bash tools
// export it as DSH_SESSION_ID), unlike Owner, which is a capability and never leaves the
// harness; empty means none.
//
// Inject, when non-nil, appends notice to the session as durable context for its next model
// request (it does not wake an idle agent). It may be called from any goroutine, at any time
// after the call, including after the call has returned. It returns an error wrapping
// [ErrAgentGone] when the session no longer exists; callers treat that as "drop the notice".
type Agent struct {
	Owner   string
	Dir     string
	Session string
	Inject  Injector
}

// ResolveDir returns the directory a tool works in for the argument dir: dir itself when it is
// absolute or the agent has no directory, dir joined to the agent's Dir when it is relative, and
// Dir when dir is empty. A nil agent has no directory.
func (a *Agent) ResolveDir(dir string) string {
	base := ""
	if a != nil {
		base = a.Dir
	}
	switch {
	case dir == "":
		return base
	case filepath.IsAbs(dir) || base == "":
		return dir
	}
	return filepath.Join(base, dir)
}

// Injector appends notice to an agent session as durable context for its next model request. It
// may be called from any goroutine, at any time. It returns an error wrapping [ErrAgentGone] when
// the session no longer exists, and the notice is then dropped.
//
//catalog:event tools/notice
//catalog:mode serial
type Injector func(notice Notice) error

// Notice is a message a tool injects into an agent session outside a call's result. Source
// names the tool package that sent it (for instance "tool-bash"), so a harness can attribute
// it; Text is what the model will read.
//
// Stale, when non-nil, reports whether the notice has become redundant since it was injected:
// the model has learned its news another way (tool-bash's completion notice goes stale once a
// bash_output or bash_kill result has shown the task's final status). A harness calls it when
// it is about to deliver the notice and drops a stale one; a harness that never calls it
// delivers a notice the model may already know, which is harmless. It must be cheap and safe to
// call from any goroutine.
type Notice struct {
	Source string
	Text   string
	Stale  func() bool
}

// ErrAgentGone is returned (possibly wrapped) by [Agent].Inject when the agent session has
// ended. A notice for a gone agent is dropped silently.
var ErrAgentGone = errors.New("agent session is gone")
