package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

type shoutArgs struct {
	Text      string `json:"text" jsonschema:"Text to echo."`
	Uppercase bool   `json:"uppercase,omitempty" jsonschema:"Shout it."`
}

func shoutTool(t testing.TB) *Tool {
	t.Helper()
	tool, err := New("shout", "Echo text, optionally in upper case.",
		func(ctx context.Context, call Call, a shoutArgs) (Result, error) {
			if a.Uppercase {
				return Text(strings.ToUpper(a.Text)), nil
			}
			return Text(a.Text), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func rawTool(name string, exec func(ctx context.Context, call Call) (Result, error)) *Tool {
	return &Tool{Name: name, Description: "raw " + name, Parameters: json.RawMessage(`{"type":"object"}`), Execute: exec}
}

func TestTypedToolRoundTrip(t *testing.T) {
	var r Registry
	if _, err := r.Register(shoutTool(t)); err != nil {
		t.Fatal(err)
	}
	decls := r.Declarations()
	want := []Declaration{{
		Name:        "shout",
		Description: "Echo text, optionally in upper case.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"Text to echo."},` +
			`"uppercase":{"type":"boolean","description":"Shout it."}},"required":["text"]}`),
	}}
	if !reflect.DeepEqual(decls, want) {
		t.Errorf("declarations\n got %s\nwant %s", mustJSON(t, decls), mustJSON(t, want))
	}
	res := r.Execute(context.Background(), Call{ID: "c1", Name: "shout", Args: json.RawMessage(`{"text":"hello","uppercase":true}`)})
	if res.CallID != "c1" || res.IsError || res.Text() != "HELLO" || res.Code != "" {
		t.Errorf("result %+v", res)
	}
}

func TestDeclarationsAreCopiesInOrder(t *testing.T) {
	var r Registry
	for _, name := range []string{"b", "a", "c"} {
		if _, err := r.Register(rawTool(name, okExec)); err != nil {
			t.Fatal(err)
		}
	}
	d := r.Declarations()
	if got := []string{d[0].Name, d[1].Name, d[2].Name}; !reflect.DeepEqual(got, []string{"b", "a", "c"}) {
		t.Errorf("order %v", got)
	}
	d[0].Parameters[0] = 'X'
	if string(r.Declarations()[0].Parameters) != `{"type":"object"}` {
		t.Error("modifying a declaration changed the registry")
	}
}

func okExec(ctx context.Context, call Call) (Result, error) { return Text("ok"), nil }

func TestRegisterRefuses(t *testing.T) {
	var r Registry
	if _, err := r.Register(rawTool("dup", okExec)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		tool *Tool
		want string
	}{
		{"nil", nil, "nil tool"},
		{"duplicate", rawTool("dup", okExec), `tool "dup" is already registered`},
		{"bad name", rawTool("has space", okExec), "invalid name"},
		{"empty name", rawTool("", okExec), "invalid name"},
		{"long name", rawTool(strings.Repeat("x", 65), okExec), "invalid name"},
		{"nil execute", rawTool("noexec", nil), "nil Execute"},
		{"not an object schema", &Tool{Name: "s", Parameters: json.RawMessage(`{"type":"string"}`), Execute: okExec}, `"type": "object"`},
		{"invalid schema JSON", &Tool{Name: "s", Parameters: json.RawMessage(`{`), Execute: okExec}, `"type": "object"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Register(tc.tool)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if n := len(r.Declarations()); n != 1 {
		t.Errorf("%d tools registered after refusals, want 1", n)
	}
}

func TestUnregister(t *testing.T) {
	var r Registry
	unregister, err := r.Register(rawTool("x", okExec))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup("x"); !ok {
		t.Fatal("Lookup after Register: not found")
	}
	unregister()
	unregister() // harmless
	if _, ok := r.Lookup("x"); ok {
		t.Error("Lookup after unregister: found")
	}
	if _, err := r.Register(rawTool("x", okExec)); err != nil {
		t.Errorf("register again after unregister: %v", err)
	}
}

func TestRegisterCopiesTheTool(t *testing.T) {
	var r Registry
	tool := rawTool("x", okExec)
	if _, err := r.Register(tool); err != nil {
		t.Fatal(err)
	}
	tool.Description = "changed"
	tool.Parameters[2] = 'X'
	got, _ := r.Lookup("x")
	if got.Description != "raw x" || string(got.Parameters) != `{"type":"object"}` {
		t.Errorf("registry saw a later change: %q %s", got.Description, got.Parameters)
	}
}

// codedErr is a tool's own coded error type.
type codedErr struct{}

func (codedErr) Error() string     { return "disk full" }
func (codedErr) ErrorCode() string { return "ENOSPC" }

func TestExecuteFailures(t *testing.T) {
	var r Registry
	mustRegister(t, &r, shoutTool(t))
	mustRegister(t, &r, rawTool("exploding", func(context.Context, Call) (Result, error) { return Result{}, errors.New("exploded") }))
	mustRegister(t, &r, rawTool("coded", func(context.Context, Call) (Result, error) {
		return Result{}, fmt.Errorf("write log: %w", codedErr{})
	}))
	mustRegister(t, &r, rawTool("harness", func(context.Context, Call) (Result, error) {
		return Result{}, Errorf("QUOTA", "quota of %d calls used", 3)
	}))
	mustRegister(t, &r, rawTool("panicking", func(context.Context, Call) (Result, error) { panic("boom") }))
	mustRegister(t, &r, rawTool("panicking-error", func(context.Context, Call) (Result, error) { panic(errors.New("bad state")) }))
	mustRegister(t, &r, rawTool("soft", func(context.Context, Call) (Result, error) {
		return Result{Content: []Content{TextContent("not found")}, IsError: true}, nil
	}))
	mustRegister(t, &r, rawTool("empty", func(context.Context, Call) (Result, error) { return Result{}, nil }))

	cases := []struct {
		name, tool, args string
		text, code       string
		isError          bool
	}{
		{"unknown tool", "nope", `{}`, `Error: unknown tool "nope"`, CodeUnknownTool, true},
		{"tool error", "exploding", `{}`, "Error: exploded", "", true},
		{"wrapped coded error", "coded", `{}`, "Error: write log: disk full", "ENOSPC", true},
		{"harness error", "harness", `{}`, "Error: quota of 3 calls used", "QUOTA", true},
		{"panic", "panicking", `{}`, `Error: tool "panicking" panicked: boom`, CodePanic, true},
		{"panic with error", "panicking-error", `{}`, `Error: tool "panicking-error" panicked: bad state`, CodePanic, true},
		{"invalid args", "shout", `{"uppercase":"yes"}`, `Error: invalid arguments: missing required property "text"; "uppercase" must be a boolean`, CodeInvalidArgs, true},
		{"malformed args", "shout", `{"text":`, `Error: invalid arguments: "arguments" must be valid JSON: unexpected end of JSON input`, CodeInvalidArgs, true},
		{"args not an object", "shout", `["hello"]`, `Error: invalid arguments: "arguments" must be an object`, CodeInvalidArgs, true},
		{"soft error result passes through", "soft", `{}`, "not found", "", true},
		{"raw tools are not validated", "exploding", `[1,2`, "Error: exploded", "", true},
		{"empty content", "empty", `{}`, "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Execute(context.Background(), Call{ID: "id-" + tc.name, Name: tc.tool, Args: json.RawMessage(tc.args)})
			if res.Text() != tc.text || res.Code != tc.code || res.IsError != tc.isError || res.CallID != "id-"+tc.name {
				t.Errorf("got %+v\nwant text %q code %q isError %v", res, tc.text, tc.code, tc.isError)
			}
			if res.Content == nil {
				t.Error("nil content")
			}
		})
	}
}

func TestExecuteErrorTypes(t *testing.T) {
	var r Registry
	mustRegister(t, &r, shoutTool(t))
	mustRegister(t, &r, rawTool("panicking", func(context.Context, Call) (Result, error) { panic("boom") }))

	res := r.Execute(context.Background(), Call{Name: "ghost"})
	var nf *NotFoundError
	if !errors.As(res.Err, &nf) || nf.Name != "ghost" || nf.Error() != `unknown tool "ghost"` {
		t.Errorf("unknown tool error %#v", res.Err)
	}
	res = r.Execute(context.Background(), Call{Name: "shout", Args: json.RawMessage(`{}`)})
	var ae *ArgsError
	if !errors.As(res.Err, &ae) || !reflect.DeepEqual(ae.Violations, []string{`missing required property "text"`}) {
		t.Errorf("args error %#v", res.Err)
	}
	res = r.Execute(context.Background(), Call{Name: "panicking"})
	var pe *PanicError
	if !errors.As(res.Err, &pe) || pe.Value != "boom" || !strings.Contains(string(pe.Stack), "registry_test.go") {
		t.Errorf("panic error %#v", res.Err)
	}
	if ErrorResult(nil).Text() != "Error: unknown error" {
		t.Errorf("ErrorResult(nil) = %q", ErrorResult(nil).Text())
	}
}

func TestExecuteCancellation(t *testing.T) {
	var r Registry
	started := make(chan struct{})
	ran := false
	mustRegister(t, &r, rawTool("wait", func(ctx context.Context, call Call) (Result, error) {
		ran = true
		close(started)
		<-ctx.Done()
		return Result{}, ctx.Err()
	}))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.Execute(ctx, Call{Name: "wait"})
	if ran || res.Text() != "Error: tool call aborted before dispatch" || res.Code != CodeAbortedBeforeDispatch {
		t.Errorf("pre-cancelled: ran=%v result %+v", ran, res)
	}

	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan Result)
	go func() { done <- r.Execute(ctx, Call{Name: "wait"}) }()
	<-started
	cancel()
	res = <-done
	if res.Text() != "Error: context canceled" || res.Code != CodeAborted || !errors.Is(res.Err, context.Canceled) {
		t.Errorf("cancelled while running: %+v", res)
	}
}

func TestMiddlewareOnion(t *testing.T) {
	var r Registry
	var log []string
	mustRegister(t, &r, rawTool("x", func(ctx context.Context, call Call) (Result, error) {
		log = append(log, "tool")
		return Text("ok"), nil
	}))
	for _, name := range []string{"first", "second"} {
		r.Use(func(ctx context.Context, call Call, next Next) Result {
			log = append(log, name+":before")
			res := next(ctx, call)
			log = append(log, name+":after")
			return res
		})
	}
	res := r.Execute(context.Background(), Call{ID: "1", Name: "x"})
	want := []string{"first:before", "second:before", "tool", "second:after", "first:after"}
	if !reflect.DeepEqual(log, want) || res.Text() != "ok" {
		t.Errorf("log %v, result %+v", log, res)
	}
}

func TestMiddlewareVetoAndRemoval(t *testing.T) {
	var r Registry
	ran := 0
	mustRegister(t, &r, rawTool("rm", func(ctx context.Context, call Call) (Result, error) {
		ran++
		return Text("removed"), nil
	}))
	remove := r.Use(func(ctx context.Context, call Call, next Next) Result {
		if call.Name == "rm" {
			return Deny("rm is not allowed in this session")
		}
		return next(ctx, call)
	})
	res := r.Execute(context.Background(), Call{ID: "v", Name: "rm"})
	if ran != 0 || res.Text() != "Error: rm is not allowed in this session" || res.Code != CodeDenied || !res.IsError || res.CallID != "v" {
		t.Errorf("veto: ran=%d result %+v", ran, res)
	}
	remove()
	res = r.Execute(context.Background(), Call{Name: "rm"})
	if ran != 1 || res.Text() != "removed" {
		t.Errorf("after removal: ran=%d result %+v", ran, res)
	}
}

func TestMiddlewareAnswersForUnknownTool(t *testing.T) {
	// A middleware sees every call, even one for a name nobody registered.
	var r Registry
	r.Use(func(ctx context.Context, call Call, next Next) Result {
		if call.Name == "virtual" {
			return Text("answered by middleware")
		}
		return next(ctx, call)
	})
	if res := r.Execute(context.Background(), Call{Name: "virtual"}); res.Text() != "answered by middleware" {
		t.Errorf("got %+v", res)
	}
}

func TestMiddlewarePanicContained(t *testing.T) {
	var r Registry
	mustRegister(t, &r, rawTool("x", okExec))
	r.Use(func(ctx context.Context, call Call, next Next) Result { panic("policy bug") })
	res := r.Execute(context.Background(), Call{ID: "p", Name: "x"})
	if res.Text() != `Error: tool "x" panicked: policy bug` || res.Code != CodePanic || res.CallID != "p" {
		t.Errorf("got %+v", res)
	}
}

func TestRegistryConcurrentUse(t *testing.T) {
	var r Registry
	mustRegister(t, &r, shoutTool(t))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				name := fmt.Sprintf("t%d_%d", i, j)
				unregister, err := r.Register(rawTool(name, okExec))
				if err != nil {
					t.Error(err)
					return
				}
				remove := r.Use(func(ctx context.Context, call Call, next Next) Result { return next(ctx, call) })
				if res := r.Execute(context.Background(), Call{Name: "shout", Args: json.RawMessage(`{"text":"a"}`)}); res.Text() != "a" {
					t.Errorf("got %+v", res)
				}
				_ = r.Declarations()
				remove()
				unregister()
			}
		})
	}
	wg.Wait()
	if n := len(r.Declarations()); n != 1 {
		t.Errorf("%d tools left, want 1", n)
	}
}

func TestNewRefuses(t *testing.T) {
	h := func(context.Context, Call, shoutArgs) (Result, error) { return Result{}, nil }
	if _, err := New("bad name", "d", h); err == nil || !strings.Contains(err.Error(), "invalid name") {
		t.Errorf("bad name: %v", err)
	}
	if _, err := New("x", "", h); err == nil || !strings.Contains(err.Error(), "empty description") {
		t.Errorf("empty description: %v", err)
	}
	if _, err := New[shoutArgs]("x", "d", nil); err == nil || !strings.Contains(err.Error(), "nil handler") {
		t.Errorf("nil handler: %v", err)
	}
	if _, err := New("x", "d", func(context.Context, Call, string) (Result, error) { return Result{}, nil }); err == nil ||
		!strings.Contains(err.Error(), `tool "x": unsupported JSON schema: the root must have type "object"`) {
		t.Errorf("string arguments: %v", err)
	}
	if _, err := New("x", "d", func(context.Context, Call, struct{ C chan int }) (Result, error) { return Result{}, nil }); err == nil {
		t.Error("channel field: want an error")
	}
}

func TestWithSchemaAddsEnum(t *testing.T) {
	type paint struct {
		Color string `json:"color" jsonschema:"Paint color."`
	}
	s, err := InferSchema[paint]()
	if err != nil {
		t.Fatal(err)
	}
	s.Properties["color"].Enum = []any{"red", "green"}
	var got string
	tool, err := New("paint", "Paint.", func(ctx context.Context, call Call, a paint) (Result, error) {
		got = a.Color
		return Text("painted " + a.Color), nil
	}, WithSchema[paint](s))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"object","properties":{"color":{"type":"string","description":"Paint color.","enum":["red","green"]}},"required":["color"]}`; string(tool.Parameters) != want {
		t.Errorf("parameters %s", tool.Parameters)
	}
	var r Registry
	mustRegister(t, &r, tool)
	if res := r.Execute(context.Background(), Call{Name: "paint", Args: json.RawMessage(`{"color":"blue"}`)}); res.Text() != `Error: invalid arguments: "color" must be one of ["red","green"]` || got != "" {
		t.Errorf("blue: %+v (body saw %q)", res, got)
	}
}

func TestExtraKeysNeverReachTheBody(t *testing.T) {
	type runArgs struct {
		Command string `json:"command"`
	}
	var seen runArgs
	tool, err := New("run", "Run.", func(ctx context.Context, call Call, a runArgs) (Result, error) {
		seen = a
		return Text("ok"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var r Registry
	mustRegister(t, &r, tool)
	// "Command" would match the field case-insensitively in encoding/json; the validator
	// drops every undeclared key first.
	res := r.Execute(context.Background(), Call{Name: "run", Args: json.RawMessage(`{"command":"ls","Command":"rm -rf /","env":{"X":"1"}}`)})
	if res.IsError || seen.Command != "ls" {
		t.Errorf("result %+v, body saw %+v", res, seen)
	}
}

func TestCallCarriesAgent(t *testing.T) {
	var got *Agent
	var notices []Notice
	mustTool := func() *Tool {
		tool, err := New("who", "Who calls.", func(ctx context.Context, call Call, a struct{}) (Result, error) {
			got = call.Agent
			if call.Agent != nil {
				if err := call.Agent.Inject(Notice{Source: "test", Text: "hello " + call.Agent.Owner}); err != nil {
					return Result{}, err
				}
			}
			return Text(call.ID), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	var r Registry
	mustRegister(t, &r, mustTool())
	agent := &Agent{Owner: "session-1", Dir: "/work", Inject: func(n Notice) error { notices = append(notices, n); return nil }}
	res := r.Execute(context.Background(), Call{ID: "c9", Name: "who", Agent: agent})
	if res.Text() != "c9" || got != agent || !reflect.DeepEqual(notices, []Notice{{Source: "test", Text: "hello session-1"}}) {
		t.Errorf("result %+v agent %+v notices %v", res, got, notices)
	}
	gone := &Agent{Owner: "old", Inject: func(Notice) error { return fmt.Errorf("session old: %w", ErrAgentGone) }}
	res = r.Execute(context.Background(), Call{Name: "who", Agent: gone})
	if !errors.Is(res.Err, ErrAgentGone) {
		t.Errorf("gone agent: %+v", res)
	}
}

func TestResultJSON(t *testing.T) {
	res := ErrorResult(&ArgsError{Violations: []string{"x"}})
	res.CallID = "c"
	b := mustJSON(t, res)
	if want := `{"callId":"c","content":[{"type":"text","text":"Error: invalid arguments: x"}],"isError":true,"code":"INVALID_ARGS"}`; b != want {
		t.Errorf("got %s", b)
	}
	var back Result
	if err := json.Unmarshal([]byte(b), &back); err != nil {
		t.Fatal(err)
	}
	if back.Text() != res.Text() || back.Code != res.Code || !back.IsError {
		t.Errorf("round trip %+v", back)
	}
}

func mustRegister(t testing.TB, r *Registry, tool *Tool) {
	t.Helper()
	if _, err := r.Register(tool); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCallJSON(t *testing.T) {
	for _, args := range []string{`{"a":[1,2]}`, `not json`, ``} {
		c := Call{ID: "1", Name: "x", Args: json.RawMessage(args), Agent: &Agent{Owner: "o"}}
		b := mustJSON(t, c)
		var back Call
		if err := json.Unmarshal([]byte(b), &back); err != nil {
			t.Fatal(err)
		}
		if back.ID != "1" || back.Name != "x" || string(back.Args) != args || back.Agent != nil {
			t.Errorf("%s round-tripped to %+v", b, back)
		}
	}
	if got := mustJSON(t, Call{ID: "1", Name: "x", Args: json.RawMessage(`{"a":1}`)}); got != `{"id":"1","name":"x","arguments":"{\"a\":1}"}` {
		t.Errorf("got %s", got)
	}
}

// TestChangeListeners checks what a change listener is told: every registration and every
// effective removal, in order, with the tool already in (or out of) the list it reads; nothing
// for a refused registration, a second removal or after the listener was removed.
func TestChangeListeners(t *testing.T) {
	var r Registry
	var got []string
	removeListener := r.OnChange(func(c Change) {
		_, present := r.Lookup(c.Tool)
		got = append(got, fmt.Sprintf("%s removed=%v present=%v decls=%d", c.Tool, c.Removed, present, len(r.Declarations())))
	})
	unA, err := r.Register(rawTool("a", okExec))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(rawTool("a", okExec)); err == nil {
		t.Fatal("a duplicate registration succeeded")
	}
	unB, err := r.Register(rawTool("b", okExec))
	if err != nil {
		t.Fatal(err)
	}
	unA()
	unA()
	removeListener()
	unB()
	want := []string{
		"a removed=false present=true decls=1",
		"b removed=false present=true decls=2",
		"a removed=true present=false decls=1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes seen:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestChangeListenerPanicRollsBack checks that a listener panicking on a registration makes
// Register fail and take the tool out again (the name is free for a retry), that the other
// listeners are still called and told of both, and that the panic does not escape.
func TestChangeListenerPanicRollsBack(t *testing.T) {
	var r Registry
	var seen []Change
	r.OnChange(func(c Change) { seen = append(seen, c) })
	removeBad := r.OnChange(func(c Change) {
		if !c.Removed {
			panic("listener exploded")
		}
	})
	_, err := r.Register(rawTool("a", okExec))
	if err == nil || !strings.Contains(err.Error(), `tools: register tool "a": a change listener panicked: listener exploded`) {
		t.Fatalf("Register with a panicking listener: %v", err)
	}
	if _, ok := r.Lookup("a"); ok {
		t.Fatal("the tool stayed registered after its listener panicked")
	}
	if want := []Change{{Tool: "a"}, {Tool: "a", Removed: true}}; !slices.Equal(seen, want) {
		t.Errorf("the other listener saw %v, want %v", seen, want)
	}
	removeBad()
	if _, err := r.Register(rawTool("a", okExec)); err != nil {
		t.Fatalf("the name is not free again: %v", err)
	}
}
