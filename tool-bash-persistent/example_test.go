package persistentbash_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	persistentbash "github.com/dsh-go/dsh/tool-bash-persistent"
	"github.com/dsh-go/dsh/tools"
)

// An agent's shell keeps its working directory and variables from one call to the next;
// another agent gets a shell of its own.
func ExampleNew() {
	workspace, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(workspace)
	shells, err := persistentbash.New(persistentbash.Config{Workdir: workspace})
	if err != nil {
		panic(err)
	}
	defer shells.Close(context.Background())
	var reg tools.Registry
	if _, err := reg.Register(shells.Tool()); err != nil {
		panic(err)
	}
	call := func(owner, command string) {
		args, _ := json.Marshal(persistentbash.Args{Command: command})
		r := reg.Execute(context.Background(), tools.Call{ID: "1", Name: "bash", Args: args, Agent: &tools.Agent{Owner: owner}})
		fmt.Printf("%s $ %s\n%s\n", owner, command, strings.ReplaceAll(r.Text(), workspace, "$WORKSPACE"))
	}
	call("alice", "mkdir -p src && cd src && export GREETING=hello")
	call("alice", `echo "$GREETING from $(basename "$PWD")"`)
	call("bob", `echo "${GREETING:-unset}"; ls`)
	call("alice", "exit 3")
	call("alice", `echo "${GREETING:-unset}"`)
	// Output:
	// alice $ mkdir -p src && cd src && export GREETING=hello
	//
	// alice $ echo "$GREETING from $(basename "$PWD")"
	// hello from src
	// bob $ echo "${GREETING:-unset}"; ls
	// unset
	// src
	// alice $ exit 3
	// exit
	// [shell exited: code 3]
	// The persistent bash shell was reset; the next bash call starts from the workspace with a fresh current directory and environment.
	// alice $ echo "${GREETING:-unset}"
	// [shell reset: the shell exited with code 3; this command ran in a fresh shell started in $WORKSPACE, without the directory changes, variables, functions and aliases of earlier calls]
	// unset
}
