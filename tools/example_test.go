package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/tools"
)

// ReverseArgs are the arguments of the reverse tool; the schema the model sees is derived from
// the field order, the json names and the jsonschema descriptions.
type ReverseArgs struct {
	Text  string `json:"text" jsonschema:"Text to reverse."`
	Times int    `json:"times,omitempty" jsonschema:"How many copies (default 1)."`
}

func ExampleNew() {
	reverse, err := tools.New("reverse", "Reverse a string.",
		func(ctx context.Context, call tools.Call, args ReverseArgs) (tools.Result, error) {
			r := []rune(args.Text)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return tools.Text(strings.Repeat(string(r), max(args.Times, 1))), nil
		})
	if err != nil {
		panic(err)
	}
	var reg tools.Registry
	if _, err := reg.Register(reverse); err != nil {
		panic(err)
	}
	for _, d := range reg.Declarations() {
		fmt.Printf("%s: %s\n", d.Name, d.Parameters)
	}
	ok := reg.Execute(context.Background(), tools.Call{ID: "1", Name: "reverse", Args: json.RawMessage(`{"text":"abc","times":2}`)})
	fmt.Println(ok.Text())
	bad := reg.Execute(context.Background(), tools.Call{ID: "2", Name: "reverse", Args: json.RawMessage(`{"times":"2"}`)})
	fmt.Println(bad.Text(), bad.Code)
	// Output:
	// reverse: {"type":"object","properties":{"text":{"type":"string","description":"Text to reverse."},"times":{"type":"integer","description":"How many copies (default 1)."}},"required":["text"]}
	// cbacba
	// Error: invalid arguments: missing required property "text"; "times" must be an integer INVALID_ARGS
}

func ExampleRegistry_Use() {
	var reg tools.Registry
	_, _ = reg.Register(&tools.Tool{
		Name: "rm", Description: "Remove a file.", Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, call tools.Call) (tools.Result, error) { return tools.Text("removed"), nil },
	})
	// A permission policy: refuse rm for agents outside the trusted session.
	reg.Use(func(ctx context.Context, call tools.Call, next tools.Next) tools.Result {
		if call.Name == "rm" && (call.Agent == nil || call.Agent.Owner != "trusted") {
			return tools.Deny("rm needs the user's approval")
		}
		return next(ctx, call)
	})
	res := reg.Execute(context.Background(), tools.Call{ID: "1", Name: "rm"})
	fmt.Println(res.Text(), res.Code)
	res = reg.Execute(context.Background(), tools.Call{ID: "2", Name: "rm", Agent: &tools.Agent{Owner: "trusted"}})
	fmt.Println(res.Text())
	// Output:
	// Error: rm needs the user's approval DENIED
	// removed
}

func ExampleRegistry_UseBefore() {
	var reg tools.Registry
	_, _ = reg.Register(&tools.Tool{
		Name: "run", Description: "Run a program.", Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, call tools.Call) (tools.Result, error) {
			return tools.Text("ran " + string(call.Args)), nil
		},
	})
	// A permission stage: deny "rm", ask about "push", allow the rest.
	reg.UseBefore(func(ctx context.Context, call tools.Call) tools.Decision {
		switch string(call.Args) {
		case `"rm"`:
			return tools.Decision{Verdict: tools.VerdictDeny, Reason: `rm is denied by the rule "rm"`}
		case `"push"`:
			return tools.Decision{Verdict: tools.VerdictAsk, Reason: `push matches the ask rule "push"`, Grants: []string{"push"}}
		}
		return tools.Allow()
	})
	// Redact the harness's secret from every result.
	reg.UseAfter(tools.Redact([]tools.Secret{{Name: "API_TOKEN", Value: "tok-12345678"}}))
	for _, args := range []string{`"ls tok-12345678"`, `"rm"`, `"push"`} {
		res := reg.Execute(context.Background(), tools.Call{Name: "run", Args: json.RawMessage(args)})
		fmt.Println(res.Code, res.Text())
	}
	// With a person to ask, who approves for the session:
	reg.SetApprover(tools.ApproverFunc(func(ctx context.Context, call tools.Call, d tools.Decision) (tools.Approval, error) {
		return tools.ApproveSession, nil
	}))
	res := reg.Execute(context.Background(), tools.Call{Name: "run", Args: json.RawMessage(`"push"`), Agent: &tools.Agent{Owner: "s1"}})
	fmt.Println(res.Text())
	// Output:
	//  ran "ls [redacted: API_TOKEN]"
	// DENIED Error: rm is denied by the rule "rm"
	// APPROVAL_REQUIRED Error: approval required: push matches the ask rule "push". A person must approve this call and no one can be asked in this session. Do not try to get the same effect another way; fix the call if it is wrong, otherwise ask the user to run it or to change the policy.
	// ran "push"
}
