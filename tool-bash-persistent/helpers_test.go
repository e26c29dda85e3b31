//go:build linux

package persistentbash

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash/sandboxtest"

	"github.com/creack/pty"
	"github.com/dsh-go/dsh/internal/escapetest"
	"github.com/dsh-go/dsh/tool-bash-persistent/internal/ptyshell"
	"github.com/dsh-go/dsh/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	escapetest.Helper()     // the hidden escapee of TestCloseStopsHiddenEscapees is this binary
	sandboxtest.ProbeMain() // the escape suite's probe runs this binary
	// Open the runtime's poller descriptors once, so per-test descriptor counts compare alike.
	if p, t, err := pty.Open(); err == nil {
		p.Close()
		t.Close()
	}
	os.Exit(m.Run())
}

// harness is a Shells under test behind a registry, the way a harness calls it.
type harness struct {
	t     *testing.T
	s     *Shells
	reg   tools.Registry
	dir   string // the workspace
	calls atomic.Int64
}

// checkLeaks fails t, after every other cleanup, if a goroutine, a file descriptor or a process
// started during the test is left.
func checkLeaks(t *testing.T) {
	t.Helper()
	fds := countFDs(t)
	t.Cleanup(func() {
		goleak.VerifyNone(t)
		deadline := time.Now().Add(5 * time.Second)
		for left := leftovers(); len(left) > 0; left = leftovers() {
			if time.Now().After(deadline) {
				t.Errorf("processes left behind: %s", strings.Join(left, "; "))
				break
			}
			time.Sleep(10 * time.Millisecond) // polling for exits, bounded by deadline
		}
		if n := countFDs(t); n > fds {
			t.Errorf("file descriptors: %d at start, %d at end", fds, n)
		}
	})
}

// newHarness builds the tool with cfg (Workdir defaults to a temporary directory, KillGrace to
// a short grace), registers it, and at the end of the test closes it and checks that no
// goroutine, descriptor or process is left.
func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	checkLeaks(t)
	if cfg.Workdir == "" {
		cfg.Workdir = t.TempDir()
	}
	if cfg.KillGrace == 0 {
		cfg.KillGrace = 300 * time.Millisecond
	}
	if cfg.Env == nil {
		cfg.Env = map[string]string{"HOME": cfg.Workdir}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h := &harness{t: t, s: s, dir: cfg.Workdir}
	if _, err := h.reg.Register(s.Tool()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// callCtx runs command as owner (no agent when owner is "") and returns the result.
func (h *harness) callCtx(ctx context.Context, owner, dir, command string) tools.Result {
	h.t.Helper()
	args, _ := json.Marshal(Args{Command: command})
	call := tools.Call{ID: strconv.FormatInt(h.calls.Add(1), 10), Name: ToolName, Args: args}
	if owner != "" {
		call.Agent = &tools.Agent{Owner: owner, Dir: dir}
	}
	return h.reg.Execute(ctx, call)
}

// call runs command as owner with a 20-second bound.
func (h *harness) call(owner, command string) tools.Result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return h.callCtx(ctx, owner, "", command)
}

// expect runs command as owner and fails the test unless the result text is want.
func (h *harness) expect(owner, command, want string) {
	h.t.Helper()
	r := h.call(owner, command)
	if r.IsError || r.Text() != want {
		h.t.Fatalf("%s: %q → %q (error %v); want %q", owner, command, r.Text(), r.IsError, want)
	}
}

// notice returns the line, with its newline, that opens the first result after a reset for
// cause, the fresh shell started in the workspace.
func (h *harness) notice(cause string) string { return resetNotice(cause, h.dir) + "\n" }

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("read /proc/self/fd: %v", err)
	}
	return len(ents)
}

// leftovers lists children of the test process and processes carrying a shell tag of it.
func leftovers() []string {
	var out []string
	self := strconv.Itoa(os.Getpid())
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		data, _ := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		for _, k := range strings.Fields(string(data)) {
			out = append(out, "child "+k)
		}
	}
	prefix := ptyshell.TagVar + "=" + self + "-"
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if p.Name() == self || p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + p.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, e := range strings.Split(string(data), "\x00") {
			if strings.HasPrefix(e, prefix) {
				out = append(out, "tagged "+p.Name())
				break
			}
		}
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling an external process, bounded by deadline
	}
}

// waiting returns the number of calls of owner queued for their turn.
func (s *Shells) waiting(owner string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.owners[owner]; o != nil {
		return int(o.queued.Load())
	}
	return 0
}

// stubbornChild has owner's shell start a background process that ignores SIGTERM and SIGHUP,
// and returns its pid once it sleeps with its traps set.
func (h *harness) stubbornChild(owner string) string {
	h.t.Helper()
	pidFile := filepath.Join(h.dir, owner+"-stubborn.pid")
	if r := h.call(owner, "bash -c 'trap \"\" TERM HUP; echo $$ > "+pidFile+"; exec sleep 300' >/dev/null 2>&1 &"); r.IsError {
		h.t.Fatal(r.Text())
	}
	waitFor(h.t, "the stubborn child", func() bool {
		data, err := os.ReadFile(pidFile)
		return err == nil && strings.HasSuffix(string(data), "\n")
	})
	data, _ := os.ReadFile(pidFile)
	child := strings.TrimSpace(string(data))
	waitFor(h.t, "the child to exec sleep", func() bool {
		comm, _ := os.ReadFile("/proc/" + child + "/comm")
		return strings.TrimSpace(string(comm)) == "sleep"
	})
	return child
}
