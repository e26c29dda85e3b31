package toolbash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

func intp(n int) *int { return &n }

func out(text string) bash.Output {
	return bash.Output{Head: text, TotalBytes: int64(len(text))}
}

func TestRenderRun(t *testing.T) {
	cases := []struct {
		name string
		res  bash.RunResult
		want string
	}{
		{"stdout", bash.RunResult{ExitCode: intp(0), Stdout: out("hello\n")}, "hello\n"},
		{"no output", bash.RunResult{ExitCode: intp(0)}, "(no output)"},
		{"stderr only", bash.RunResult{ExitCode: intp(0), Stderr: out("err\n")}, "[stderr]\nerr\n"},
		{"unterminated stdout and stderr", bash.RunResult{ExitCode: intp(0), Stdout: out("out"), Stderr: out("err")}, "out\n[stderr]\nerr"},
		{"unterminated before exit marker", bash.RunResult{ExitCode: intp(7), Stdout: out("x")}, "x\n[exit code: 7]"},
		{"signal without timeout", bash.RunResult{Signal: "SIGKILL", Stdout: out("a\n")}, "a\n[killed by signal: SIGKILL]"},
		{"timeout with exit 0", bash.RunResult{TimedOut: true, Timeout: 250 * time.Millisecond, ExitCode: intp(0)}, "(no output)\n[timed out after 250ms]"},
		{"timeout before signal", bash.RunResult{TimedOut: true, Timeout: 100 * time.Millisecond, Signal: "SIGTERM"}, "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
		{"timeout before exit code", bash.RunResult{TimedOut: true, Timeout: time.Second, ExitCode: intp(143), Stdout: out("p")}, "p\n[timed out after 1000ms]\n[exit code: 143]"},
		{"no exit facts", bash.RunResult{Stdout: out("?")}, "?"},
		{"process limit after signal", bash.RunResult{ProcessLimit: true, Signal: "SIGKILL", Stderr: out("fork: retry\n")}, "[stderr]\nfork: retry\n[killed by signal: SIGKILL]\n[process limit reached]"},
		{"process limit with exit 0", bash.RunResult{ProcessLimit: true, ExitCode: intp(0)}, "(no output)\n[process limit reached]"},
		{"truncated without path", bash.RunResult{ExitCode: intp(0), Stdout: bash.Output{Head: "", Tail: "tail", OmittedBytes: 10, TotalBytes: 14}},
			"[output truncated: 10 bytes omitted; full output: (unavailable)]\ntail"},
		{"truncated head cut mid-line", bash.RunResult{ExitCode: intp(1), Stdout: bash.Output{Head: "line-1\nli", Tail: "ne-9\n", OmittedBytes: 40, TotalBytes: 54, Spill: bash.Spill{Path: "/s/out.log"}}},
			"line-1\nli\n[output truncated: 40 bytes omitted; full output: /s/out.log]\nne-9\n[exit code: 1]"},
		{"partial spill", bash.RunResult{ExitCode: intp(0), Stdout: bash.Output{Head: "h\n", Tail: "t", OmittedBytes: 1 << 30, Spill: bash.Spill{Path: "/s/o.log", Partial: true, Bytes: 64 << 20}}},
			"h\n[output truncated: 1073741824 bytes omitted; first 67108864 bytes: /s/o.log]\nt"},
		{"both streams truncated", bash.RunResult{ExitCode: intp(0),
			Stdout: bash.Output{Head: "a\n", Tail: "b\n", OmittedBytes: 5, Spill: bash.Spill{Path: "/o"}},
			Stderr: bash.Output{Head: "c\n", Tail: "d", OmittedBytes: 6, Spill: bash.Spill{Path: "/e"}}},
			"a\n[output truncated: 5 bytes omitted; full output: /o]\nb\n[stderr]\nc\n[output truncated: 6 bytes omitted; full output: /e]\nd"},
	}
	for _, tc := range cases {
		if got := renderRun(tc.res, runFacts(tc.res)); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestStatusLine(t *testing.T) {
	cases := []struct {
		facts taskFacts
		want  string
	}{
		{taskFacts{status: bash.TaskRunning}, "[status: running]"},
		{taskFacts{status: bash.TaskKilled, signal: "SIGTERM"}, "[status: killed by SIGTERM]"},
		{taskFacts{status: bash.TaskKilled}, "[status: killed]"},
		{taskFacts{status: bash.TaskCompleted, code: 3}, "[status: completed, exit code: 3]"},
		{taskFacts{status: bash.TaskCompleted}, "[status: completed, exit code: 0]"},
	}
	for _, tc := range cases {
		if got := statusLine(tc.facts); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.facts, got, tc.want)
		}
	}
}

func TestLossyReadWithoutSpill(t *testing.T) {
	stub := newStub()
	h := newHarness(t, stub, Config{})
	id := h.startBackground(nil, "produce")
	stub.read = bash.TaskRead{Delta: "tail", Lossy: true, OmittedBytes: 100}
	if got := h.ok(nil, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id)); got != "tail\n[some output was dropped from memory; full output: (unavailable)]\n[status: running]" {
		t.Errorf("got %q", got)
	}
	stub.read = bash.TaskRead{Lossy: true, StdoutSpill: bash.Spill{Path: "/o.log"}, StderrSpill: bash.Spill{Path: "/e.log", Partial: true, Bytes: 8}}
	if got := h.ok(nil, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id)); got != "(no new output)\n[some output was dropped from memory; full output: /o.log, /e.log (first 8 bytes)]\n[status: running]" {
		t.Errorf("got %q", got)
	}
	stub.finish(bash.TaskID(id), nil, "")
	stub.mu.Lock()
	stub.tasks[bash.TaskID(id)].ctl.MarkKilled()
	stub.mu.Unlock()
	if got := h.ok(nil, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id)); got != "(no new output)\n[status: completed, exit code: 0]" {
		t.Errorf("completed without a code: %q", got)
	}
	killed := h.startBackground(nil, "x")
	stub.mu.Lock()
	stub.tasks[bash.TaskID(killed)].ctl.MarkKilled()
	stub.mu.Unlock()
	stub.finish(bash.TaskID(killed), nil, "")
	if got := h.ok(nil, "bash_output", fmt.Sprintf(`{"task_id":%q}`, killed)); got != "(no new output)\n[status: killed]" {
		t.Errorf("killed without a signal: %q", got)
	}
}

