package toolbash

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/internal/leaktest"
	"github.com/dsh-go/dsh/tools"
)

// TestMain checks, after every test has closed its executors, that no goroutine, descriptor or
// child process is left.
func TestMain(m *testing.M) { leaktest.Main(m, leaktest.Options{KeepGC: true}) }

// localExecutor returns a real local executor with a short grace period, closed when the test
// ends.
func localExecutor(t testing.TB, cfg bashlocal.Config) *bashlocal.Executor {
	t.Helper()
	if cfg.Grace == 0 {
		cfg.Grace = 300 * time.Millisecond
	}
	ex, err := bashlocal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ex.Close(ctx); err != nil {
			t.Errorf("close executor: %v", err)
		}
	})
	return ex
}

// harness is a registry with the bash tools over one executor.
type harness struct {
	t   testing.TB
	ex  bash.Executor
	set *Set
	reg *tools.Registry
}

func newHarness(t testing.TB, ex bash.Executor, cfg Config) *harness {
	t.Helper()
	set, err := New(ex, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := set.Close(ctx); err != nil {
			t.Errorf("close set: %v", err)
		}
	})
	h := &harness{t: t, ex: ex, set: set, reg: &tools.Registry{}}
	if _, err := set.Register(h.reg); err != nil {
		t.Fatal(err)
	}
	return h
}

func newLocalHarness(t testing.TB, cfg bashlocal.Config) *harness {
	t.Helper()
	return newHarness(t, localExecutor(t, cfg), Config{})
}

var callSeq struct {
	sync.Mutex
	n int
}

// call runs tool with args (a JSON string) for agent (nil: no agent).
func (h *harness) call(agent *tools.Agent, tool, args string) tools.Result {
	h.t.Helper()
	return h.callCtx(context.Background(), agent, tool, args)
}

func (h *harness) callCtx(ctx context.Context, agent *tools.Agent, tool, args string) tools.Result {
	h.t.Helper()
	callSeq.Lock()
	callSeq.n++
	id := "call-" + strconv.Itoa(callSeq.n)
	callSeq.Unlock()
	res := h.reg.Execute(ctx, tools.Call{ID: id, Name: tool, Args: json.RawMessage(args), Agent: agent})
	if res.CallID != id {
		h.t.Fatalf("result for %s has call id %q", id, res.CallID)
	}
	return res
}

// ok runs a call that must succeed and returns its text.
func (h *harness) ok(agent *tools.Agent, tool, args string) string {
	h.t.Helper()
	res := h.call(agent, tool, args)
	if res.IsError {
		h.t.Fatalf("%s %s: unexpected error %q", tool, args, res.Text())
	}
	return res.Text()
}

// fail runs a call that must fail and returns its text.
func (h *harness) fail(agent *tools.Agent, tool, args string) tools.Result {
	h.t.Helper()
	res := h.call(agent, tool, args)
	if !res.IsError {
		h.t.Fatalf("%s %s: want an error, got %q", tool, args, res.Text())
	}
	return res
}

// startBackground starts command in the background for agent and returns the task id.
func (h *harness) startBackground(agent *tools.Agent, command string) string {
	h.t.Helper()
	text := h.ok(agent, "bash", fmt.Sprintf(`{"command":%q,"description":"Run in background","run_in_background":true}`, command))
	id, ok := strings.CutPrefix(text, "started background task ")
	if !ok {
		h.t.Fatalf("background start: %q", text)
	}
	return id
}

// waitDone waits until task id has ended.
func (h *harness) waitDone(id string) {
	h.t.Helper()
	task, ok := h.ex.Get(bash.TaskID(id))
	if !ok {
		h.t.Fatalf("task %s unknown", id)
	}
	select {
	case <-task.Done():
	case <-time.After(20 * time.Second):
		h.t.Fatalf("task %s did not end", id)
	}
}

// session is a fake agent session that records the notices injected into it.
type session struct {
	mu      sync.Mutex
	agent   *tools.Agent
	notices []tools.Notice
	gone    bool
	fail    error
}

func newSession(owner, dir string) *session {
	s := &session{}
	s.agent = &tools.Agent{Owner: owner, Dir: dir, Inject: s.inject}
	return s
}

func (s *session) inject(n tools.Notice) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return fmt.Errorf("agent %s is disposed: %w", s.agent.Owner, tools.ErrAgentGone)
	}
	if s.fail != nil {
		return s.fail
	}
	s.notices = append(s.notices, n)
	return nil
}

func (s *session) got() []tools.Notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tools.Notice(nil), s.notices...)
}

// waitNotices polls until the session holds n notices and returns them.
func (s *session) waitNotices(t testing.TB, n int) []tools.Notice {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := s.got()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: %d notices after 20s, want %d: %v", s.agent.Owner, len(got), n, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pollOutput calls bash_output for agent until its text contains want, and returns every text
// read along the way, joined.
func (h *harness) pollOutput(agent *tools.Agent, id, want string) []string {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var reads []string
	for {
		text := h.ok(agent, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id))
		reads = append(reads, text)
		if strings.Contains(text, want) {
			return reads
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("bash_output %s never showed %q; reads: %q", id, want, reads)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
