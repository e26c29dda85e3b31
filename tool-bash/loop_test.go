package toolbash

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
	"github.com/dsh-go/dsh/tools/acp"
)

// message is one entry of the scripted agent's history: a tool call, its result, or a notice
// injected by a tool.
type message struct {
	kind   string // "call", "result", "notice"
	text   string
	source string
	err    bool
}

// agentLoop is a minimal agent harness: a history, a registry, a live ACP mapper, and a "model"
// that decides the next call from the history.
type agentLoop struct {
	t       *testing.T
	reg     *tools.Registry
	agent   *tools.Agent
	mapper  *acp.Mapper
	updates []string
	log     []tools.Call // calls, with results interleaved in results
	results []tools.Result

	mu      sync.Mutex
	history []message
}

func (l *agentLoop) inject(n tools.Notice) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.history = append(l.history, message{kind: "notice", text: n.Text, source: n.Source})
	return nil
}

func (l *agentLoop) snapshot() []message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]message(nil), l.history...)
}

// step runs one model decision: the model sees the history (its "request") and returns a call,
// or nil to finish. The call's result is appended to the history.
func (l *agentLoop) step(model func(history []message) *tools.Call) bool {
	call := model(l.snapshot())
	if call == nil {
		return false
	}
	call.Agent = l.agent
	l.updates = append(l.updates, mustMarshal(l.t, l.mapper.Call(call.ID, call.Name, call.Args)))
	res := l.reg.Execute(context.Background(), *call)
	l.updates = append(l.updates, mustMarshal(l.t, l.mapper.Result(res)))
	l.log = append(l.log, *call)
	l.results = append(l.results, res)
	l.mu.Lock()
	l.history = append(l.history, message{kind: "result", text: res.Text(), err: res.IsError})
	l.mu.Unlock()
	return true
}

func mustMarshal(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func last(h []message, kind string) message {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].kind == kind {
			return h[i]
		}
	}
	return message{}
}

