package bashssh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-ssh/internal/sshdtest"
)

// newMark returns a word that names a test's remote processes (exec -a MARK …), so that ps over a
// second connection finds exactly them.
func newMark(t *testing.T) string {
	var b [6]byte
	rand.Read(b[:])
	return "bashssh-mark-" + hex.EncodeToString(b[:])
}

// tree returns a command whose processes all carry mark: a child left in the background, a
// descendant that leaves the process group (setsid), and the shell itself turned into a sleep.
// before runs first (a trap, say).
func tree(mark, before string) string {
	return before + "(exec -a " + mark + " sleep 600) & setsid -f bash -c 'exec -a " + mark + " sleep 600'; echo started; exec -a " + mark + " sleep 600"
}

// waitProcs polls the server (ps over a connection of the test's own) until exactly want processes
// carrying mark are alive, and fails t when that does not happen within 10 s.
func waitProcs(t *testing.T, s *sshdtest.Server, mark string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs, err := s.Processes(mark)
		if err != nil {
			t.Fatal(err)
		}
		if len(procs) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d remote processes carry %s, want %d:\n%s", len(procs), mark, want, strings.Join(procs, "\n"))
		}
		time.Sleep(20 * time.Millisecond) // polling the remote side
	}
}

func TestTimeoutStopsRemoteTree(t *testing.T) {
	s := sharedServer(t)
	ex := newExecutor(t, serverConfig(s))
	mark := newMark(t)
	res := mustRun(t, ex, bash.Request{Command: tree(mark, ""), Timeout: time.Second})
	if !res.TimedOut || res.Signal != "SIGTERM" || res.Stdout.Text() != "started\n" {
		t.Errorf("TimedOut %v, Signal %q, stdout %q; want a timeout, SIGTERM and %q", res.TimedOut, res.Signal, res.Stdout.Text(), "started\n")
	}
	waitProcs(t, s, mark, 0)
}

func TestKillStopsRemoteTree(t *testing.T) {
	s := sharedServer(t)
	ex := newExecutor(t, serverConfig(s))
	tests := []struct {
		name   string
		before string
		signal string
	}{
		{"TERM ends it", "", "SIGTERM"},
		{"TERM ignored: KILL after the grace", "trap '' TERM; ", "SIGKILL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark := newMark(t)
			spec, _ := ex.Resolve(bash.Request{Command: tree(mark, tt.before)})
			task, err := ex.Start(spec)
			if err != nil {
				t.Fatal(err)
			}
			waitProcs(t, s, mark, 3)
			begin := time.Now()
			if ok, err := ex.Kill(task.ID()); !ok || err != nil {
				t.Fatalf("Kill = %v, %v", ok, err)
			}
			select {
			case <-task.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the task did not end within 10 s of Kill")
			}
			took := time.Since(begin)
			if task.Status() != bash.TaskKilled || task.Signal() != tt.signal {
				t.Errorf("status %s, signal %q; want killed by %s", task.Status(), task.Signal(), tt.signal)
			}
			if tt.signal == "SIGKILL" && took < testGrace {
				t.Errorf("the task ended %v after Kill, before the %v grace period", took, testGrace)
			}
			waitProcs(t, s, mark, 0)
		})
	}
}

func TestCloseStopsEverything(t *testing.T) {
	s := sharedServer(t)
	ex, err := New(serverConfig(s))
	if err != nil {
		t.Fatal(err)
	}
	trackTags(ex)
	mark := newMark(t)
	spec, _ := ex.Resolve(bash.Request{Command: tree(mark, "trap '' TERM; ")})
	task, err := ex.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	// A foreground run returns once its shell has exited; what it left behind keeps running.
	res := mustRun(t, ex, bash.Request{Command: "(exec -a " + mark + " sleep 600) >/dev/null 2>&1 & setsid -f bash -c 'exec -a " + mark + " sleep 600' >/dev/null 2>&1; echo left"})
	if res.Stdout.Text() != "left\n" {
		t.Fatalf("stdout %q", res.Stdout.Text())
	}
	waitProcs(t, s, mark, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ex.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !isDone(task) || task.Status() != bash.TaskKilled {
		t.Errorf("after Close the task is %s (done %v), want killed and done", task.Status(), isDone(task))
	}
	// Close returned only once the remote side reported every process gone: no polling needed.
	procs, err := s.Processes(mark)
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 0 {
		t.Errorf("after Close, remote processes are left:\n%s", strings.Join(procs, "\n"))
	}
}

// TestReaper checks that the process groups of finished commands are forgotten once they are
// empty, kept while a leftover lives, and that a recorded group id that now belongs to someone else
// is never signalled.
func TestReaper(t *testing.T) {
	old := reapInterval
	reapInterval = 50 * time.Millisecond
	t.Cleanup(func() { reapInterval = old })
	s := sharedServer(t)
	ex := newExecutor(t, serverConfig(s))

	watched := func() int {
		ex.mu.Lock()
		defer ex.mu.Unlock()
		return len(ex.watch)
	}
	mustRun(t, ex, bash.Request{Command: "true"})
	deadline := time.Now().Add(10 * time.Second)
	for watched() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the group of a finished command is still watched after 10 s")
		}
		time.Sleep(10 * time.Millisecond) // polling the reaper
	}

	mark := newMark(t)
	mustRun(t, ex, bash.Request{Command: "(exec -a " + mark + " sleep 600) >/dev/null 2>&1 &"})
	waitProcs(t, s, mark, 1)
	before := ex.reaps.Load()
	for ex.reaps.Load() < before+3 {
		time.Sleep(10 * time.Millisecond) // polling the reaper
	}
	if watched() != 1 {
		t.Errorf("%d groups watched after three reaper rounds, want the one with a live leftover", watched())
	}

	// A process group on the same host that this executor did not start (as if its id had been
	// reused): put its id among the watched ones; Close must leave it alone.
	other := exec.Command("sleep", "600")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		other.Process.Kill()
		other.Wait()
	}()
	ex.mu.Lock()
	ex.watch[other.Process.Pid] = target{pgid: other.Process.Pid, tag: ex.tag + "-999999"}
	ex.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ex.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitProcs(t, s, mark, 0)
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(other.Process.Pid) + "/stat")
	if err != nil || strings.Contains(string(stat), ") Z ") {
		t.Errorf("Close signalled a process group it did not start (its stat: %q, %v)", stat, err)
	}
}

// isDone reports whether task t has ended (its Done channel is closed).
func isDone(t *bash.Task) bool {
	select {
	case <-t.Done():
		return true
	default:
		return false
	}
}
