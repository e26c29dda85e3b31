package toolbash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

// TestToolsDescribeThemselves checks the title and the four hints every tool carries, which a
// harness shows without a table of its own.
func TestToolsDescribeThemselves(t *testing.T) {
	set, err := New(newStub(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(context.Background())
	want := []struct {
		name, title string
		hints       tools.Annotations
	}{
		{"bash", "Run a bash command", tools.Annotations{DestructiveHint: true, OpenWorldHint: true}},
		{"bash_output", "Read a background bash task's output", tools.Annotations{ReadOnlyHint: true}},
		{"bash_kill", "Kill a background bash task", tools.Annotations{DestructiveHint: true, IdempotentHint: true}},
	}
	got := set.Tools()
	if len(got) != len(want) {
		t.Fatalf("%d tools, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Title != w.title || g.Annotations == nil || *g.Annotations != w.hints {
			t.Errorf("tool %d: %q %q %+v, want %q %q %+v", i, g.Name, g.Title, g.Annotations, w.name, w.title, w.hints)
		}
	}
}

// waitFile waits until a command has created file (renamed into place, so it is complete) and
// returns its content.
func waitFile(t testing.TB, file string) []byte {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(file); err == nil {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", file)
		}
		time.Sleep(5 * time.Millisecond) // polling another process's work, bounded by deadline
	}
}

// sleeper starts, for agent (nil: no owner), a background task whose leader is a sleep, and
// returns its id and pid.
func (h *harness) sleeper(agent *tools.Agent) (string, int) {
	h.t.Helper()
	pidFile := filepath.Join(h.t.TempDir(), "pid")
	id := h.startBackground(agent, fmt.Sprintf("echo $$ > %s.tmp && mv %s.tmp %s; exec sleep 300", pidFile, pidFile, pidFile))
	b := waitFile(h.t, pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		h.t.Fatalf("pid file of %s: %q", id, b)
	}
	return id, pid
}

// processGone reports whether pid no longer exists (it has been reaped).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// status returns the status of task id in h's executor.
func (h *harness) status(id string) bash.TaskStatus {
	h.t.Helper()
	task, ok := h.ex.Get(bash.TaskID(id))
	if !ok {
		h.t.Fatalf("task %s unknown", id)
	}
	return task.Status()
}

// TestReleaseKillsOnlyThatOwner checks that Release stops every running task of one owner,
// waits until they have ended, sends that owner no notice, and leaves other owners' tasks and
// ownerless tasks running.
func TestReleaseKillsOnlyThatOwner(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	alice, bob := newSession("alice", ""), newSession("bob", "")
	a1, pidA1 := h.sleeper(alice.agent)
	a2, pidA2 := h.sleeper(alice.agent)
	b1, pidB1 := h.sleeper(bob.agent)
	open, pidOpen := h.sleeper(nil)
	finished := h.startBackground(alice.agent, "exit 7")
	h.waitDone(finished)
	alice.waitNotices(t, 1)

	if err := h.set.Release("alice"); err != nil {
		t.Fatalf("Release(alice): %v", err)
	}
	for _, task := range []struct {
		id  string
		pid int
	}{{a1, pidA1}, {a2, pidA2}} {
		if st := h.status(task.id); st != bash.TaskKilled {
			t.Errorf("alice's task %s is %s after Release, want killed", task.id, st)
		}
		if !processGone(task.pid) {
			t.Errorf("alice's task %s (pid %d) is still alive after Release returned", task.id, task.pid)
		}
	}
	if st := h.status(finished); st != bash.TaskCompleted {
		t.Errorf("alice's finished task is %s after Release, want still completed", st)
	}
	if n := len(alice.got()); n != 1 {
		t.Errorf("alice got %d notices, want only the one from before Release", n)
	}
	for _, id := range []string{b1, open} {
		if st := h.status(id); st != bash.TaskRunning {
			t.Errorf("task %s of another owner is %s after Release(alice), want running", id, st)
		}
	}
	for _, pid := range []int{pidB1, pidOpen} {
		if processGone(pid) {
			t.Errorf("pid %d of another owner died with Release(alice)", pid)
		}
	}
	for _, owner := range []string{"", "nobody", "alice"} {
		if err := h.set.Release(owner); err != nil {
			t.Errorf("Release(%q): %v", owner, err)
		}
	}
	if st := h.status(b1); st != bash.TaskRunning {
		t.Errorf("bob's task is %s after releasing owners with nothing running, want running", st)
	}
	// alice may come back: her next task starts as usual.
	again := h.startBackground(alice.agent, "true")
	h.waitDone(again)

	if err := h.set.Release("bob"); err != nil {
		t.Fatalf("Release(bob): %v", err)
	}
	if st := h.status(b1); st != bash.TaskKilled || !processGone(pidB1) {
		t.Errorf("bob's task is %s after Release(bob), want killed and gone", st)
	}
	if st := h.status(open); st != bash.TaskRunning {
		t.Errorf("the ownerless task is %s, want running: no owner releases it", st)
	}
}

// TestCloseStopsEverything checks that Close cancels a foreground call in flight, kills every
// running background task whoever owns it, refuses later calls and leaves the executor open.
func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	ex := localExecutor(t, bashlocal.Config{})
	h := newHarness(t, ex, Config{})
	alice := newSession("alice", "")
	owned, pidOwned := h.sleeper(alice.agent)
	open, pidOpen := h.sleeper(nil)

	marker := filepath.Join(t.TempDir(), "started")
	foreground := make(chan tools.Result, 1)
	go func() {
		foreground <- h.call(alice.agent, "bash", fmt.Sprintf(`{"command":"touch %s; sleep 300","description":"Wait"}`, marker))
	}()
	waitFile(t, marker)

	if err := h.set.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case res := <-foreground:
		if !res.IsError || res.Text() != "Error: tool call aborted" || res.Code != tools.CodeAborted || !errors.Is(res.Err, ErrClosed) {
			t.Errorf("foreground call in flight: %+v", res)
		}
	default:
		t.Error("Close returned before the call in flight")
	}
	for _, task := range []struct {
		id  string
		pid int
	}{{owned, pidOwned}, {open, pidOpen}} {
		if st := h.status(task.id); st != bash.TaskKilled || !processGone(task.pid) {
			t.Errorf("task %s is %s after Close (pid gone: %v), want killed and gone", task.id, st, processGone(task.pid))
		}
	}
	for _, tool := range []string{"bash", "bash_output", "bash_kill"} {
		args := fmt.Sprintf(`{"command":"true","description":"d","task_id":%q}`, owned)
		if res := h.call(alice.agent, tool, args); !res.IsError || res.Text() != "Error: the bash tools are closed" {
			t.Errorf("%s after Close: %q", tool, res.Text())
		}
	}
	if err := h.set.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// The executor is the caller's: still open.
	spec, err := ex.Resolve(bash.Request{Command: "echo open"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ex.Run(context.Background(), spec); err != nil || res.Stdout.Text() != "open\n" {
		t.Errorf("executor after the Set's Close: %+v, %v", res, err)
	}
}

// TestCloseBoundedByContext checks that Close returns ctx's error when a task outlives ctx by
// ignoring SIGTERM, and that the executor still finishes the kill.
func TestCloseBoundedByContext(t *testing.T) {
	t.Parallel()
	ex := localExecutor(t, bashlocal.Config{Limits: bash.Limits{Grace: time.Second}})
	set, err := New(ex, Config{}) // not newHarness: its cleanup wants a clean Close
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ex: ex, set: set, reg: &tools.Registry{}}
	if _, err := set.Register(h.reg); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	id := h.startBackground(nil, fmt.Sprintf("trap '' TERM; touch %s; while :; do sleep 0.05; done", ready))
	waitFile(t, ready) // the trap is set
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := h.set.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with a short context: %v, want the deadline", err)
	}
	h.waitDone(id) // SIGKILL after the executor's grace
	if st := h.status(id); st != bash.TaskKilled {
		t.Errorf("task is %s, want killed", st)
	}
}
