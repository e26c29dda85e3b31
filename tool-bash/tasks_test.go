package toolbash

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

func TestBackgroundStartReturnsAtOnce(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	start := time.Now()
	first := h.startBackground(nil, "sleep 60")
	second := h.startBackground(nil, "sleep 60")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("two background starts took %v", took)
	}
	if first != "bash-1" || second != "bash-2" {
		t.Errorf("ids %q %q, want bash-1 bash-2", first, second)
	}
	for _, id := range []string{first, second} {
		if got := h.ok(nil, "bash_kill", fmt.Sprintf(`{"task_id":%q}`, id)); got != "killed background task "+id+" [status: killed by SIGTERM]" {
			t.Errorf("kill %s: %q", id, got)
		}
	}
}

func TestBackgroundOutputIsIncremental(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	gate := filepath.Join(t.TempDir(), "gate")
	id := h.startBackground(nil, fmt.Sprintf("echo first; while [ ! -e %s ]; do sleep 0.01; done; echo second", gate))
	reads := h.pollOutput(nil, id, "first")
	if last := reads[len(reads)-1]; last != "first\n\n[status: running]" {
		t.Errorf("first read %q", last)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.waitDone(id)
	if got := h.ok(nil, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id)); got != "second\n\n[status: completed, exit code: 0]" {
		t.Errorf("second read %q", got)
	}
	if got := h.ok(nil, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id)); got != "(no new output)\n[status: completed, exit code: 0]" {
		t.Errorf("third read %q", got)
	}
}

func TestBackgroundExitCodeAndStderr(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	id := h.startBackground(nil, "printf out; echo err >&2; exit 4")
	h.waitDone(id)
	if got := h.ok(nil, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id)); got != "out\n[stderr]\nerr\n\n[status: completed, exit code: 4]" {
		t.Errorf("got %q", got)
	}
}

func TestBackgroundHasNoTimeout(t *testing.T) {
	t.Parallel()
	// The executor's default timeout is 100 ms here; a background task must outlive it.
	h := newLocalHarness(t, bashlocal.Config{Limits: bash.Limits{Timeout: 100 * time.Millisecond, MaxTimeout: 100 * time.Millisecond}})
	gate := filepath.Join(t.TempDir(), "gate")
	id := h.startBackground(nil, fmt.Sprintf("while [ ! -e %s ]; do sleep 0.01; done; echo survived", gate))
	// A foreground sleep of three times the timeout proves time has passed.
	if got := h.ok(nil, "bash", `{"command":"sleep 1","description":"Wait"}`); !strings.Contains(got, "[timed out after 100ms]") {
		t.Fatalf("foreground: %q", got)
	}
	if got := h.ok(nil, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id)); got != "(no new output)\n[status: running]" {
		t.Errorf("after the default timeout: %q", got)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.pollOutput(nil, id, "survived")
}

func TestKill(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	id := h.startBackground(nil, "sleep 60")
	args := fmt.Sprintf(`{"task_id":%q}`, id)
	if got := h.ok(nil, "bash_kill", args); got != "killed background task "+id+" [status: killed by SIGTERM]" {
		t.Errorf("first kill %q", got)
	}
	if got := h.ok(nil, "bash_kill", args); got != "task "+id+" had already finished" {
		t.Errorf("second kill %q", got)
	}
	h.waitDone(id)
	if got := h.ok(nil, "bash_output", args); got != "(no new output)\n[status: killed by SIGTERM]" {
		t.Errorf("output after kill %q", got)
	}
	done := h.startBackground(nil, "true")
	h.waitDone(done)
	if got := h.ok(nil, "bash_kill", fmt.Sprintf(`{"task_id":%q}`, done)); got != "task "+done+" had already finished" {
		t.Errorf("kill of a finished task %q", got)
	}
}

func TestLossyReadNamesSpillFile(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{Limits: bash.Limits{MaxOutputBytes: 100, HeadBytes: 10}})
	id := h.startBackground(nil, "seq 1 2000")
	h.waitDone(id)
	got := h.ok(nil, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id))
	re := regexp.MustCompile(`(?s)^(.*)\n\[some output was dropped from memory; full output: (/\S+)\]\n\[status: completed, exit code: 0\]$`)
	m := re.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("lossy read %q", got)
	}
	if !strings.HasSuffix(m[1], "1999\n2000\n") {
		t.Errorf("delta does not end with the last lines: %q", m[1])
	}
	spill, err := os.ReadFile(m[2])
	if err != nil {
		t.Fatal(err)
	}
	if want := seq(2000); string(spill) != want {
		t.Errorf("spill file holds %d bytes, want the whole %d-byte stream", len(spill), len(want))
	}
}

