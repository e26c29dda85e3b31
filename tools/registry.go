package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
)

// Registry holds the tools an agent can call, in registration order, and executes calls
// through a middleware chain and the permission stages.
//
// A call goes through the middlewares (the general seam, first added outermost), then the
// [Before] stages and, when they let it, the tool; the result then goes back out through the
// middlewares and finally through the [After] stages. The stages are typed and come last on
// both sides: a middleware can refuse a call or rework a result, but it cannot run a tool past
// a Before stage or return a result that skipped an After stage.
//
// The zero Registry is empty and ready to use. All methods are safe for concurrent use; a
// call that is executing is not affected by tools, middleware or stages registered or removed
// while it runs (it keeps the tool and chains it started with).
//
//catalog:service tools/registry
type Registry struct {
	mu          sync.RWMutex
	tools       []*Tool // registration order
	middlewares []*entry[Middleware]
	before      []*entry[Before]
	after       []*entry[After]
	listeners   []*entry[ChangeListener]
	approver    Approver

	grantsMu sync.Mutex
	grants   map[string]map[string]bool // owner → grants approved for the session
}

// Next runs the rest of the execute chain for call with the context ctx and returns its
// result: the next middleware, or the tool itself after the last one. It is an alias, so a
// middleware may spell its last parameter either as Next or as the func type.
type Next = func(ctx context.Context, call Call) Result

// Middleware wraps the execution of every call made through a [Registry]. It receives the
// call's context ctx, the call and next, the rest of the chain. It may inspect the call and
// pass it on by returning next(ctx, call) (before and after work included), or answer instead
// of the tool by returning its own result without calling next (a veto, for instance [Deny]).
// A permission policy belongs in a [Before] stage instead, which runs after every middleware
// and cannot be bypassed by one. A middleware must not change call.Args (a tool validates the
// arguments it receives, not the ones the model sent). Panics inside a middleware are contained
// like panics inside a tool. A middleware returns the result that the [After] stages, then the
// caller of [Registry.Execute], receive.
//
//catalog:event tools/execute
//catalog:mode waterfall
type Middleware func(ctx context.Context, call Call, next func(ctx context.Context, call Call) Result) Result

// Deny returns the result a [Middleware] returns to refuse a call: a failed result with the
// text "Error: " + reason and code [CodeDenied].
func Deny(reason string) Result { return ErrorResult(&Error{Code: CodeDenied, Message: reason}) }

// Declaration is what the model is told about one tool: its Name, its Description and the
// JSON Schema of its arguments, Parameters. It never carries callbacks.
type Declaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Register adds tool t to r, after the tools already registered, and returns a function that
// removes it again (calling it more than once is harmless). r keeps its own copy of t's fields;
// later changes to t do not affect r. Both tell r's change listeners (see [Registry.OnChange])
// before they return.
//
// Register returns an error, and registers nothing, when t.Name is not a [ValidName], a tool
// with the same name is already registered (`tools: tool "<name>" is already registered`),
// t.Execute is nil, or t.Parameters is not a JSON object whose "type" is "object". When a change
// listener panics on the new tool, Register takes the tool out again (the listeners are told of
// the removal), so the name stays free, and returns an error holding the panic value.
func (r *Registry) Register(t *Tool) (unregister func(), err error) {
	if t == nil {
		return nil, errors.New("tools: register tool: nil tool")
	}
	if !ValidName(t.Name) {
		return nil, fmt.Errorf("tools: register tool %q: invalid name: want 1 to 64 characters from A-Z a-z 0-9 _ -", t.Name)
	}
	if t.Execute == nil {
		return nil, fmt.Errorf("tools: register tool %q: nil Execute", t.Name)
	}
	var params struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(t.Parameters, &params); err != nil || params.Type != "object" {
		return nil, fmt.Errorf("tools: register tool %q: parameters must be a JSON Schema object with \"type\": \"object\"", t.Name)
	}
	own := *t
	own.Parameters = bytes.Clone(t.Parameters)
	own.OutputSchema = bytes.Clone(t.OutputSchema)
	if t.Annotations != nil {
		a := *t.Annotations
		own.Annotations = &a
	}

	r.mu.Lock()
	if slices.ContainsFunc(r.tools, func(x *Tool) bool { return x.Name == t.Name }) {
		r.mu.Unlock()
		return nil, fmt.Errorf("tools: tool %q is already registered", t.Name)
	}
	own.output = newOutputCheck(own.OutputSchema)
	r.tools = append(r.tools, &own)
	r.mu.Unlock()
	unregister = func() {
		r.mu.Lock()
		n := len(r.tools)
		r.tools = slices.DeleteFunc(r.tools, func(x *Tool) bool { return x == &own })
		removed := len(r.tools) < n
		r.mu.Unlock()
		if removed {
			_ = r.notify(Change{Tool: own.Name, Removed: true})
		}
	}
	if p := r.notify(Change{Tool: own.Name}); p != nil {
		unregister()
		return nil, fmt.Errorf("tools: register tool %q: a change listener panicked: %v", t.Name, p)
	}
	return unregister, nil
}

