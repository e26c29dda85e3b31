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
	if f, ok := factsOf(res); ok && !res.IsError && !strings.Contains(res.Text(), f.Output) {
		h.t.Errorf("%s: the facts hold output %q that the text %q does not show", name, f.Output, res.Text())
	}
	return res
}

// TestResultShapesMatchSchemas walks the persistent bash tool through each shape its results
// take and checks each against the tool's output schema: an MCP client that validates results
// (the TypeScript and Python SDKs) turns a mismatch into an error.
func TestResultShapesMatchSchemas(t *testing.T) {
	h := newHarness(t, Config{MaxOutputChars: 200, Timeout: 2 * time.Second})
	h.shape("empty", h.call("a", "true"), `"outcome":"completed","output":"","exitCode":0`)
	h.shape("completed", h.call("a", "echo hi"), `"output":"hi","exitCode":0`)
	h.shape("failed", h.call("a", "echo oops >&2; exit_code() { return 4; }; exit_code"), `"output":"oops","exitCode":4`)
	h.shape("clipped", h.call("a", "seq 1 1000"), `"output":"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n`)
	h.shape("clipped", h.call("a", "seq 1 1000"), `\n[output clipped: 3693 characters (939 lines) omitted from the middle; narrow the command (grep -n, head, tail, sed -n) to see them]\n76\n977\n`)
	h.shape("stdin end-of-file", h.call("a", "read -r x"), `"stdinEOF":true`)
	h.shape("timed out", h.call("a", "echo partial; sleep 30"), `"outcome":"timed-out","output":"partial`)
	h.shape("shell exited", h.call("a", "echo bye; exit 3"), `"output":"bye\nexit","shellExitCode":3`)
	h.shape("reset notice", h.call("a", "echo after"), `"output":"after","exitCode":0,"resetCause":"the shell exited with code 3"`)
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
