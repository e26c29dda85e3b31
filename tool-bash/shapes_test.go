package toolbash

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

// shape runs one call of tool and checks its result against the tool's output schema twice: the
// registry (which checks every result in a test binary) must not have replaced it, and
// Tool.CheckResult must accept it. want must appear in the structured content of a successful
// result, or in the text of a failed one, so the call reached the shape it is named after.
func (h *harness) shape(name string, agent *tools.Agent, tool, args, want string) tools.Result {
	h.t.Helper()
	res := h.call(agent, tool, args)
	if res.Code == tools.CodeResultSchema {
		h.t.Fatalf("%s: %s", name, res.Text())
	}
	def, ok := h.reg.Lookup(tool)
	if !ok {
		h.t.Fatalf("%s: no tool %s", name, tool)
	}
	if err := def.CheckResult(res); err != nil {
		h.t.Errorf("%s: %v", name, err)
	}
	got := string(res.Structured)
	if res.IsError {
		got = res.Text()
	}
	if !strings.Contains(got, want) {
		h.t.Errorf("%s: %s %s gave %s (text %q), want it to hold %s", name, tool, args, got, res.Text(), want)
	}
	if tool == "bash" || tool == "bash_output" {
		h.outputInFacts(name, res)
	}
	return res
}

// outputInFacts checks that the output a bash or bash_output text block shows is in the facts
// too, as the text shows it, so a client that shows only the structured content misses nothing.
func (h *harness) outputInFacts(name string, res tools.Result) {
	h.t.Helper()
	var f struct {
		RunFacts
		Output *string `json:"output"`
	}
	if res.IsError || !factsIn(res, &f) || f.TaskID != "" && f.Output == nil && f.Stdout == nil {
		return // a failure, or a background start: no output to show
	}
	text := res.Text()
	var shown []string
	for _, s := range []*StreamFacts{f.Stdout, f.Stderr} {
		if s != nil {
			shown = append(shown, s.Text)
		}
	}
	if f.Output != nil {
		shown = append(shown, *f.Output)
	}
	for _, part := range shown {
		if !strings.Contains(text, part) {
			h.t.Errorf("%s: the facts hold output %q that the text %q does not show", name, part, text)
		}
		text = strings.Replace(text, part, "", 1)
	}
	if strings.ContainsFunc(strings.NewReplacer("[stderr]", "", "(no output)", "", "(no new output)", "").Replace(withoutMarkers(text)), func(r rune) bool { return r != '\n' }) {
		h.t.Errorf("%s: the text shows %q that the facts do not hold", name, text)
	}
}

// withoutMarkers drops the tool's own marker lines ("[…]" lines the facts state as fields).
func withoutMarkers(text string) string {
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "[") || !strings.HasSuffix(line, "]") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func bashArgs(command string, extra ...string) string {
	return fmt.Sprintf(`{"command":%q,"description":"Show a result shape"%s}`, command, strings.Join(extra, ""))
}

func taskArgs(id string, extra ...string) string {
	return fmt.Sprintf(`{"task_id":%q%s}`, id, strings.Join(extra, ""))
}