// Change is what a [Registry] tells its change listeners: the tool named Tool was registered,
// or, with Removed, taken out.
type Change struct {
	Tool    string
	Removed bool
}

// ChangeListener receives change, each change to the tools of a [Registry] it was added to
// with [Registry.OnChange], after the change took effect and before Register or the remove
// function returns. A listener may read the registry (Lookup, Declarations) but must not
// register or remove tools itself. Listeners are called in the order they were added, outside
// the registry's lock; changes made concurrently may reach a listener in either order, so a
// listener that mirrors the list reads it rather than replaying changes. A panic in a listener
// is contained: the other listeners are still called, and Register then fails (see
// [Registry.Register]).
//
//catalog:event tools/change
//catalog:mode emit
type ChangeListener func(change Change)

// OnChange adds listener l to the ones r tells of every tool registered or removed from then on,
// and returns a function that removes it again.
func (r *Registry) OnChange(l ChangeListener) (remove func()) { return add(r, &r.listeners, l) }

// notify calls every change listener with c and returns the value of the first panic, or nil.
func (r *Registry) notify(c Change) (panicked any) {
	r.mu.RLock()
	ls := funcs(r.listeners)
	r.mu.RUnlock()
	for _, l := range ls {
		if p := callListener(l, c); p != nil && panicked == nil {
			panicked = p
		}
	}
	return panicked
}

// callListener calls l with c and returns what it panicked with, or nil.
func callListener(l ChangeListener, c Change) (panicked any) {
	defer func() { panicked = recover() }()
	l(c)
	return nil
}

// Lookup returns the tool registered under name and true, or nil and false. The returned Tool
// is shared: the caller must not modify it.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range r.tools {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Declarations returns what the model is told about every registered tool, in registration
// order. The slice and the Parameters bytes are copies the caller may keep.
func (r *Registry) Declarations() []Declaration {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Declaration, len(r.tools))
	for i, t := range r.tools {
		out[i] = Declaration{Name: t.Name, Description: t.Description, Parameters: bytes.Clone(t.Parameters)}
	}
	return out
}

// Use adds middleware m to the execute chain, inside the middlewares added before it (the
// first one added is the outermost), and returns a function that removes it again.
func (r *Registry) Use(m Middleware) (remove func()) { return add(r, &r.middlewares, m) }

// UseBefore adds the permission stage s after the Before stages added before it and returns a
// function that removes it again. See [Before] for where it runs.
func (r *Registry) UseBefore(s Before) (remove func()) { return add(r, &r.before, s) }

// UseAfter adds the result stage s after the After stages added before it and returns a
// function that removes it again. See [After] for where it runs.
func (r *Registry) UseAfter(s After) (remove func()) { return add(r, &r.after, s) }

// entry holds one middleware or stage; its address identifies it for removal, since functions
// cannot be compared.
type entry[F any] struct{ f F }

// add appends f to *list under r's lock and returns the function that removes it again (calling
// it more than once is harmless).
func add[F any](r *Registry, list *[]*entry[F], f F) (remove func()) {
	e := &entry[F]{f: f}
	r.mu.Lock()
	*list = append(*list, e)
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		*list = slices.DeleteFunc(*list, func(x *entry[F]) bool { return x == e })
	}
}

// funcs returns the functions held by list, in order.
func funcs[F any](list []*entry[F]) []F {
	out := make([]F, len(list))
	for i, e := range list {
		out[i] = e.f
	}
	return out
}

// SetApprover makes a the one that answers the asks of the Before stages; nil (the default)
// means no person can be asked, so an ask fails with code [CodeApprovalRequired] and a text
// telling the model that a person must approve the call.
func (r *Registry) SetApprover(a Approver) {
	r.mu.Lock()
	r.approver = a
	r.mu.Unlock()
}