func TestExtraKeysNeverReachTheExecutor(t *testing.T) {
	stub := newStub()
	h := newHarness(t, stub, Config{})
	alice := newSession("alice", "/work")
	h.ok(alice.agent, "bash", `{"command":"ls","description":"List","env":{"SECRET":"x"},"stdin":"data","Command":"rm -rf /","StdoutMaxBytes":1}`)
	// The only environment is the session facts the tool sets itself.
	facts := map[string]string{"DSH_SHELL": "oneshot", "DSH_HOME": "/work"}
	want := bash.Request{Command: "ls", Workdir: "/work", Env: facts}
	if got := stub.lastRequest(); !reflect.DeepEqual(got, want) {
		t.Errorf("foreground request %+v, want %+v", got, want)
	}
	h.ok(alice.agent, "bash", `{"command":"ls","description":"List","run_in_background":true,"timeoutMs":5,"env":{"A":"1"},"stdin":"x","owner":"mallory"}`)
	owner := bash.OwnerToken("alice")
	want = bash.Request{Command: "ls", Workdir: "/work", Owner: owner, Env: facts}
	if got := stub.lastRequest(); !reflect.DeepEqual(got, want) {
		t.Errorf("background request %+v, want %+v", got, want)
	}
}

func TestExtraKeysIgnoredByRealExecutor(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	got := h.ok(nil, "bash", `{"command":"printf '[%s]' \"$SMUGGLED\"; cat","description":"Show env and stdin","env":{"SMUGGLED":"yes"},"stdin":"data"}`)
	if got != "[]" {
		t.Errorf("got %q, want %q (no variable, empty stdin)", got, "[]")
	}
}

func TestTimeoutRequest(t *testing.T) {
	stub := newStub()
	h := newHarness(t, stub, Config{})
	for args, want := range map[string]time.Duration{
		`{"command":"x","description":"d"}`:                   0,
		`{"command":"x","description":"d","timeoutMs":1500}`:  1500 * time.Millisecond,
		`{"command":"x","description":"d","timeoutMs":0.2}`:   time.Millisecond,
		`{"command":"x","description":"d","timeoutMs":1e300}`: time.Duration(1<<63 - 1),
	} {
		h.ok(nil, "bash", args)
		if got := stub.lastRequest().Timeout; got != want {
			t.Errorf("%s: timeout %v, want %v", args, got, want)
		}
	}
}

