package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

type runArgs struct {
	Command     string `json:"command" jsonschema:"Command."`
	Description string `json:"description" jsonschema:"What it does."`
	Workdir     string `json:"workdir,omitempty"`
}

func presentedTool(t testing.TB) *Tool {
	t.Helper()
	tool, err := New("run", "Run a command.",
		func(ctx context.Context, call Call, a runArgs) (Result, error) { return Text("ran " + a.Command), nil },
		WithCallView(func(a runArgs) (CallView, bool) {
			if a.Command == "panic" {
				panic("presenter bug")
			}
			if a.Command == "none" {
				return CallView{}, false
			}
			return CallView{Terminal: &TerminalCall{Command: a.Command, Description: a.Description, Cwd: a.Workdir}}, true
		}),
		WithResultView(func(a runArgs, res Result) (ResultView, bool) {
			if a.Command == "panic" {
				panic("presenter bug")
			}
			return ResultView{Title: a.Description, Content: []Content{ConsoleBlock(res.Text())}}, true
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestPresentersGetTypedArgs(t *testing.T) {
	tool := presentedTool(t)
	view, ok := tool.PresentCall(json.RawMessage(`{"command":"ls","description":"List files","workdir":"sub","extra":1}`))
	want := CallView{Terminal: &TerminalCall{Command: "ls", Description: "List files", Cwd: "sub"}}
	if !ok || !reflect.DeepEqual(view, want) {
		t.Errorf("call view %+v %v", view, ok)
	}
	rv, ok := tool.PresentResult(json.RawMessage(`{"command":"ls","description":"List files"}`), Text("a\nb\n\n"))
	if wantR := (ResultView{Title: "List files", Content: []Content{TextContent("```console\na\nb\n```")}}); !ok || !reflect.DeepEqual(rv, wantR) {
		t.Errorf("result view %+v %v", rv, ok)
	}
}

func TestPresentersSoftValidate(t *testing.T) {
	tool := presentedTool(t)
	for _, args := range []string{
		`{"command":"ls"}`, // no description: an old or malformed logged call
		`{"command":1,"description":"x"}`,
		`not json`,
		`null`,
		`[]`,
		`{"command":"panic","description":"x"}`,
		`{"command":"none","description":"x"}`,
	} {
		if view, ok := tool.PresentCall(json.RawMessage(args)); ok || !reflect.DeepEqual(view, CallView{}) {
			t.Errorf("PresentCall(%s) = %+v, %v; want no presentation", args, view, ok)
		}
		if args == `{"command":"none","description":"x"}` {
			continue
		}
		if view, ok := tool.PresentResult(json.RawMessage(args), Text("x")); ok || !reflect.DeepEqual(view, ResultView{}) {
			t.Errorf("PresentResult(%s) = %+v, %v; want no presentation", args, view, ok)
		}
	}
}

func TestPresentersAbsentStayAbsent(t *testing.T) {
	tool := shoutTool(t)
	if tool.PresentCall != nil || tool.PresentResult != nil {
		t.Error("a tool without presenters got presenters")
	}
}

func TestConsoleBlock(t *testing.T) {
	cases := map[string]string{
		"hi\n[exit code: 0]\n\n": "```console\nhi\n[exit code: 0]\n```",
		"":                       "```console\n\n```",
		"a ``` b":                "````console\na ``` b\n````",
		"````":                   "`````console\n````\n`````",
	}
	for in, want := range cases {
		if got := ConsoleBlock(in); got != TextContent(want) {
			t.Errorf("ConsoleBlock(%q) = %q, want %q", in, got.Text, want)
		}
	}
}

func TestKindValid(t *testing.T) {
	for _, k := range []Kind{KindRead, KindEdit, KindDelete, KindMove, KindSearch, KindExecute, KindFetch, KindOther} {
		if !k.Valid() {
			t.Errorf("%q not valid", k)
		}
	}
	for _, k := range []Kind{"", "think", "Execute"} {
		if k.Valid() {
			t.Errorf("%q valid", k)
		}
	}
}

// FuzzPresenters checks that presenters never fail: any logged arguments and result text give
// a view or "no presentation", never a panic, and a view only for arguments that validate.
func FuzzPresenters(f *testing.F) {
	for _, seed := range []string{`{"command":"ls","description":"d"}`, `{"command":"panic","description":"d"}`, `{}`, `x`, `{"command":"ls"}`, `{"command":"ls","description":"d","workdir":7}`} {
		f.Add([]byte(seed), "out\n[exit code: 1]")
	}
	tool := presentedTool(f)
	schema := mustCompile[runArgs](f)
	f.Fuzz(func(t *testing.T, args []byte, text string) {
		_, callOK := tool.PresentCall(args)
		_, resOK := tool.PresentResult(args, Text(text))
		valid := schema.Validate(args) == nil
		if (callOK || resOK) && !valid {
			t.Fatalf("presentation for invalid args %q", args)
		}
	})
}