func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func TestOwnership(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	alice, bob := newSession("alice", ""), newSession("bob", "")
	id := h.startBackground(alice.agent, "echo owned; sleep 60")
	args := fmt.Sprintf(`{"task_id":%q}`, id)
	want := "Error: task " + id + " belongs to another session"
	for _, who := range []struct {
		name  string
		agent *tools.Agent
	}{{"another agent", bob.agent}, {"no agent", nil}, {"agent without owner", &tools.Agent{}}} {
		for _, tool := range []string{"bash_output", "bash_kill"} {
			if res := h.fail(who.agent, tool, args); res.Text() != want {
				t.Errorf("%s %s: %q, want %q", who.name, tool, res.Text(), want)
			}
		}
	}
	task, _ := h.ex.Get(bash.TaskID(id))
	if task.Status() != bash.TaskRunning {
		t.Errorf("task status after refused kills: %s", task.Status())
	}
	// The token decides, not the Agent value: a new Agent of the same session may read.
	again := &tools.Agent{Owner: "alice"}
	h.pollOutput(again, id, "owned")
	if got := h.ok(alice.agent, "bash_kill", args); got != "killed background task "+id+" [status: killed by SIGTERM]" {
		t.Errorf("owner kill %q", got)
	}
	h.waitDone(id)
	// Ownership persists after completion.
	if res := h.fail(bob.agent, "bash_output", args); res.Text() != want {
		t.Errorf("after completion: %q", res.Text())
	}
	// Ownerless tasks are open to everyone, before and after completion.
	open := h.startBackground(nil, "echo open")
	h.waitDone(open)
	if got := h.ok(bob.agent, "bash_output", fmt.Sprintf(`{"task_id":%q}`, open)); got != "open\n\n[status: completed, exit code: 0]" {
		t.Errorf("ownerless task read by bob: %q", got)
	}
	if got := h.ok(alice.agent, "bash_kill", fmt.Sprintf(`{"task_id":%q}`, open)); got != "task "+open+" had already finished" {
		t.Errorf("ownerless task killed by alice: %q", got)
	}
}

func TestOwnershipSurvivesToolReload(t *testing.T) {
	t.Parallel()
	ex := localExecutor(t, bashlocal.Config{})
	first := newHarness(t, ex, Config{})
	alice := newSession("alice", "")
	id := first.startBackground(alice.agent, "sleep 60")
	first.set.Detach()
	// A fresh tool set over the same executor: the owner is stored on the task, not in the set.
	second := newHarness(t, ex, Config{})
	args := fmt.Sprintf(`{"task_id":%q}`, id)
	if res := second.fail(newSession("bob", "").agent, "bash_kill", args); res.Text() != "Error: task "+id+" belongs to another session" {
		t.Errorf("bob after reload: %q", res.Text())
	}
	if got := second.ok(alice.agent, "bash_kill", args); got != "killed background task "+id+" [status: killed by SIGTERM]" {
		t.Errorf("alice after reload: %q", got)
	}
}

func TestCompletionNotices(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	alice := newSession("alice", "")
	done := h.startBackground(alice.agent, "exit 5")
	killed := h.startBackground(alice.agent, "sleep 60")
	open := h.startBackground(nil, "true")
	h.waitDone(done)
	h.waitDone(open)
	h.ok(alice.agent, "bash_kill", fmt.Sprintf(`{"task_id":%q}`, killed))
	h.waitDone(killed)
	got := alice.waitNotices(t, 2)
	type notice struct {
		Source, Text string
		Stale        bool
	}
	want := []notice{
		{"tool-bash", "background bash task " + done + " finished [status: completed, exit code: 5]. Read its output with bash_output.", false},
		// The kill's result showed the task killed: its notice tells nothing new.
		{"tool-bash", "background bash task " + killed + " finished [status: killed by SIGTERM]. Read its output with bash_output.", true},
	}
	if len(got) != 2 {
		t.Fatalf("%d notices, want %+v", len(got), want)
	}
	for i, n := range got {
		if g := (notice{n.Source, n.Text, n.Stale != nil && n.Stale()}); g != want[i] {
			t.Errorf("notice %d\n got %+v\nwant %+v", i, g, want[i])
		}
	}
	// Exactly once, and none for the ownerless task: every task has ended, its listeners ran.
	if n := len(alice.got()); n != 2 {
		t.Errorf("%d notices, want 2", n)
	}
}

// TestNoticeStaleOnceRead: a completion notice goes stale when a bash_output result has shown the
// task ended, whether the read came before the notice was injected or after, and not before.
func TestNoticeStaleOnceRead(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	alice := newSession("alice", "")
	read := h.startBackground(alice.agent, "echo hi; exit 3")
	h.pollOutput(alice.agent, read, "[status: completed, exit code: 3]")
	unread := h.startBackground(alice.agent, "exit 4")
	h.waitDone(unread)
	got := alice.waitNotices(t, 2)
	stale := map[string]bool{}
	for _, n := range got {
		if n.Stale == nil {
			t.Fatalf("notice %q has no Stale", n.Text)
		}
		stale[n.Text] = n.Stale()
	}
	readText := "background bash task " + read + " finished [status: completed, exit code: 3]. Read its output with bash_output."
	unreadText := "background bash task " + unread + " finished [status: completed, exit code: 4]. Read its output with bash_output."
	if s, ok := stale[readText]; !ok || !s {
		t.Errorf("the notice of the task read to its end: stale %v (present %v), want stale", s, ok)
	}
	if s, ok := stale[unreadText]; !ok || s {
		t.Errorf("the notice of the unread task: stale %v (present %v), want fresh", s, ok)
	}
	// A read of the unread task while it is running would not count; this one shows it ended.
	h.ok(alice.agent, "bash_output", fmt.Sprintf(`{"task_id":%q}`, unread))
	for _, n := range got {
		if n.Text == unreadText && !n.Stale() {
			t.Errorf("the notice of %s is still fresh after bash_output showed it completed", unread)
		}
	}
}

