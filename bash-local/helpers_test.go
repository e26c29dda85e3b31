package bashlocal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-local/internal/proc"
)

// TestMain checks, once every test has closed its executors, that no goroutine and no file
// descriptor an executor opened is left behind.
func TestMain(m *testing.M) {
	// The runtime's poller opens its own descriptors on first use of a pipe; start it first.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	// A leaked *os.File is closed by its finalizer when the collector runs, which would hide the
	// leak from the descriptor count; keep the collector off unless benchmarks measure the heap.
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		debug.SetGCPercent(-1)
	}
	fds := openFDs()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
		if after := openFDs(); after > fds {
			fmt.Fprintf(os.Stderr, "leaked file descriptors: %d open before the tests, %d after: %v\n", fds, after, fdTargets())
			code = 1
		}
	}
	os.Exit(code)
}

// fdTargets lists what each open descriptor refers to, for the leak report.
func fdTargets() []string {
	entries, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range entries {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out = append(out, e.Name()+"->"+target)
	}
	return out
}

func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
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
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return h
}

// survivors lists live processes carrying this harness's mark.
func (h *harness) survivors() []int {
	var pids []int
	proc.Scan(func(st proc.Stat) bool {
		if !st.Dead() && proc.HasEnv(st.PID, leakMarkVar+"="+h.mark, false) {
			pids = append(pids, st.PID)
		}
		return true
	})
	return pids
}

// tagged lists live processes carrying an executor tag that starts with prefix.
func tagged(prefix string) []int {
	var pids []int
	proc.Scan(func(st proc.Stat) bool {
		if !st.Dead() && proc.HasEnv(st.PID, proc.TagVar+"="+prefix+"-", true) {
			pids = append(pids, st.PID)
		}
		return true
	})
	return pids
}

// req returns a request for command that carries the harness's leak mark.
func (h *harness) req(command string) bash.Request {
	return bash.Request{Command: command, Env: map[string]string{leakMarkVar: h.mark}}
}

func (h *harness) spec(r bash.Request) bash.Spec {
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
		var pid int
		waitFor(t, name+" to be written", func() bool {
			b, err := os.ReadFile(p)
			if err != nil || !strings.HasSuffix(string(b), "\n") {
				return false
			}
			pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil
		})
		return pid
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	st, ok := proc.ParseStat(string(b))
	return ok && !st.Dead()
}

func code(n int) *int { return &n }

func exitCode(r bash.RunResult) string {
	if r.ExitCode == nil {
		return "nil"
	}
	return strconv.Itoa(*r.ExitCode)
}
