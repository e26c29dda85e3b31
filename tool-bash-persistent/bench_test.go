package persistentbash

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

// BenchmarkPersistentCall measures one bash call on a warm shell through the registry: typing
// the wrapped line, running the command and reading up to the next prompt marker.
// The sandboxed cases run the same commands in a shell confined by a workspace-write sandbox.
func BenchmarkPersistentCall(b *testing.B) {
	for _, c := range []struct {
		name, command string
		sandbox       bash.Sandbox
	}{
		{"true", "true", bash.Sandbox{}},
		{"echo", "echo hello", bash.Sandbox{}},
		{"sandboxed/true", "true", bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}},
		{"sandboxed/echo", "echo hello", bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}},
	} {
		b.Run(c.name, func(b *testing.B) {
			reg, call := benchTool(b, c.command, c.sandbox)
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

// outputCommand prints the bulk-output benchmarks' output: lines of 55 bytes, newline included,
// cut at exactly outputBytes, so the last line is "the quick brown fox jumps over the lazy dog 0".
const (
	outputBytes   = 100_000_000
	outputCommand = "yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c 100000000"
)

// BenchmarkPersistentOutput measures a call that prints 100 MB through the persistent shell: the
// terminal reads, the sanitizer and the head+tail clipping down to the default 16,000
// characters. BenchmarkOneShotOutput runs the same command through the one-shot executor.
func BenchmarkPersistentOutput(b *testing.B) {
	b.Run("100MB", func(b *testing.B) {
		reg, call := benchTool(b, outputCommand, bash.Sandbox{})
		b.SetBytes(outputBytes)
		for b.Loop() {
			r := reg.Execute(context.Background(), call)
			if r.IsError || !strings.Contains(r.Text(), "[output clipped: ") || !strings.HasSuffix(r.Text(), "\nthe quick brown fox jumps over the lazy dog 0") {
				b.Fatalf("%.200q", r.Text())
			}
		}
	})
}

// BenchmarkOneShotOutput is the baseline of BenchmarkPersistentOutput: the same command through
// bash-local with its defaults (a fresh bash -c, head and tail kept, the rest spilled to a file).
func BenchmarkOneShotOutput(b *testing.B) {
	b.Run("100MB", func(b *testing.B) {
		ex, err := bashlocal.New(bashlocal.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer ex.Close(context.Background())
		spec, err := ex.Resolve(bash.Request{Command: outputCommand})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(outputBytes)
		for b.Loop() {
			res, err := ex.Run(context.Background(), spec)
			if err != nil || res.Stdout.TotalBytes != outputBytes {
				b.Fatal(res.Stdout.TotalBytes, err)
			}
		}
	})
}

// benchTool returns a registry holding a persistent bash tool, whose shell for the owner "bench"
// is already started (in sandbox), and a call of command by that owner.
func benchTool(b *testing.B, command string, sandbox bash.Sandbox) (*tools.Registry, tools.Call) {
	b.Helper()
	s, err := New(Config{Workdir: b.TempDir(), Sandbox: sandbox})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close(context.Background()) })
	reg := &tools.Registry{}
	if _, err := reg.Register(s.Tool()); err != nil {
		b.Fatal(err)
	}
	args, _ := json.Marshal(Args{Command: command})
	call := tools.Call{ID: "1", Name: ToolName, Args: args, Agent: &tools.Agent{Owner: "bench"}}
	warm := call
	warm.Args = json.RawMessage(`{"command":"true"}`)
	if r := reg.Execute(context.Background(), warm); r.IsError {
		b.Fatal(r.Text())
	}
	return reg, call
}