// TestResultShapesMatchSchemas walks every tool through each shape its results take and checks
// each result against the tool's output schema: an MCP client that validates results (the
// TypeScript and Python SDKs) turns a mismatch into an error.
func TestResultShapesMatchSchemas(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{Limits: bash.Limits{MaxOutputBytes: 100, HeadBytes: 30}})
	me := newSession("shapes", "").agent

	h.shape("no tasks", me, "bash_tasks", `{}`, `"tasks":[]`)
	h.shape("completed", me, "bash", bashArgs("echo hi"), `"exitCode":0,"timeoutMs":120000,"stdout":{"text":"hi\n","bytes":3}`)
	h.shape("failed", me, "bash", bashArgs("echo out; echo oops >&2; exit 3"), `"exitCode":3,"timeoutMs":120000,"stdout":{"text":"out\n","bytes":4},"stderr":{"text":"oops\n","bytes":5}`)
	h.shape("no output", me, "bash", bashArgs("true"), `"stdout":{"text":"","bytes":0}`)
	h.shape("timed out", me, "bash", bashArgs("echo partial; sleep 30", `,"timeoutMs":100`), `"timedOut":true,"timeoutMs":100,"stdout":{"text":"partial\n"`)
	h.shape("truncated with spill", me, "bash", bashArgs("seq 1 1000"), `"stdout":{"text":"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n[output truncated: 3793 bytes omitted; full output: /`)
	h.shape("signal", me, "bash", bashArgs("kill -KILL $$"), `"signal":"SIGKILL"`)

	start := h.shape("background start", me, "bash", bashArgs("echo started; sleep 60", `,"run_in_background":true`), `"taskId":"`)
	id, _ := strings.CutPrefix(start.Text(), "started background task ")
	h.pollOutput(me, id, "started")
	h.shape("running read", me, "bash_output", taskArgs(id), `"status":"running","taskId"`[:18])
	h.shape("running list", me, "bash_tasks", `{}`, `"status":"running"`)
	h.shape("signal sent", me, "bash_kill", taskArgs(id, `,"signal":"SIGUSR1"`), `"taskId":"`+id+`"`)
	h.waitDone(id) // SIGUSR1 ends a sleeping bash
	h.shape("signalled read", me, "bash_output", taskArgs(id), `"signal":"SIGUSR1"`)

	live := h.startBackground(me, "sleep 60")
	h.shape("killed", me, "bash_kill", taskArgs(live), `"killed":true`)
	h.waitDone(live)
	h.shape("killed read", me, "bash_output", taskArgs(live), `"status":"killed"`)
	h.shape("already finished", me, "bash_kill", taskArgs(live), `"status":"killed"`)

	done := h.startBackground(me, "seq 1 500")
	h.waitDone(done)
	h.shape("completed read, lossy", me, "bash_output", taskArgs(done), `"omittedBytes":`)
	h.shape("completed list", me, "bash_tasks", `{"limit":2}`, `"older":1`)

	h.shape("invalid arguments", me, "bash", `{"command":1}`, "Error: invalid arguments")
	h.shape("unknown task", me, "bash_output", taskArgs("nope"), "Error: ")
	h.shape("another session's task", newSession("other", "").agent, "bash_kill", taskArgs(done), "belongs to another session")

	remove := h.reg.UseBefore(func(context.Context, tools.Call) tools.Decision {
		return tools.Decision{Verdict: tools.VerdictDeny, Reason: "policy: no commands today"}
	})
	h.shape("policy refusal", me, "bash", bashArgs("true"), "Error: policy: no commands today")
	remove()
	remove = h.reg.UseBefore(func(context.Context, tools.Call) tools.Decision {
		return tools.Decision{Verdict: tools.VerdictAsk, Reason: "it writes files"}
	})
	h.shape("approval required", me, "bash", bashArgs("true"), "Error: approval required: it writes files")
	remove()

	if runtime.GOOS != "linux" {
		return // the sandbox is enforced on Linux only; elsewhere a sandboxed executor is refused
	}
	wd, outside := t.TempDir(), t.TempDir()
	sandboxed := newHarness(t, localExecutor(t, bashlocal.Config{Workdir: wd, Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}}), Config{})
	target := filepath.Join(outside, "f")
	sandboxed.shape("sandboxed", me, "bash", bashArgs("echo inside > f"), `"sandbox":{"mode":"workspace-write","network":"off"`)
	sandboxed.shape("sandbox denial", me, "bash", bashArgs("echo x > "+target), `"denial":"write outside the workspace denied: `+target+`"`)
	sandboxed.shape("leaving the sandbox refused", me, "bash", bashArgs("true", `,"sandbox":"off","justification":"needs it"`), "no approver is configured")
}
