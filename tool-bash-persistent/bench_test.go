package persistentbash

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/dsh-go/dsh/tools"
)

// BenchmarkPersistentCall measures one bash call on a warm shell through the registry: typing
// the wrapped line, running the command and reading up to the next prompt marker.
func BenchmarkPersistentCall(b *testing.B) {
	for _, c := range []struct{ name, command string }{{"true", "true"}, {"echo", "echo hello"}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(Config{Workdir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			var reg tools.Registry
			if _, err := reg.Register(s.Tool()); err != nil {
				b.Fatal(err)
			}
			args, _ := json.Marshal(Args{Command: c.command})
			call := tools.Call{ID: "1", Name: ToolName, Args: args, Agent: &tools.Agent{Owner: "bench"}}
			if r := reg.Execute(context.Background(), call); r.IsError {
				b.Fatal(r.Text()) // warm up: start the shell
			}
			b.ResetTimer()
			for b.Loop() {
				if r := reg.Execute(context.Background(), call); r.IsError {
					b.Fatal(r.Text())
				}
			}
		})
	}
}

// BenchmarkOneShot is the baseline: a fresh `bash -c` per command, as a one-shot tool spawns it.
func BenchmarkOneShot(b *testing.B) {
	for _, c := range []struct{ name, command string }{{"true", "true"}, {"echo", "echo hello"}} {
		b.Run(c.name, func(b *testing.B) {
			bash, err := exec.LookPath("bash")
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if out, err := exec.Command(bash, "--noprofile", "--norc", "-c", c.command).Output(); err != nil {
					b.Fatal(err, string(out))
				}
			}
		})
	}
}