func TestCompletionNoticeFailures(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	ex := localExecutor(t, bashlocal.Config{})
	h := newHarness(t, ex, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	gone := newSession("gone", "")
	gone.gone = true
	id := h.startBackground(gone.agent, "true")
	h.waitDone(id)

	broken := newSession("broken", "")
	broken.fail = errors.New("session store unavailable")
	id2 := h.startBackground(broken.agent, "true")
	h.waitDone(id2)

	// The task still completed normally in both cases.
	for _, id := range []string{id, id2} {
		task, _ := ex.Get(bash.TaskID(id))
		if code := task.ExitCode(); task.Status() != bash.TaskCompleted || code == nil || *code != 0 {
			t.Errorf("task %s: %s", id, task.Status())
		}
	}
	if strings.Contains(logs.String(), "gone") {
		t.Errorf("a gone agent was logged: %s", logs.String())
	}
	if !strings.Contains(logs.String(), "session store unavailable") || !strings.Contains(logs.String(), id2) {
		t.Errorf("an injection failure was not logged: %q", logs.String())
	}
}

func TestCompletionNoticeUsesAgentLookup(t *testing.T) {
	t.Parallel()
	ex := localExecutor(t, bashlocal.Config{})
	live := newSession("alice", "")
	h := newHarness(t, ex, Config{Agents: func(owner string) (*tools.Agent, bool) {
		if owner == "alice" {
			return live.agent, true
		}
		return nil, false // owner missing from the registry: the notice is dropped
	}})
	// The call comes from an Agent value that cannot take notices; the lookup finds the live one.
	caller := &tools.Agent{Owner: "alice", Inject: func(tools.Notice) error { return errors.New("stale agent used") }}
	id := h.startBackground(caller, "true")
	h.waitDone(id)
	if got := live.waitNotices(t, 1); !strings.HasPrefix(got[0].Text, "background bash task "+id+" finished") {
		t.Errorf("notice %q", got[0].Text)
	}
	carol := newSession("carol", "")
	unknown := h.startBackground(carol.agent, "true")
	h.waitDone(unknown)
	if n := len(carol.got()) + len(live.got()); n != 1 {
		t.Errorf("an owner missing from the lookup got a notice (%d notices in all, want 1)", n)
	}
}

func TestDetachStopsNotices(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	alice := newSession("alice", "")
	id := h.startBackground(alice.agent, "true")
	h.waitDone(id)
	alice.waitNotices(t, 1)
	h.set.Detach()
	h.set.Detach() // idempotent
	id = h.startBackground(alice.agent, "true")
	h.waitDone(id)
	if n := len(alice.got()); n != 1 {
		t.Errorf("%d notices after Detach, want 1", n)
	}
}

// TestKillReturnsOnceGone kills background tasks one by one, each with a child in its group, and
// looks once, right after each bash_kill returns, for the task's processes: none may be alive
// (the attack round found a sleep alive after the last of 1,000 kills).
func TestKillReturnsOnceGone(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	const n = 20
	ids, pids := make([]string, n), make([][2]int, n)
	for i := range n {
		ids[i] = h.startBackground(nil, "sleep 60 & echo $$ $!; wait")
	}
	for i, id := range ids {
		reads := h.pollOutput(nil, id, "\n[status: running]") // "PID PID\n" or "(no new output)\n"
		for _, r := range reads {
			fmt.Sscan(r, &pids[i][0], &pids[i][1])
		}
		for pids[i][1] == 0 { // the pids are not printed yet
			reads = h.pollOutput(nil, id, "\n[status: running]")
			fmt.Sscan(reads[len(reads)-1], &pids[i][0], &pids[i][1])
		}
	}
	for i, id := range ids {
		if got, want := h.ok(nil, "bash_kill", fmt.Sprintf(`{"task_id":%q}`, id)), "killed background task "+id+" [status: killed by SIGTERM]"; got != want {
			t.Errorf("bash_kill %s = %q, want %q", id, got, want)
		}
		for _, pid := range pids[i] {
			if running(pid) {
				t.Errorf("task %s: process %d alive when bash_kill returned", id, pid)
			}
		}
	}
}

// running reports whether process pid exists and is not a zombie, from /proc/PID/stat.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, ok := bytes.Cut(b[bytes.LastIndexByte(b, ')')+1:], []byte(" "))
	return ok && len(after) > 0 && after[0] != 'Z' && after[0] != 'X'
}
