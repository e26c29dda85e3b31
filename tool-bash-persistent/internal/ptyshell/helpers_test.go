//go:build linux

package ptyshell

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/dsh-go/dsh/internal/leaktest"
	"github.com/dsh-go/dsh/internal/proctree"
)

func TestMain(m *testing.M) {
	// Warm up what the runtime opens once per process (the poller's descriptors), so the
	// per-test descriptor count compares like with like.
	if p, t, err := pty.Open(); err == nil {
		p.Close()
		t.Close()
	}
	leaktest.Main(m, leaktest.Options{KeepGC: true, Tags: shellTags})
}

// shellTags is the tag of every shell this test binary starts.
func shellTags() []string { return []string{TagVar + "=" + strconv.Itoa(os.Getpid()) + "-*"} }

// testGrace keeps Close quick on processes that ignore SIGTERM.
const testGrace = 300 * time.Millisecond

var leakChecked sync.Map // *testing.T → true once checkLeaks ran for it

// checkLeaks registers a cleanup, run after every other cleanup of t, that fails t if a
// goroutine, a file descriptor or a process started during the test is left: a child of the test
// process, or any process carrying a shell tag of this test process.
func checkLeaks(t *testing.T) {
	t.Helper()
	if _, dup := leakChecked.LoadOrStore(t, true); dup {
		return
	}
	t.Cleanup(func() { leakChecked.Delete(t) })
	leaktest.Check(t, shellTags()...)
}

// startShell starts a shell for t in a temporary directory with a test-sized budget and closes
// it at the end of the test; the first call in a test also checks leaks after every close.
func startShell(t *testing.T, cfg Config) *Shell {
	t.Helper()
	checkLeaks(t)
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.KillGrace == 0 {
		cfg.KillGrace = testGrace
	}
	if cfg.Env == nil {
		cfg.Env = append(os.Environ(), "HOME="+cfg.Dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// run runs command with a generous deadline and fails t on an error.
func run(t *testing.T, s *Shell, command string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := s.Run(ctx, command)
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	return r
}

// text returns the output as one string (head and tail joined).
func (o Output) text() string { return o.Head + o.Tail }

// mustComplete checks that r completed with status and output want.
func mustComplete(t *testing.T, r Result, status int, want string) {
	t.Helper()
	if r.Outcome != Completed || r.ExitCode != status || r.Output.text() != want {
		t.Fatalf("got %v status %d output %q; want completed status %d output %q", r.Outcome, r.ExitCode, r.Output.text(), status, want)
	}
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

// alive reports whether pid names a live (not zombie) process.
func alive(pid int) bool {
	st, ok := proctree.ReadStat(pid)
	return ok && !st.Dead()
}

func TestMasterIsPollable(t *testing.T) {
	checkLeaks(t)
	m, tty, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	defer m.Close()
	if err := m.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		t.Fatalf("master has no deadlines (blocking mode): %v", err)
	}
	buf := make([]byte, 8)
	if _, err := m.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with a passed deadline: %v", err)
	}
}
