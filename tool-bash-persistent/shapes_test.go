//go:build linux

package persistentbash

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

// shape checks one result of the bash tool against its output schema twice: the registry (which
// checks every result in a test binary) must not have replaced it, and Tool.CheckResult must
// accept it. want must appear in the structured content of a successful result, or in the text
// of a failed one, so the call reached the shape it is named after.
func (h *harness) shape(name string, res tools.Result, want string) tools.Result {
	h.t.Helper()
	if res.Code == tools.CodeResultSchema {
		h.t.Fatalf("%s: %s", name, res.Text())
	}
	if err := h.s.Tool().CheckResult(res); err != nil {
		h.t.Errorf("%s: %v", name, err)
	}
	got := string(res.Structured)
	if res.IsError {
		got = res.Text()
	}
	if !strings.Contains(got, want) {
		h.t.Errorf("%s: got %s (text %q), want it to hold %s", name, got, res.Text(), want)
	}
	return res
}

// TestResultShapesMatchSchemas walks the persistent bash tool through each shape its results
// take and checks each against the tool's output schema: an MCP client that validates results
// (the TypeScript and Python SDKs) turns a mismatch into an error.
func TestResultShapesMatchSchemas(t *testing.T) {
	h := newHarness(t, Config{MaxOutputChars: 200, Timeout: 2 * time.Second})
	h.shape("empty", h.call("a", "true"), `"outcome":"completed","exitCode":0`)
	h.shape("completed", h.call("a", "echo hi"), `"exitCode":0`)
	h.shape("failed", h.call("a", "echo oops >&2; exit_code() { return 4; }; exit_code"), `"exitCode":4`)
	h.shape("clipped", h.call("a", "seq 1 1000"), `"omittedChars":`)
	h.shape("stdin end-of-file", h.call("a", "read -r x"), `"stdinEOF":true`)
	h.shape("timed out", h.call("a", "sleep 30"), `"outcome":"timed-out"`)
	h.shape("shell exited", h.call("a", "exit 3"), `"shellExitCode":3`)
	h.shape("shell killed", h.call("a", "kill -KILL $$"), `"shellSignal":"SIGKILL"`)
	h.shape("lost", h.call("a", "exec >/dev/null 2>&1"), `"outcome":"lost"`)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.shape("cancelled", h.callCtx(ctx, "a", "", "true"), "Error: tool call aborted before dispatch")
	h.shape("no owner", h.call("", "true"), "Error: "+ErrNoOwner.Error())
	h.shape("invalid arguments", h.reg.Execute(context.Background(), tools.Call{Name: ToolName, Args: []byte(`{}`)}), "Error: invalid arguments")
	remove := h.reg.UseBefore(func(context.Context, tools.Call) tools.Decision {
		return tools.Decision{Verdict: tools.VerdictDeny, Reason: "policy: no commands today"}
	})
	h.shape("policy refusal", h.call("a", "true"), "Error: policy: no commands today")
	remove()

	ws, outside := t.TempDir(), t.TempDir()
	sandboxed := newHarness(t, Config{Workdir: ws, Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}})
	sandboxed.shape("sandbox denial", sandboxed.call("a", "echo x > "+outside+"/f"), `"sandbox":"workspace-write`)
}
