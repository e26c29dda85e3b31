package toolbash

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

var update = flag.Bool("update", false, "rewrite the golden schema files in testdata")

// TestSchemasGolden pins what the model is told about each tool. A change to a name, a
// description or a parameter shows up as a diff of testdata/*.json in review; regenerate with
// go test -run TestSchemasGolden -update.
func TestSchemasGolden(t *testing.T) {
	set, err := New(newStub(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(context.Background())
	var r tools.Registry
	if _, err := set.Register(&r); err != nil {
		t.Fatal(err)
	}
	decls := r.Declarations()
	var names []string
	for _, d := range decls {
		names = append(names, d.Name)
	}
	if !reflect.DeepEqual(names, []string{"bash", "bash_output", "bash_kill", "bash_tasks"}) {
		t.Fatalf("registration order %v", names)
	}
	for _, d := range decls {
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, '\n')
		path := filepath.Join("testdata", d.Name+".json")
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if string(b) != string(want) {
			t.Errorf("%s changed:\n got %s\nwant %s", d.Name, b, want)
		}
	}
	// The exact compact bytes of bash's parameters, as an MCP server publishes them.
	var params map[string]any
	if err := json.Unmarshal(decls[0].Parameters, &params); err != nil {
		t.Fatal(err)
	}
	if got := params["required"]; !reflect.DeepEqual(got, []any{"command", "description"}) {
		t.Errorf("bash requires %v", got)
	}
}

func present(t *testing.T, tool *tools.Tool, args string) (tools.CallView, bool) {
	t.Helper()
	return tool.PresentCall(json.RawMessage(args))
}

func TestBashCallPresentation(t *testing.T) {
	set, err := New(newStub(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(context.Background())
	bashTool, outputTool, killTool := set.Tools()[0], set.Tools()[1], set.Tools()[2]
	cases := []struct {
		name string
		tool *tools.Tool
		args string
		want tools.CallView
		ok   bool
	}{
		{"foreground terminal card", bashTool, `{"command":"go test ./...","description":"Run tests"}`,
			tools.CallView{Terminal: &tools.TerminalCall{Command: "go test ./...", Description: "Run tests"}}, true},
		{"absolute cwd passed through", bashTool, `{"command":"ls","description":"List","workdir":"/tmp"}`,
			tools.CallView{Terminal: &tools.TerminalCall{Command: "ls", Description: "List", Cwd: "/tmp"}}, true},
		{"relative cwd passed through", bashTool, `{"command":"ls","description":"List","workdir":"sub"}`,
			tools.CallView{Terminal: &tools.TerminalCall{Command: "ls", Description: "List", Cwd: "sub"}}, true},
		{"background generic card", bashTool, `{"command":"npm run dev","description":"Start dev server","run_in_background":true}`,
			tools.CallView{Title: "Start dev server", Kind: tools.KindExecute, RawInput: "npm run dev"}, true},
		{"missing description", bashTool, `{"command":"ls"}`, tools.CallView{}, false},
		{"blank description", bashTool, `{"command":"ls","description":"  "}`, tools.CallView{}, false},
		{"not JSON", bashTool, `{`, tools.CallView{}, false},
		{"bash_output", outputTool, `{"task_id":"bash-3"}`,
			tools.CallView{Title: "Read output from background task bash-3", Kind: tools.KindExecute, RawInput: "bash-3"}, true},
		{"bash_kill", killTool, `{"task_id":"bash-3"}`,
			tools.CallView{Title: "Kill background task bash-3", Kind: tools.KindExecute, RawInput: "bash-3"}, true},
		{"bash_kill without id", killTool, `{"task_id":""}`, tools.CallView{}, false},
	}
	for _, tc := range cases {
		got, ok := present(t, tc.tool, tc.args)
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if outputTool.PresentResult != nil || killTool.PresentResult != nil {
		t.Error("task tools have result presenters")
	}
}

// TestBashResultPresentationRoundTrip renders executor results with the model-facing renderer
// and reads them back with the presenter: the terminal card must show the status the executor
// reported.
func TestBashResultPresentationRoundTrip(t *testing.T) {
	set, err := New(newStub(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(context.Background())
	bashTool := set.Tools()[0]
	fg := json.RawMessage(`{"command":"make","description":"Build"}`)
	cases := []struct {
		name   string
		res    bash.RunResult
		output string
		code   *int
		signal string
	}{
		{"exit 0", bash.RunResult{ExitCode: intp(0), Stdout: out("ok\n")}, "ok\n", intp(0), ""},
		{"exit 7", bash.RunResult{ExitCode: intp(7), Stdout: out("x")}, "x", intp(7), ""},
		{"SIGTERM", bash.RunResult{Signal: "SIGTERM", Stdout: out("partial\n")}, "partial", nil, "SIGTERM"},
		{"timeout with exit 0", bash.RunResult{TimedOut: true, Timeout: 100 * time.Millisecond, ExitCode: intp(0)}, "(no output)\n[timed out after 100ms]", intp(0), ""},
		{"timeout then signal", bash.RunResult{TimedOut: true, Timeout: 100 * time.Millisecond, Signal: "SIGKILL"}, "(no output)\n[timed out after 100ms]", nil, "SIGKILL"},
		{"marker-looking unterminated output reads exit 0", bash.RunResult{ExitCode: intp(0), Stdout: out("[exit code: 9]")}, "[exit code: 9]", intp(0), ""},
		{"a forged kill marker from a command that exits 0", bash.RunResult{ExitCode: intp(0), Stdout: out("done\n[killed by signal: SIGKILL]\n")}, "done\n[killed by signal: SIGKILL]\n", intp(0), ""},
	}
	for _, tc := range cases {
		text := renderRun(tc.res, runFacts(tc.res))
		res, err := withFacts(text, runFacts(tc.res))
		if err != nil {
			t.Fatal(err)
		}
		view, ok := bashTool.PresentResult(fg, res)
		want := tools.ResultView{Terminal: &tools.TerminalResult{Output: tc.output, ExitCode: tc.code, Signal: tc.signal, TimedOut: tc.res.TimedOut}}
		if !ok || !reflect.DeepEqual(view, want) {
			t.Errorf("%s (text %q): got %+v, want %+v", tc.name, text, view.Terminal, want.Terminal)
		}
	}

	// The text alone is no evidence: a result without facts gets no card.
	if view, ok := bashTool.PresentResult(fg, tools.Text("x\n[exit code: 7]")); ok {
		t.Errorf("a result without facts was presented: %+v", view.Terminal)
	}

	bg := json.RawMessage(`{"command":"sleep 9","description":"Wait","run_in_background":true}`)
	view, ok := bashTool.PresentResult(bg, tools.Text("started background task bash-1"))
	if want := (tools.ResultView{Content: []tools.Content{tools.TextContent("```console\nstarted background task bash-1\n```")}}); !ok || !reflect.DeepEqual(view, want) {
		t.Errorf("background: %+v", view)
	}
	errRes := tools.Result{IsError: true, Content: []tools.Content{tools.TextContent("Error: spawn failed\n")}}
	view, ok = bashTool.PresentResult(fg, errRes)
	if want := (tools.ResultView{Content: []tools.Content{tools.TextContent("```console\nError: spawn failed\n```")}}); !ok || !reflect.DeepEqual(view, want) {
		t.Errorf("error: %+v", view)
	}
	for _, res := range []tools.Result{{}, {Content: []tools.Content{tools.TextContent("a"), tools.TextContent("b")}}, {Content: []tools.Content{{Type: "image"}}}} {
		if view, ok := bashTool.PresentResult(fg, res); ok {
			t.Errorf("non-single-text result %+v presented as %+v", res, view)
		}
	}
	if view, ok := bashTool.PresentResult(json.RawMessage(`{"command":"ls"}`), tools.Text("x")); ok {
		t.Errorf("malformed args presented as %+v", view)
	}
}

// FuzzPresenters checks that the bash tools' presenters never fail on logged arguments and
// result text of any shape.
func FuzzPresenters(f *testing.F) {
	f.Add([]byte(`{"command":"ls","description":"d"}`), "out\n[exit code: 2]", false)
	f.Add([]byte(`{"command":"ls","description":"d","run_in_background":true}`), "started background task bash-1", false)
	f.Add([]byte(`{"command":"ls","description":"d","workdir":"../x"}`), "\n[killed by signal: ]", true)
	f.Add([]byte(`{"task_id":"bash-1"}`), "", false)
	f.Add([]byte(`[`), "\n[exit code: 99999999999999999999]", false)
	set, err := New(newStub(), Config{})
	if err != nil {
		f.Fatal(err)
	}
	defer set.Close(context.Background())
	f.Fuzz(func(t *testing.T, args []byte, text string, isError bool) {
		for _, tool := range set.Tools() {
			view, ok := tool.PresentCall(args)
			if ok && view.Terminal == nil && view.Title == "" {
				t.Fatalf("%s: untitled view for %q", tool.Name, args)
			}
			if tool.PresentResult != nil {
				rv, ok := tool.PresentResult(args, tools.Result{IsError: isError, Content: []tools.Content{tools.TextContent(text)}})
				if ok && rv.Terminal != nil && rv.Terminal.ExitCode != nil && rv.Terminal.Signal != "" {
					t.Fatalf("both exit code and signal for %q", text)
				}
			}
		}
	})
}
