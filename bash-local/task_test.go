package bashlocal

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

func TestStartLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	a := h.start(h.req("exit 3"))
	b := h.start(h.req("true"))
	if a.ID() != "bash-1" || b.ID() != "bash-2" {
		t.Errorf("ids %s, %s; want bash-1, bash-2", a.ID(), b.ID())
	}
	if got, ok := h.ex.Get(a.ID()); !ok || got != a {
		t.Error("Get does not return the handle Start returned")
	}
	if l := h.ex.List(); len(l) != 2 || l[0] != a || l[1] != b {
		t.Errorf("List = %v; want [bash-1 bash-2]", l)
	}
	waitDone(t, a)
	if code := a.ExitCode(); a.Status() != bash.TaskCompleted || code == nil || *code != 3 || a.Signal() != "" {
		t.Errorf("finished task: status %s code %s signal %q; want completed 3", a.Status(), fmtCode(code), a.Signal())
	}
	if _, ok := h.ex.Get("bash-99"); ok {
		t.Error("Get of an unissued id succeeded")
	}
}

func TestStartStdinEnvAndOwner(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	owner := bash.OwnerToken("agent")
	r := h.req(`cat; echo "[$EXTRA]"`)
	r.Stdin = []byte("in:")
	r.Env["EXTRA"] = "x"
	r.Owner = owner
	task := h.start(r)
	waitDone(t, task)
	read, err := h.ex.ReadOutput(task.ID())
	if err != nil || read.Delta != "in:[x]\n" {
		t.Errorf("ReadOutput = %q, %v; want stdin and env to reach the task", read.Delta, err)
	}
	if tok, ok := h.ex.OwnerOf(task.ID()); !ok || tok != owner {
		t.Errorf("OwnerOf = %q, %v; want %q, present", tok, ok, owner)
	}
	plain := h.start(h.req("true"))
	if _, ok := h.ex.OwnerOf(plain.ID()); ok {
		t.Error("an ownerless task reports an owner")
	}
	if _, ok := h.ex.OwnerOf("bash-404"); ok {
		t.Error("an unknown task reports an owner")
	}
}

func TestReadOutputIncremental(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	gate := filepath.Join(t.TempDir(), "gate")
	task := h.start(h.req("echo first; while [ ! -e " + gate + " ]; do sleep 0.01; done; echo second"))
	var got string
	waitFor(t, "first output", func() bool {
		r, err := h.ex.ReadOutput(task.ID())
		if err != nil {
			t.Fatal(err)
		}
		if r.Lossy {
			t.Fatal("lossy read of a small stream")
		}
		got += r.Delta
		return got != ""
	})
	if got != "first\n" {
		t.Fatalf("first delta %q", got)
	}
	os.WriteFile(gate, nil, 0o600)
	waitDone(t, task)
	r, _ := h.ex.ReadOutput(task.ID())
	if r.Delta != "second\n" || r.Lossy {
		t.Errorf("after exit: %+v; want second, not lossy", r)
	}
	if r, _ = h.ex.ReadOutput(task.ID()); r.Delta != "" {
		t.Errorf("third read %q; want empty", r.Delta)
	}
}

func TestReadOutputMerge(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	for _, tc := range []struct{ command, want string }{
		{"echo out; echo err >&2", "out\n[stderr]\nerr\n"},
		{"echo err >&2", "[stderr]\nerr\n"},
		{"printf out; echo err >&2", "out\n[stderr]\nerr\n"},
		{"printf out", "out"},
	} {
		task := h.start(h.req(tc.command))
		waitDone(t, task)
		if r, _ := h.ex.ReadOutput(task.ID()); r.Delta != tc.want {
			t.Errorf("%q: delta %q, want %q", tc.command, r.Delta, tc.want)
		}
	}
}

func TestReadOutputLossy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Limits: bash.Limits{MaxOutputBytes: 100}})
	for _, stream := range []string{"", ">&2"} {
		task := h.start(h.req("seq 1 100 " + stream))
		waitDone(t, task)
		r, _ := h.ex.ReadOutput(task.ID())
		spill := r.StdoutSpill
		if stream != "" {
			spill = r.StderrSpill
			if !strings.HasPrefix(r.Delta, "[stderr]\n") {
				t.Errorf("stderr delta %q lacks its section", r.Delta)
			}
		}
		if !r.Lossy || r.OmittedBytes == 0 || spill.Path == "" {
			t.Errorf("%q: read %+v; want lossy with a spill path", stream, r)
		}
		if !strings.Contains(r.Delta, "\n100\n") && !strings.HasSuffix(r.Delta, "\n100\n") {
			t.Errorf("%q: the tail lost the last line: %q", stream, r.Delta)
		}
	}
}

func TestUnknownTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	_, err := h.ex.ReadOutput("nope")
	if !errors.Is(err, bash.ErrUnknownTask) || err.Error() != `unknown bash task "nope"` {
		t.Errorf("ReadOutput = %v", err)
	}
	if _, err := h.ex.Kill("nope"); !errors.Is(err, bash.ErrUnknownTask) {
		t.Errorf("Kill = %v", err)
	}
}

func TestKill(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	t.Run("sleep", func(t *testing.T) {
		t.Parallel()
		task := h.start(h.req("sleep 60"))
		ok, err := h.ex.Kill(task.ID())
		if !ok || err != nil || task.Status() != bash.TaskKilled {
			t.Fatalf("Kill = %v, %v, status %s; want true and killed at once", ok, err, task.Status())
		}
		if again, _ := h.ex.Kill(task.ID()); again {
			t.Error("second Kill returned true")
		}
		waitDone(t, task)
		if task.Signal() != "SIGTERM" || task.Status() != bash.TaskKilled {
			t.Errorf("signal %q status %s; want SIGTERM, killed", task.Signal(), task.Status())
		}
	})
	t.Run("TERM trapped", func(t *testing.T) {
		t.Parallel()
		task := h.start(h.req("trap '' TERM; echo armed; sleep 60"))
		waitFor(t, "armed", func() bool { r, _ := h.ex.ReadOutput(task.ID()); return r.Delta == "armed\n" })
		h.ex.Kill(task.ID())
		waitDone(t, task)
		if task.Signal() != "SIGKILL" || task.Status() != bash.TaskKilled {
			t.Errorf("signal %q status %s; want SIGKILL, killed", task.Signal(), task.Status())
		}
	})
	t.Run("TERM trapped then exit 0 stays killed", func(t *testing.T) {
		t.Parallel()
		task := h.start(h.req("trap 'exit 0' TERM; echo armed; sleep 60 & wait"))
		waitFor(t, "armed", func() bool { r, _ := h.ex.ReadOutput(task.ID()); return r.Delta == "armed\n" })
		h.ex.Kill(task.ID())
		waitDone(t, task)
		if code := task.ExitCode(); task.Status() != bash.TaskKilled || code == nil || *code != 0 {
			t.Errorf("status %s exit %s; want killed with exit 0", task.Status(), fmtCode(code))
		}
	})
	t.Run("finished task", func(t *testing.T) {
		t.Parallel()
		task := h.start(h.req("true"))
		waitDone(t, task)
		if ok, err := h.ex.Kill(task.ID()); ok || err != nil {
			t.Errorf("Kill of a finished task = %v, %v; want false", ok, err)
		}
		if task.Status() != bash.TaskCompleted {
			t.Errorf("status %s; want completed", task.Status())
		}
	})
	t.Run("self-signalled", func(t *testing.T) {
		t.Parallel()
		task := h.start(h.req("kill -TERM $$"))
		waitDone(t, task)
		if task.ExitCode() != nil || task.Signal() != "SIGTERM" || task.Status() != bash.TaskKilled {
			t.Errorf("status %s signal %q; want killed by SIGTERM with no exit code", task.Status(), task.Signal())
		}
	})
}

func TestStartSpawnFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	var calls []bash.TaskStatus
	var mu sync.Mutex
	h.ex.OnTaskDone(func(task *bash.Task) { mu.Lock(); calls = append(calls, task.Status()); mu.Unlock() })
	r := h.req("true")
	r.Workdir = filepath.Join(t.TempDir(), "missing")
	task := h.start(r)
	waitDone(t, task)
	if task.Status() != bash.TaskKilled {
		t.Errorf("status %s; want killed", task.Status())
	}
	mu.Lock()
	if len(calls) != 1 || calls[0] != bash.TaskKilled {
		t.Errorf("listener calls %v; want one with killed", calls)
	}
	mu.Unlock()
	rd, _ := h.ex.ReadOutput(task.ID())
	if !strings.HasPrefix(rd.Delta, "[stderr]\nspawn failed: ") || !strings.Contains(rd.Delta, "missing") {
		t.Errorf("delta %q; want the spawn failure in the stderr section", rd.Delta)
	}
	if rd, _ = h.ex.ReadOutput(task.ID()); rd.Delta != "" {
		t.Errorf("the spawn note was delivered twice: %q", rd.Delta)
	}
}

