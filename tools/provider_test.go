package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestTitleAndAnnotations checks that New carries the title and the hints its options set, that
// a tool without them states none, and that the registry keeps its own copy of the hints.
func TestTitleAndAnnotations(t *testing.T) {
	h := func(context.Context, Call, shoutArgs) (Result, error) { return Text("ok"), nil }
	hints := Annotations{ReadOnlyHint: true, IdempotentHint: true}
	tool, err := New("shout", "Echo text.", h, WithTitle[shoutArgs]("Echo text"), WithAnnotations[shoutArgs](hints))
	if err != nil {
		t.Fatal(err)
	}
	if tool.Title != "Echo text" || tool.Annotations == nil || *tool.Annotations != hints {
		t.Errorf("title %q, annotations %+v; want %q, %+v", tool.Title, tool.Annotations, "Echo text", hints)
	}
	hints.DestructiveHint = true // the option took a copy
	if tool.Annotations.DestructiveHint {
		t.Error("changing the option's argument changed the tool")
	}
	plain := shoutTool(t)
	if plain.Title != "" || plain.Annotations != nil {
		t.Errorf("a tool without options has title %q, annotations %+v", plain.Title, plain.Annotations)
	}

	var r Registry
	mustRegister(t, &r, tool)
	tool.Title = "changed"
	tool.Annotations.OpenWorldHint = true
	got, _ := r.Lookup("shout")
	if got.Title != "Echo text" || got.Annotations.OpenWorldHint {
		t.Errorf("registry saw a later change: %q %+v", got.Title, got.Annotations)
	}
	// The model never reads the title or the hints.
	d := r.Declarations()[0]
	if b, _ := json.Marshal(d); strings.Contains(string(b), "Echo text\"") || strings.Contains(string(b), "Hint") {
		t.Errorf("declaration carries the title or hints: %s", b)
	}
}

// TestErrorsNamePackage checks that every error the package's functions return starts with
// "tools: ", once.
func TestErrorsNamePackage(t *testing.T) {
	h := func(context.Context, Call, shoutArgs) (Result, error) { return Result{}, nil }
	var r Registry
	mustRegister(t, &r, rawTool("dup", okExec))
	errOf := func(_ any, err error) error { return err }
	cases := []struct {
		name string
		err  error
	}{
		{"New bad name", errOf(New("bad name", "d", h))},
		{"New empty description", errOf(New("x", "", h))},
		{"New nil handler", errOf(New[shoutArgs]("x", "d", nil))},
		{"New bad schema", errOf(New("x", "d", func(context.Context, Call, string) (Result, error) { return Result{}, nil }))},
		{"New uninferable", errOf(New("x", "d", func(context.Context, Call, struct{ C chan int }) (Result, error) { return Result{}, nil }))},
		{"InferSchema", errOf(InferSchema[struct{ C chan int }]())},
		{"CompileSchema", errOf(CompileSchema(nil))},
		{"Register nil", errOf(r.Register(nil))},
		{"Register duplicate", errOf(r.Register(rawTool("dup", okExec)))},
		{"Register bad schema", errOf(r.Register(&Tool{Name: "s", Parameters: json.RawMessage(`{`), Execute: okExec}))},
	}
	for _, tc := range cases {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if msg := tc.err.Error(); !strings.HasPrefix(msg, "tools: ") || strings.Count(msg, "tools: ") != 1 {
			t.Errorf("%s: %q, want one \"tools: \" prefix", tc.name, msg)
		}
	}
}

func TestAgentResolveDir(t *testing.T) {
	tests := []struct {
		agent *Agent
		dir   string
		want  string
	}{
		{&Agent{Dir: "/w"}, "", "/w"},
		{&Agent{Dir: "/w"}, "sub/x", "/w/sub/x"},
		{&Agent{Dir: "/w"}, "../up", "/up"},
		{&Agent{Dir: "/w"}, "/abs", "/abs"},
		{&Agent{}, "rel", "rel"},
		{&Agent{}, "", ""},
		{nil, "rel", "rel"},
	}
	for _, tt := range tests {
		if got := tt.agent.ResolveDir(tt.dir); got != tt.want {
			t.Errorf("%+v.ResolveDir(%q) = %q, want %q", tt.agent, tt.dir, got, tt.want)
		}
	}
}