func TestAgentLoop(t *testing.T) {
	t.Parallel()
	ex := localExecutor(t, bashlocal.Config{})
	dir := t.TempDir()
	loop := &agentLoop{t: t, reg: &tools.Registry{}}
	loop.agent = &tools.Agent{Owner: "session-42", Dir: dir, Inject: loop.inject}
	h := newHarness(t, ex, Config{})
	loop.reg = h.reg
	loop.mapper = acp.NewMapper(loop.reg, acp.Options{Dir: dir, TerminalOutput: true})

	gate := filepath.Join(dir, "gate")
	var serverID, sleeperID string
	n := 0
	bashCall := func(args string) *tools.Call {
		n++
		return &tools.Call{ID: fmt.Sprintf("m%d", n), Name: "bash", Args: json.RawMessage(args)}
	}
	taskCall := func(tool, id string) *tools.Call {
		n++
		return &tools.Call{ID: fmt.Sprintf("m%d", n), Name: tool, Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id))}
	}
	state := "start"
	deadline := time.Now().Add(30 * time.Second)
	// The scripted model: each decision depends only on what the history shows it.
	model := func(hist []message) *tools.Call {
		if time.Now().After(deadline) {
			t.Fatalf("the model is stuck in state %s; history %+v", state, hist)
		}
		res := last(hist, "result")
		if strings.HasPrefix(state, "poll") || state == "await-notices" {
			time.Sleep(2 * time.Millisecond) // back off between polls
		}
		switch state {
		case "start":
			state = "echoed"
			return bashCall(`{"command":"echo integration-ok","description":"Say integration ok"}`)
		case "echoed":
			if res.text != "integration-ok\n" || res.err {
				t.Fatalf("foreground result %+v", res)
			}
			state = "failed"
			return bashCall(`{"command":"echo about to fail; exit 9","description":"Fail on purpose"}`)
		case "failed":
			if res.text != "about to fail\n[exit code: 9]" || res.err {
				t.Fatalf("exit 9 result %+v", res)
			}
			state = "server"
			return bashCall(fmt.Sprintf(`{"command":"echo listening; while [ ! -e %s ]; do sleep 0.01; done; echo stopping","description":"Start a fake server","run_in_background":true}`, gate))
		case "server":
			serverID = strings.TrimPrefix(res.text, "started background task ")
			state = "sleeper"
			return bashCall(`{"command":"sleep 60","description":"Sleep a long time","run_in_background":true,"env":{"X":"smuggled"}}`)
		case "sleeper":
			sleeperID = strings.TrimPrefix(res.text, "started background task ")
			state = "poll-listening"
			return taskCall("bash_output", serverID)
		case "poll-listening":
			if !strings.Contains(res.text, "listening") {
				return taskCall("bash_output", serverID) // poll again
			}
			if !strings.HasSuffix(res.text, "[status: running]") {
				t.Fatalf("server read %q", res.text)
			}
			state = "kill"
			return taskCall("bash_kill", sleeperID)
		case "kill":
			if res.text != "killed background task "+sleeperID+" [status: killed by SIGTERM]" {
				t.Fatalf("kill result %q", res.text)
			}
			state = "open-gate"
			return bashCall(`{"command":"touch gate","description":"Open the gate"}`) // relative to the session dir
		case "open-gate":
			state = "poll-done"
			return taskCall("bash_output", serverID)
		case "poll-done":
			if !strings.Contains(res.text, "[status: completed") {
				return taskCall("bash_output", serverID)
			}
			state = "await-notices"
			fallthrough
		case "await-notices":
			notices := 0
			for _, m := range hist {
				if m.kind == "notice" {
					notices++
				}
			}
			if notices < 2 {
				// Notices are durable context for the next request, not a wake-up: keep
				// working (here, a harmless read) until they have arrived.
				return taskCall("bash_output", serverID)
			}
			return nil
		}
		t.Fatalf("unknown state %s", state)
		return nil
	}
	for loop.step(model) {
	}

	hist := loop.snapshot()
	var notices []message
	for _, m := range hist {
		if m.kind == "notice" {
			notices = append(notices, m)
		}
	}
	want := map[string]bool{
		"background bash task " + serverID + " finished [status: completed, exit code: 0]. Read its output with bash_output.": true,
		"background bash task " + sleeperID + " finished [status: killed by SIGTERM]. Read its output with bash_output.":      true,
	}
	if len(notices) != 2 {
		t.Fatalf("notices %+v", notices)
	}
	for _, m := range notices {
		if !want[m.text] || m.source != "tool-bash" {
			t.Errorf("notice %+v", m)
		}
	}
	// All server output was read exactly once across the polls.
	var all strings.Builder
	for i, c := range loop.log {
		if c.Name == "bash_output" {
			all.WriteString(loop.results[i].Text())
		}
	}
	if s := all.String(); strings.Count(s, "listening") != 1 || strings.Count(s, "stopping") != 1 {
		t.Errorf("server output across polls: %q", s)
	}

	// A fresh mapper over the logged calls and results reproduces the live cards.
	replay := acp.NewMapper(loop.reg, acp.Options{Dir: dir, TerminalOutput: true})
	var replayed []string
	for i, c := range loop.log {
		replayed = append(replayed, mustMarshal(t, replay.Call(c.ID, c.Name, c.Args)), mustMarshal(t, replay.Result(loop.results[i])))
	}
	if strings.Join(replayed, "\n") != strings.Join(loop.updates, "\n") {
		t.Errorf("replay differs from the live updates:\nlive   %s\nreplay %s", strings.Join(loop.updates, "\n"), strings.Join(replayed, "\n"))
	}
	// The first card is the foreground echo, as an embedded terminal in the session dir.
	if want := `{"sessionUpdate":"tool_call","toolCallId":"m1","title":"echo integration-ok","kind":"execute","status":"in_progress",` +
		`"content":[{"type":"content","content":{"type":"text","text":"Say integration ok"}},{"type":"terminal","terminalId":"m1"}],` +
		`"rawInput":"echo integration-ok","_meta":{"terminal_info":{"cwd":"` + dir + `","terminal_id":"m1"}}}`; loop.updates[0] != want {
		t.Errorf("first card:\n got %s\nwant %s", loop.updates[0], want)
	}
	if want := `{"sessionUpdate":"tool_call_update","toolCallId":"m2","status":"completed","_meta":{"terminal_exit":{"exit_code":9,"signal":null,"terminal_id":"m2"},` +
		`"terminal_output":{"data":"about to fail","terminal_id":"m2"}}}`; loop.updates[3] != want {
		t.Errorf("exit 9 card:\n got %s\nwant %s", loop.updates[3], want)
	}
}
