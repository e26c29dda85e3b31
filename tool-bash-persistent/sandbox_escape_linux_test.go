package persistentbash

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/sandboxtest"
	"github.com/dsh-go/dsh/internal/escapetest"
	"github.com/dsh-go/dsh/tools"
)

// toolShell is the persistent tool as the escape suite's Shell: every command is one call of one
// owner, so they share a shell; the output is the result's text without the tool's own trailing
// lines, the exit code comes from its facts.
type toolShell struct{ reg *tools.Registry }

func (s toolShell) Run(ctx context.Context, command string) (sandboxtest.Result, error) {
	args, err := json.Marshal(Args{Command: command})
	if err != nil {
		return sandboxtest.Result{}, err
	}
	res := s.reg.Execute(ctx, tools.Call{ID: "escape", Name: ToolName, Args: args, Agent: &tools.Agent{Owner: "escape"}})
	f, ok := factsOf(res)
	if res.IsError || !ok {
		return sandboxtest.Result{}, errors.New(res.Text())
	}
	r := sandboxtest.Result{Output: withoutLastLines(res.Text(), f.Trailer), ExitCode: -1}
	if f.ExitCode != nil {
		r.ExitCode = *f.ExitCode
	}
	return r, nil
}

// TestSandboxEscapes runs the escape suite against a persistent shell in a workspace-write
// sandbox with the network off, the state-across-calls case included: no way out, and the usual
// work still works.
func TestSandboxEscapes(t *testing.T) { runEscapeSuite(t) }

// TestSandboxEscapesAsNobody runs the suite again as the unprivileged user nobody when the tests
// run as root, who passes permission checks an ordinary user would meet first.
func TestSandboxEscapesAsNobody(t *testing.T) {
	if os.Geteuid() != 0 && !escapetest.Rerun() {
		t.Skip("not root: TestSandboxEscapes already runs unprivileged")
	}
	if os.Geteuid() == 0 {
		// A set-user-ID copy of id, owned by root, for the setuid case of the re-run.
		idPath, err := exec.LookPath("id")
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(idPath)
		if err != nil {
			t.Fatal(err)
		}
		setuid := filepath.Join(escapetest.PublicDir(t), "id-setuid")
		if err := os.WriteFile(setuid, data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(setuid, 0o4755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(setuidVar, setuid)
	}
	if escapetest.AsNobody(t) {
		runEscapeSuite(t)
	}
}

// setuidVar names the set-user-ID program TestSandboxEscapesAsNobody prepares for its re-run.
const setuidVar = "PERSISTENTBASH_TEST_SETUID"

func runEscapeSuite(t *testing.T) {
	opts := sandboxtest.NewOptions(t)
	opts.Probe, opts.Persistent, opts.Setuid = true, true, os.Getenv(setuidVar)
	sandboxtest.Run(t, func(t *testing.T) sandboxtest.Shell {
		s, err := New(Config{Workdir: opts.Workdir, Sandbox: bash.Sandbox{
			Mode:     bash.SandboxWorkspaceWrite,
			DenyRead: append(append([]string(nil), bash.DefaultDenyRead...), opts.Denied),
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(context.Background()); err != nil {
				t.Error(err)
			}
		})
		reg := &tools.Registry{}
		if _, err := reg.Register(s.Tool()); err != nil {
			t.Fatal(err)
		}
		return toolShell{reg}
	}, opts)
}
