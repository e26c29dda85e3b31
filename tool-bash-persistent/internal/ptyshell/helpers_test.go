//go:build linux

package ptyshell

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Warm up what the runtime opens once per process (the poller's descriptors), so the
	// per-test descriptor count compares like with like.
	if p, t, err := pty.Open(); err == nil {
		p.Close()
		t.Close()
	}
	os.Exit(m.Run())
}

// testGrace keeps Close quick on processes that ignore SIGTERM.
const testGrace = 300 * time.Millisecond

var leakChecked sync.Map // *testing.T → true once checkLeaks ran for it

// checkLeaks registers a cleanup, run after every other cleanup of t, that fails t if a
// goroutine, a file descriptor or a process started during the test is left: a live or zombie
// child of the test process, or any process carrying a shell tag of this test process.
func checkLeaks(t *testing.T) {
	t.Helper()
	if _, dup := leakChecked.LoadOrStore(t, true); dup {
		return
	}
	t.Cleanup(func() { leakChecked.Delete(t) })
	fds := countFDs(t)
	t.Cleanup(func() {
		goleak.VerifyNone(t)
		deadline := time.Now().Add(5 * time.Second)
		for {
			left := leftovers()
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("processes left behind: %s", strings.Join(left, "; "))
				break
			}
			time.Sleep(10 * time.Millisecond) // polling for exits to settle, bounded by deadline
		}
		if n := countFDs(t); n > fds {
			t.Errorf("file descriptors: %d at start, %d at end", fds, n)
		}
	})
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("read /proc/self/fd: %v", err)
	}
	return len(ents)
}

// leftovers describes children of this process and processes tagged by its shells.
func leftovers() []string {
	var out []string
	if kids, ok := childrenOf(os.Getpid()); ok {
		for _, k := range kids {
			st, _ := readStat(k)
			out = append(out, "child "+strconv.Itoa(k)+" state "+string(st.state))
		}
	}
	prefix := TagVar + "=" + strconv.Itoa(os.Getpid()) + "-"
	for _, st := range allStats() {
		if st.pid == os.Getpid() || st.dead() {
			continue
		}
		data, err := os.ReadFile("/proc/" + strconv.Itoa(st.pid) + "/environ")
		if err != nil {
			continue
		}
		for _, e := range strings.Split(string(data), "\x00") {
			if strings.HasPrefix(e, prefix) {
				out = append(out, "tagged "+strconv.Itoa(st.pid)+" ppid "+strconv.Itoa(st.ppid))
				break
			}
		}
	}
	return out
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
	st, ok := readStat(pid)
	return ok && !st.dead()
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
