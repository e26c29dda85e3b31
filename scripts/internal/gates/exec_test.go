//go:build linux

package gates

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// children returns the PIDs of this process's live children.
func children(t *testing.T) []int {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var out []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// checkNoChildren fails the test if any child process is left at the end.
func checkNoChildren(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if c := children(t); len(c) > 0 {
			t.Errorf("child processes left behind: %v", c)
		}
	})
}

// running reports whether pid is a live (not zombie) process.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// waitFor polls cond until it holds or the deadline passes.
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

func sh(id, script string) Gate {
	return Gate{ID: id, Args: []string{"sh", "-c", script}}
}

func replay(t *testing.T, r Result) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if r.Output == nil {
		t.Fatalf("no output kept for %s", r.Gate.ID)
	}
	if err := r.Output.Replay(&out, &errb); err != nil {
		t.Fatal(err)
	}
	r.Output.Close()
	return out.String(), errb.String()
}

func TestExecutorOutcomes(t *testing.T) {
	checkNoChildren(t)
	tests := []struct {
		name       string
		gate       Gate
		status     Status
		reason     string
		stdout     string
		stderrPart string
	}{
		{"pass keeps both streams", sh("ok", "echo out; echo err >&2"), Passed, "exit 0", "out\n", "err\n"},
		{"non-zero exit fails", sh("bad", "echo finding; exit 3"), Failed, "exit 3", "finding\n", ""},
		{"killed by SIGTERM", sh("term", "kill -TERM $$"), Failed, "signal SIGTERM", "", ""},
		{"environment added", Gate{ID: "env", Args: []string{"sh", "-c", `printf %s "$GATE_X"`}, Env: []string{"GATE_X=42"}}, Passed, "exit 0", "42", ""},
		{"working directory", Gate{ID: "dir", Args: []string{"pwd"}, Dir: "/"}, Passed, "exit 0", "/\n", ""},
		{"stdin is empty", sh("stdin", "cat; echo done"), Passed, "exit 0", "done\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ex Executor
			r := ex.Run(tt.gate)
			if r.Status != tt.status || r.Reason() != tt.reason {
				t.Errorf("status %v, reason %q; want %v, %q", r.Status, r.Reason(), tt.status, tt.reason)
			}
			out, errs := replay(t, r)
			if out != tt.stdout || !strings.Contains(errs, tt.stderrPart) {
				t.Errorf("stdout %q, stderr %q; want %q and one containing %q", out, errs, tt.stdout, tt.stderrPart)
			}
			if r.Duration <= 0 {
				t.Errorf("duration %v, want > 0", r.Duration)
			}
		})
	}
}

func TestExecutorStartFailure(t *testing.T) {
	var ex Executor
	for _, g := range []Gate{
		{ID: "missing", Args: []string{"no-such-command-dsh-test"}},
		{ID: "path", Path: "/nonexistent/bin", Args: []string{"x"}},
	} {
		r := ex.Run(g)
		if r.Status != Failed || !strings.HasPrefix(r.Reason(), "failed to start command: ") || r.ExitCode != -1 {
			t.Errorf("%s: status %v reason %q exit %d; want a start failure", g.ID, r.Status, r.Reason(), r.ExitCode)
		}
	}
}

func TestExecutorKillsWhatTheGateLeftBehind(t *testing.T) {
	checkNoChildren(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The background sleep keeps stdout open; without the group kill Run
	// would wait for it for the whole drain grace period.
	var ex Executor
	start := time.Now()
	r := ex.Run(sh("leaver", "sleep 300 & echo $! > "+pidFile+"; echo left"))
	if took := time.Since(start); took >= drainGrace {
		t.Errorf("Run took %v: it waited for the straggler's pipe instead of killing it", took)
	}
	if r.Status != Passed {
		t.Errorf("status %v (%s), want PASS", r.Status, r.Reason())
	}
	out, _ := replay(t, r)
	if out != "left\n" {
		t.Errorf("stdout %q", out)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitFor(t, "the background sleep to die", func() bool { return !running(pid) })
}

func TestExecutorForwardsSignals(t *testing.T) {
	checkNoChildren(t)
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	child := filepath.Join(dir, "child")
	var ex Executor
	done := make(chan Result)
	go func() {
		done <- ex.Run(sh("trapper", `trap 'echo got TERM; exit 7' TERM
sleep 300 & echo $! > `+child+`
touch `+ready+`
while :; do sleep 0.02; done`))
	}()
	waitFor(t, "the gate to be ready", func() bool { _, err := os.Stat(ready); return err == nil })
	ex.Signal(syscall.SIGTERM)
	r := <-done
	if r.ExitCode != 7 || r.Status != Failed {
		t.Errorf("exit %d status %v, want 7 and FAILED (the trap ran)", r.ExitCode, r.Status)
	}
	out, _ := replay(t, r)
	if !strings.Contains(out, "got TERM") {
		t.Errorf("stdout %q, want the trap's message", out)
	}
	b, _ := os.ReadFile(child)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitFor(t, "the gate's own child to die", func() bool { return !running(pid) })
}

func TestExecutorSignalReachesLateStarter(t *testing.T) {
	checkNoChildren(t)
	var ex Executor
	ex.Signal(syscall.SIGTERM)
	start := time.Now()
	r := ex.Run(sh("late", "sleep 30"))
	if r.Signal != "SIGTERM" || time.Since(start) > 10*time.Second {
		t.Errorf("signal %q after %v, want SIGTERM at once", r.Signal, time.Since(start))
	}
	replay(t, r)
}

func TestExecutorStreams(t *testing.T) {
	var out, errb bytes.Buffer
	ex := Executor{Stdout: &out, Stderr: &errb}
	g := sh("live", "echo live; echo warn >&2")
	g.Stream = true
	r := ex.Run(g)
	if r.Output != nil {
		t.Errorf("a streamed gate kept output")
	}
	if out.String() != "live\n" || errb.String() != "warn\n" {
		t.Errorf("streamed stdout %q stderr %q", out.String(), errb.String())
	}
}