func TestExecutorFailures(t *testing.T) {
	stub := newStub()
	h := newHarness(t, stub, Config{})
	stub.runErr = fmt.Errorf("spawn bash: %w", errors.New("bash not found"))
	if res := h.fail(nil, "bash", `{"command":"x","description":"d"}`); res.Text() != "Error: spawn bash: bash not found" || res.Code != "" {
		t.Errorf("spawn failure: %+v", res)
	}
	stub.runErr = fmt.Errorf("spawn bash in %q: %w", "/nope", &os.PathError{Op: "chdir", Path: "/nope", Err: os.ErrNotExist})
	if res := h.fail(nil, "bash", `{"command":"x","description":"d"}`); res.Code != "ENOENT" {
		t.Errorf("missing dir: %+v", res)
	}
	stub.runErr = fmt.Errorf("%w: %v", bash.ErrAbortedBeforeSpawn, context.Canceled)
	if res := h.fail(nil, "bash", `{"command":"x","description":"d"}`); res.Text() != "Error: tool call aborted before the command started" || res.Code != tools.CodeAbortedBeforeDispatch {
		t.Errorf("aborted before spawn: %+v", res)
	}
	stub.runErr = nil
	stub.startErr = bash.ErrClosed
	if res := h.fail(nil, "bash", `{"command":"x","description":"d","run_in_background":true}`); res.Text() != "Error: bash: executor closed" || res.Code != "EXECUTOR_CLOSED" {
		t.Errorf("closed executor: %+v", res)
	}
	stub.run = bash.RunResult{Aborted: true}
	if res := h.fail(nil, "bash", `{"command":"x","description":"d"}`); res.Text() != "Error: tool call aborted" || res.Code != tools.CodeAborted {
		t.Errorf("aborted: %+v", res)
	}
}

func TestNewRefusesNilExecutor(t *testing.T) {
	if _, err := New(nil, Config{}); err == nil {
		t.Error("want an error")
	}
}

func TestRegisterAllOrNothing(t *testing.T) {
	set, err := New(newStub(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(context.Background())
	var r tools.Registry
	if _, err := r.Register(&tools.Tool{Name: "bash_kill", Parameters: []byte(`{"type":"object"}`), Execute: func(context.Context, tools.Call) (tools.Result, error) { return tools.Result{}, nil }}); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Register(&r); err == nil {
		t.Fatal("want an error: bash_kill is taken")
	}
	if d := r.Declarations(); len(d) != 1 || d[0].Name != "bash_kill" {
		t.Errorf("after a failed Register: %v", d)
	}
	var clean tools.Registry
	unregister, err := set.Register(&clean)
	if err != nil {
		t.Fatal(err)
	}
	unregister()
	if d := clean.Declarations(); len(d) != 0 {
		t.Errorf("after unregister: %v", d)
	}
}

// FuzzBashArgs sends arbitrary argument bytes through the registered bash tools over a stub
// executor: no input may panic or hang, a failure is always an "Error: " result, and whatever
// reaches the executor is built from the declared fields only.
func FuzzBashArgs(f *testing.F) {
	for _, seed := range []string{
		`{"command":"ls","description":"d"}`, `{"command":"ls","description":"d","timeoutMs":-0}`,
		`{"command":"ls","description":"d","timeoutMs":1e-320}`, `{"command":" ","description":"d"}`,
		`{"command":"ls","description":"d","run_in_background":true,"env":{"A":"1"}}`, `{"task_id":"bash-1"}`,
		`{"task_id":""}`, `null`, `{"command":"ls","description":"d","workdir":"../../x"}`, `{"command":"\u0000","description":"\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		stub := newStub()
		h := newHarness(t, stub, Config{})
		agent := &tools.Agent{Owner: "o", Dir: "/session"}
		for _, tool := range []string{"bash", "bash_output", "bash_kill", "bash_tasks"} {
			res := h.reg.Execute(context.Background(), tools.Call{ID: "f", Name: tool, Args: args, Agent: agent})
			if res.IsError && !strings.HasPrefix(res.Text(), "Error: ") {
				t.Fatalf("%s: error text %q", tool, res.Text())
			}
			if !res.IsError && res.Text() == "" {
				t.Fatalf("%s: empty success for %q", tool, args)
			}
		}
		for _, req := range stub.requests {
			if !reflect.DeepEqual(req.Env, map[string]string{"DSH_SHELL": "oneshot", "DSH_HOME": "/session"}) || req.Stdin != nil || req.StdoutMaxBytes != 0 {
				t.Fatalf("request carries undeclared fields: %+v", req)
			}
			if strings.TrimSpace(req.Command) == "" || req.Timeout < 0 {
				t.Fatalf("request passed value checks: %+v", req)
			}
		}
	})
}

func TestRenderRunSandboxMarkers(t *testing.T) {
	one := 1
	res := bash.RunResult{ExitCode: &one, Stderr: bash.Output{Head: "bash: /etc/x: Permission denied\n"}, Sandbox: &bash.SandboxReport{
		Unenforced: []string{"signal and abstract Unix socket scoping (Landlock ABI 6)"},
		Denial:     "write outside the workspace denied: /etc/x",
	}}
	want := "[stderr]\nbash: /etc/x: Permission denied\n[exit code: 1]\n" +
		"[sandbox: not enforced: signal and abstract Unix socket scoping (Landlock ABI 6)]\n" +
		"[sandbox: write outside the workspace denied: /etc/x]"
	if got := renderRun(res, runFacts(res)); got != want {
		t.Errorf("renderRun =\n%s\nwant\n%s", got, want)
	}
}
