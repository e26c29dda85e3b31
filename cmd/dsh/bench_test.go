package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

// BenchmarkMCPCall measures one tools/call through a connected client of the SDK over its
// in-memory transport: JSON-RPC encoding both ways, the SDK's dispatch, the session lookup,
// the registry and the tool. "true" runs `bash -c true` in the foreground (compare with
// BenchmarkExecutorRun/true); "no_process" is a bash_output call of an unknown task, which
// starts nothing (compare with BenchmarkRegistryCall/no_process), so the difference is the
// protocol layer alone.
func BenchmarkMCPCall(b *testing.B) {
	srv := testServer(b, config{})
	c := connect(b, srv)
	ctx := context.Background()
	for _, bc := range []struct {
		name, tool, args, want string
		isError                bool
	}{
		{"true", "bash", `{"command":"true","description":"Nothing"}`, "(no output)", false},
		{"no_process", "bash_output", `{"task_id":"bash-0"}`, `Error: unknown bash task "bash-0"`, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			params := &mcp.CallToolParams{Name: bc.tool, Arguments: json.RawMessage(bc.args)}
			for b.Loop() {
				res, err := c.cs.CallTool(ctx, params)
				if err != nil || res.IsError != bc.isError || text(res) != bc.want {
					b.Fatalf("%v %v", err, res)
				}
			}
		})
	}
}

// BenchmarkExecutorRun is the baseline of BenchmarkMCPCall/true: the same command through the
// local executor directly (Resolve and Run), as configured by dsh.
func BenchmarkExecutorRun(b *testing.B) {
	srv := testServer(b, config{})
	ex := srv.tools.ex
	b.Run("true", func(b *testing.B) {
		for b.Loop() {
			spec, err := ex.Resolve(bash.Request{Command: "true"})
			if err != nil {
				b.Fatal(err)
			}
			if res, err := ex.Run(context.Background(), spec); err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
				b.Fatal(err, res)
			}
		}
	})
}

// BenchmarkRegistryCall is the same calls as BenchmarkMCPCall through the registry, without the
// protocol: "no_process" is the baseline of BenchmarkMCPCall/no_process, and "true" sits
// between BenchmarkExecutorRun/true and BenchmarkMCPCall/true.
func BenchmarkRegistryCall(b *testing.B) {
	srv := testServer(b, config{})
	agent := &tools.Agent{Owner: "bench"}
	for _, bc := range []struct{ name, tool, args, want string }{
		{"true", "bash", `{"command":"true","description":"Nothing"}`, "(no output)"},
		{"no_process", "bash_output", `{"task_id":"bash-0"}`, `Error: unknown bash task "bash-0"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			call := tools.Call{ID: "1", Name: bc.tool, Args: json.RawMessage(bc.args), Agent: agent}
			for b.Loop() {
				if res := srv.tools.reg.Execute(context.Background(), call); res.Text() != bc.want {
					b.Fatal(res.Text())
				}
			}
		})
	}
}

// BenchmarkToolsetLifecycle is what every `dsh call` and `dsh tools` pays besides the process
// starts and the call: building the tools (the executor, the tool definitions and their schemas,
// the registry) and closing them (the executor's last sweep for processes left behind).
func BenchmarkToolsetLifecycle(b *testing.B) {
	cfg := testConfig(b, config{})
	for b.Loop() {
		ts, err := newToolset(cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := ts.close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