// Forget drops the approvals "for this session" given to owner, for instance when its session
// ends; later asks of owner are asked again.
func (r *Registry) Forget(owner string) {
	r.grantsMu.Lock()
	delete(r.grants, owner)
	r.grantsMu.Unlock()
}

// chains is what one call runs through, taken when it starts.
type chains struct {
	middlewares []Middleware
	before      []Before
	after       []After
	approver    Approver
}

func (r *Registry) chains() chains {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return chains{middlewares: funcs(r.middlewares), before: funcs(r.before), after: funcs(r.after), approver: r.approver}
}

// Execute runs call through the middleware chain, the [Before] stages and the tool named
// call.Name, with ctx as the call's context, then passes the result through the [After]
// stages, and returns it with CallID set to call.ID. It never returns an error and never
// panics: every failure is a result with IsError set and the text "Error: <message>":
//
//   - no tool with that name: `Error: unknown tool "<name>"`, code [CodeUnknownTool];
//   - ctx already done before the tool ran: "Error: tool call aborted before dispatch", code
//     [CodeAbortedBeforeDispatch];
//   - a stage denied the call: its reason, code [CodeDenied];
//   - a stage asked and no person could answer: "Error: approval required: <reason>. A person
//     must approve this call …", code [CodeApprovalRequired]; a person declined: "Error: a
//     person declined this call (<reason>). …", code [CodeDeclined];
//   - invalid arguments (typed tools): "Error: invalid arguments: …", code [CodeInvalidArgs];
//   - an error from the tool: its message, with the code of a [Coded] error in its chain, or
//     [CodeAborted] when the error is ctx's own error after ctx ended;
//   - a panic in the tool, a middleware or a stage: `Error: tool "<name>" panicked: <value>`,
//     code [CodePanic];
//   - an After stage blocked the result: "Error: result blocked: <reason>", code [CodeBlocked];
//   - while results are checked (in tests, and with DSH_DEBUG_SCHEMA=1, see [DebugSchemaEnv]),
//     a result that [Tool.CheckResult] refuses: `Error: tool "<name>" returned a result outside
//     its output schema: …; the result was:` followed by the result's own content, code [CodeResultSchema].
func (r *Registry) Execute(ctx context.Context, call Call) Result {
	c := r.chains()
	var next Next = func(ctx context.Context, call Call) Result { return r.dispatch(ctx, call, c) }
	for i := len(c.middlewares) - 1; i >= 0; i-- {
		m, inner := c.middlewares[i], next
		next = func(ctx context.Context, call Call) Result { return m(ctx, call, inner) }
	}
	res := contain(call, func() Result { return next(ctx, call) })
	for _, s := range c.after {
		res = r.runAfter(ctx, call, s, res)
	}
	if checkResults() {
		if t, ok := r.Lookup(call.Name); ok {
			res = t.output.check(call.Name, res)
		}
	}
	res.CallID = call.ID
	return res
}

// contain returns what run returns, or the result standing for its panic.
func contain(call Call, run func() Result) (result Result) {
	defer func() {
		if v := recover(); v != nil {
			result = ErrorResult(&PanicError{Tool: call.Name, Value: v, Stack: debug.Stack()})
		}
	}()
	return run()
}

// dispatch is the innermost link of the chain: it resolves the tool, passes the call through
// the Before stages and runs it.
func (r *Registry) dispatch(ctx context.Context, call Call, c chains) (result Result) {
	t, ok := r.Lookup(call.Name)
	if !ok {
		return ErrorResult(&NotFoundError{Name: call.Name})
	}
	if err := ctx.Err(); err != nil {
		return ErrorResult(&Error{Code: CodeAbortedBeforeDispatch, Message: "tool call aborted before dispatch", Err: err})
	}
	defer func() {
		if v := recover(); v != nil {
			result = ErrorResult(&PanicError{Tool: call.Name, Value: v, Stack: debug.Stack()})
		}
	}()
	approved, refusal, ok := r.permit(ctx, call, c)
	if !ok {
		return refusal
	}
	if approved != nil {
		ctx = context.WithValue(ctx, approvedKey{}, approved)
	}
	res, err := t.Execute(ctx, call)
	if err != nil {
		res = ErrorResult(err)
		if res.Code == "" && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			res.Code = CodeAborted
		}
		return res
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	return res
}