func TestListeners(t *testing.T) {
	t.Parallel()
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	h := newHarness(t, Config{Logger: slog.New(slog.NewTextHandler(lockedWriter{&logBuf, &logMu}, nil))})
	type call struct {
		who    string
		id     bash.TaskID
		status bash.TaskStatus
		done   bool
	}
	var mu sync.Mutex
	var calls []call
	record := func(who string) bash.TaskListener {
		return func(task *bash.Task) {
			done := false
			select {
			case <-task.Done():
				done = true
			default:
			}
			mu.Lock()
			calls = append(calls, call{who, task.ID(), task.Status(), done})
			mu.Unlock()
		}
	}
	h.ex.OnTaskDone(func(*bash.Task) { panic("listener bug") })
	h.ex.OnTaskDone(record("first"))
	h.ex.OnTaskDone(record("second"))
	removed := h.ex.OnTaskDone(record("removed"))
	removed()
	removed()

	ok := h.start(h.req("true"))
	waitDone(t, ok)
	killed := h.start(h.req("sleep 60"))
	h.ex.Kill(killed.ID())
	waitDone(t, killed)

	mu.Lock()
	got := append([]call(nil), calls...)
	mu.Unlock()
	want := []call{
		{"first", ok.ID(), bash.TaskCompleted, false}, {"second", ok.ID(), bash.TaskCompleted, false},
		{"first", killed.ID(), bash.TaskKilled, false}, {"second", killed.ID(), bash.TaskKilled, false},
	}
	if len(got) != len(want) {
		t.Fatalf("listener calls %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d = %+v; want %+v (Done must close after listeners)", i, got[i], want[i])
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Count(logBuf.String(), "listener bug") != 2 {
		t.Errorf("log %q; want the panic logged once per task", logBuf.String())
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func TestClose(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	var mu sync.Mutex
	var notified []bash.TaskID
	h.ex.OnTaskDone(func(task *bash.Task) { mu.Lock(); notified = append(notified, task.ID()); mu.Unlock() })
	finished := h.start(h.req("true"))
	waitDone(t, finished)
	pidPath, pid := pidFile(t, "trap")
	running := h.start(h.req("sleep 60"))
	trapping := h.start(h.req("trap '' TERM; echo $$ > " + pidPath + "; sleep 60"))
	trapPid := pid()
	if err := h.ex.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if finished.Status() != bash.TaskCompleted || running.Status() != bash.TaskKilled || trapping.Status() != bash.TaskKilled {
		t.Errorf("statuses %s/%s/%s; want completed/killed/killed", finished.Status(), running.Status(), trapping.Status())
	}
	if running.Signal() != "SIGTERM" || trapping.Signal() != "SIGKILL" {
		t.Errorf("signals %q/%q; want SIGTERM/SIGKILL", running.Signal(), trapping.Signal())
	}
	if alive(trapPid) {
		t.Error("Close returned before the TERM-trapping task was gone")
	}
	mu.Lock()
	if len(notified) != 1 || notified[0] != finished.ID() {
		t.Errorf("listeners saw %v; want only the task that finished before Close", notified)
	}
	mu.Unlock()
	if len(h.ex.List()) != 0 {
		t.Error("List not empty after Close")
	}
	if _, err := h.ex.Start(h.spec(h.req("true"))); !errors.Is(err, bash.ErrClosed) {
		t.Errorf("Start after Close = %v", err)
	}
	if _, err := h.ex.Run(context.Background(), h.spec(h.req("true"))); !errors.Is(err, bash.ErrClosed) {
		t.Errorf("Run after Close = %v", err)
	}
	if err := h.ex.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestCloseBoundedByContext(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Limits: bash.Limits{Grace: time.Minute}})
	h.closeErr = true
	pidPath, pid := pidFile(t, "p")
	h.start(h.req("trap '' TERM; echo $$ > " + pidPath + "; sleep 600"))
	p := pid()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := h.ex.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v; want the context's error", err)
	}
	if alive(p) {
		t.Error("Close returned with the process alive; an expired context must SIGKILL")
	}
}
