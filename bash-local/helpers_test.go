package bashlocal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/sandboxtest"
	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/escapetest"
	"github.com/dsh-go/dsh/internal/leaktest"
	"github.com/dsh-go/dsh/internal/proctree"
)

// TestMain checks, once every test has closed its executors, that no goroutine, file descriptor,
// child process or process carrying a tag of this test binary's executors is left behind.
func TestMain(m *testing.M) {
	sandboxtest.ProbeMain() // the escape suite's probe runs this binary
	escapetest.Helper()
	inheritedFDHelper()
	leaktest.Main(m, leaktest.Options{Tags: func() []string {
		return []string{envpolicy.TagVar + "=" + strconv.Itoa(os.Getpid()) + ".*"}
	}})
}

const testGrace = 200 * time.Millisecond

// leakMark is an environment entry a test passes to every command it runs: any process that still
// carries it after Close is a leak. It is found through /proc, independently of the executor's own
// bookkeeping (which uses its own tag).
const leakMarkVar = "BASHLOCAL_TEST_MARK"

type harness struct {
	t    *testing.T
	ex   *Executor
	mark string
	// closeErr is set by a test that expects Close to fail.
	closeErr bool
}

// newHarness returns an executor with a short grace and the test's settings, closed (and checked
// for leftover processes) when the test ends.
func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	if cfg.Grace == 0 {
		cfg.Grace = testGrace
	}
	if cfg.SpillDir == "" {
		cfg.SpillDir = t.TempDir()
	}
	ex, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	h := &harness{t: t, ex: ex, mark: hex.EncodeToString(rnd[:])}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ex.Close(ctx); err != nil && !h.closeErr {
			t.Errorf("Close: %v", err)
		}
		if left := h.survivors(); len(left) > 0 {
			t.Errorf("processes left after Close: %v", left)
			for _, p := range left {
				if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	})
	return h
}

// survivors lists live processes carrying this harness's mark.
func (h *harness) survivors() []string { return leaktest.Tagged(leakMarkVar + "=" + h.mark) }

// tagged lists live processes carrying an executor tag that starts with prefix.
func tagged(prefix string) []string { return leaktest.Tagged(envpolicy.TagVar + "=" + prefix + "-*") }

// req returns a request for command that carries the harness's leak mark.
func (h *harness) req(command string) bash.Request {
	return bash.Request{Command: command, Env: map[string]string{leakMarkVar: h.mark}}
}

func (h *harness) spec(r bash.Request) bash.Request {
	h.t.Helper()
	if r.Env == nil {
		r.Env = map[string]string{}
	}
	r.Env[leakMarkVar] = h.mark
	s, err := h.ex.Resolve(r)
	if err != nil {
		h.t.Fatalf("Resolve(%q): %v", r.Command, err)
	}
	return s
}

func (h *harness) run(r bash.Request) bash.RunResult {
	h.t.Helper()
	res, err := h.ex.Run(context.Background(), h.spec(r))
	if err != nil {
		h.t.Fatalf("Run(%q): %v", r.Command, err)
	}
	return res
}

func (h *harness) start(r bash.Request) *bash.Task {
	h.t.Helper()
	task, err := h.ex.Start(h.spec(r))
	if err != nil {
		h.t.Fatalf("Start(%q): %v", r.Command, err)
	}
	return task
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitDone(t *testing.T, task *bash.Task) {
	t.Helper()
	select {
	case <-task.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("task %s did not finish", task.ID())
	}
}

// pidFile returns a path in a fresh temp dir for a command to write a pid into, and a function
// that reads it back once it exists.
func pidFile(t *testing.T, name string) (string, func() int) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	return p, func() int {
		t.Helper()
		return escapetest.WaitPID(t, p)
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	st, ok := proctree.ReadStat(pid)
	return ok && !st.Dead()
}

func exitCode(r bash.RunResult) string { return fmtCode(r.ExitCode) }

// fmtCode renders an exit code of either shape's holder (RunResult, Task): "nil" or the number.
func fmtCode(code *int) string {
	if code == nil {
		return "nil"
	}
	return strconv.Itoa(*code)
}
