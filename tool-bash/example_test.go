package toolbash_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	toolbash "github.com/dsh-go/dsh/tool-bash"
	"github.com/dsh-go/dsh/tools"
)

// The bash tools over the local executor: a foreground call, a background task owned by one
// session and refused to another, its completion notice, and the cleanup. The executor is the
// caller's: the Set stops what its tools started, the executor's Close the rest.
func ExampleNew() {
	ctx := context.Background()
	workspace, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(workspace)
	ex, err := bashlocal.New(bashlocal.Config{Workdir: workspace})
	if err != nil {
		panic(err)
	}
	defer ex.Close(ctx)
	set, err := toolbash.New(ex, toolbash.Config{})
	if err != nil {
		panic(err)
	}
	defer set.Close(ctx)
	var reg tools.Registry
	if _, err := set.Register(&reg); err != nil {
		panic(err)
	}
	for _, t := range set.Tools() {
		fmt.Printf("%s: %q %+v\n", t.Name, t.Title, *t.Annotations)
	}

	notify := func(n tools.Notice) error { fmt.Printf("notice from %s: %s\n", n.Source, n.Text); return nil }
	alice := &tools.Agent{Owner: "alice", Dir: workspace, Inject: notify}
	bob := &tools.Agent{Owner: "bob", Dir: workspace}
	call := func(agent *tools.Agent, name, args string) {
		res := reg.Execute(ctx, tools.Call{ID: "1", Name: name, Args: json.RawMessage(args), Agent: agent})
		fmt.Printf("%s %s:\n%s\n", agent.Owner, name, res.Text())
	}
	call(alice, "bash", `{"command":"echo hello; exit 3","description":"Greet, then fail"}`)
	call(alice, "bash", `{"command":"echo built","description":"Build","run_in_background":true}`)
	task, _ := ex.Get(bash.TaskID("bash-1"))
	<-task.Done() // the notice is injected before Done closes
	call(bob, "bash_output", `{"task_id":"bash-1"}`)
	call(alice, "bash_output", `{"task_id":"bash-1"}`)

	// When alice's session ends, what it still runs is killed: Release returns once it has ended.
	call(alice, "bash", `{"command":"sleep 300","description":"Wait","run_in_background":true}`)
	if err := set.Release("alice"); err != nil {
		panic(err)
	}
	task, _ = ex.Get(bash.TaskID("bash-2"))
	fmt.Println("bash-2 after Release:", task.Status())
	// Output:
	// bash: "Run a bash command" {ReadOnlyHint:false DestructiveHint:true IdempotentHint:false OpenWorldHint:true}
	// bash_output: "Read a background bash task's output" {ReadOnlyHint:true DestructiveHint:false IdempotentHint:false OpenWorldHint:false}
	// bash_kill: "Kill a background bash task" {ReadOnlyHint:false DestructiveHint:true IdempotentHint:true OpenWorldHint:false}
	// alice bash:
	// hello
	// [exit code: 3]
	// alice bash:
	// started background task bash-1
	// notice from tool-bash: background bash task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output.
	// bob bash_output:
	// Error: task bash-1 belongs to another session
	// alice bash_output:
	// built
	//
	// [status: completed, exit code: 0]
	// alice bash:
	// started background task bash-2
	// bash-2 after Release: killed
}
