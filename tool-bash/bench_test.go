package toolbash

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

// BenchmarkBashTool measures one foreground `true` through the registry, the bash tool and the
// local executor: the whole cost a model's call pays.
func BenchmarkBashTool(b *testing.B) {
	h := newHarness(b, localExecutor(b, bashlocal.Config{}), Config{})
	call := tools.Call{ID: "b", Name: "bash", Args: json.RawMessage(`{"command":"true","description":"Nothing"}`)}
	for b.Loop() {
		if res := h.reg.Execute(context.Background(), call); res.IsError || res.Text() != "(no output)" {
			b.Fatal(res.Text())
		}
	}
}

// BenchmarkBashToolBaseline is the same command through the executor alone (Resolve and Run),
// so the difference is what the tool layer adds.
func BenchmarkBashToolBaseline(b *testing.B) {
	ex := localExecutor(b, bashlocal.Config{})
	for b.Loop() {
		spec, err := ex.Resolve(bash.Request{Command: "true"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ex.Run(context.Background(), spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBashKill measures bash_kill of a running background `sleep` through the registry:
// SIGTERM, the wait until its tree is gone and its end, which is what a model waits for.
func BenchmarkBashKill(b *testing.B) {
	h := newHarness(b, localExecutor(b, bashlocal.Config{}), Config{})
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := h.startBackground(nil, "exec sleep 60")
		call := tools.Call{ID: "k", Name: "bash_kill", Args: json.RawMessage(`{"task_id":"` + id + `"}`)}
		b.StartTimer()
		if res := h.reg.Execute(context.Background(), call); res.IsError {
			b.Fatal(res.Text())
		}
	}
}
