package acp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dsh-go/dsh/tools"
	"github.com/dsh-go/dsh/tools/acp"
)

// RunArgs are the arguments of the run tool in the example.
type RunArgs struct {
	Command string `json:"command" jsonschema:"Command line."`
}

// A command tool presents its calls as terminal cards. A client without the terminal_output
// capability gets an execute card, then the output as a fenced console block; one with it gets
// an embedded terminal.
func ExampleMapper() {
	run, err := tools.New("run", "Run a command.",
		func(ctx context.Context, call tools.Call, a RunArgs) (tools.Result, error) {
			return tools.Text("hello\n[exit code: 1]"), nil
		},
		tools.WithCallView(func(a RunArgs) (tools.CallView, bool) {
			return tools.CallView{Terminal: &tools.TerminalCall{Command: a.Command, Cwd: "src"}}, true
		}),
		tools.WithResultView(func(a RunArgs, res tools.Result) (tools.ResultView, bool) {
			code := 1
			return tools.ResultView{Terminal: &tools.TerminalResult{Output: "hello\n", ExitCode: &code}}, true
		}))
	if err != nil {
		panic(err)
	}
	var reg tools.Registry
	if _, err := reg.Register(run); err != nil {
		panic(err)
	}
	call := tools.Call{ID: "call-1", Name: "run", Args: json.RawMessage(`{"command":"echo hello; false"}`)}
	res := reg.Execute(context.Background(), call)

	for _, terminal := range []bool{false, true} {
		m := acp.NewMapper(&reg, acp.Options{Dir: "/work", TerminalOutput: terminal})
		for _, u := range []acp.Update{m.Call(call.ID, call.Name, call.Args), m.Result(res)} {
			b, _ := json.Marshal(u)
			fmt.Println(string(b))
		}
	}
	// Output:
	// {"sessionUpdate":"tool_call","toolCallId":"call-1","title":"echo hello; false","kind":"execute","status":"in_progress","rawInput":"echo hello; false"}
	// {"sessionUpdate":"tool_call_update","toolCallId":"call-1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"```console\nhello\n```"}}]}
	// {"sessionUpdate":"tool_call","toolCallId":"call-1","title":"echo hello; false","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"call-1"}],"rawInput":"echo hello; false","_meta":{"terminal_info":{"cwd":"/work/src","terminal_id":"call-1"}}}
	// {"sessionUpdate":"tool_call_update","toolCallId":"call-1","status":"completed","_meta":{"terminal_exit":{"exit_code":1,"signal":null,"terminal_id":"call-1"},"terminal_output":{"data":"hello\n","terminal_id":"call-1"}}}
}
