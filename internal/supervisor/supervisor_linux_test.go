//go:build linux

package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/internal/escapetest"
	"github.com/dsh-go/dsh/internal/leaktest"
	"github.com/dsh-go/dsh/internal/proctree"
)

// programVar runs the test binary as a supervised program (see program) in the directory it
// names; modeVar says what the worker does.
const (
	programVar = "SUPERVISOR_TEST_DIR"
	modeVar    = "SUPERVISOR_TEST_MODE"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(programVar); dir != "" {
		program(dir, os.Getenv(modeVar))
	}
	// Orphans of the programs under test come here, where the tests see and reap them.
	if err := proctree.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	leaktest.Main(m, leaktest.Options{})
}

// program is a supervised program: under Main, the worker writes its pid to dir/worker, starts
// a child in its own session and group (dir/child) and a double-forked escapee in a session of
// its own (dir/escapee), then, by mode: "exit3" exits 3 at once, leaving them; "signal" waits for
// a forwarded signal, writes its name to dir/signal and exits 7; "wait" blocks, and dies of any
// signal that ends a Go program.
func program(dir, mode string) {
	if err := Main(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 1)
	if mode == "signal" {
		signal.Notify(sigs, forwarded()...)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text+"\n"), 0o644); err != nil {
			panic(err)
		}
	}
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		panic(err)
	}
	write("child", strconv.Itoa(child.Process.Pid))
	escape := exec.Command("bash", "-c", `( setsid bash -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 600' "$0" </dev/null >/dev/null 2>&1 & )`, filepath.Join(dir, "escapee"))
	if err := escape.Run(); err != nil {
		panic(err)
	}
	if !eventually(10*time.Second, func() bool { // the worker's exit must not race the escapee's start
		_, err := os.Stat(filepath.Join(dir, "escapee"))
		return err == nil
	}) {
		panic("the escapee wrote no pid")
	}
	write("worker", strconv.Itoa(os.Getpid()))
	switch mode {
	case "exit3":
		os.Exit(3)
	case "signal":
		sig := <-sigs
		write("signal", unix.SignalName(sig.(syscall.Signal)))
		os.Exit(7)
	}
	select {}
}

// started is a supervised program under test.
type started struct {
	t       *testing.T
	dir     string
	cmd     *exec.Cmd
	stderr  bytes.Buffer
	waited  chan struct{}
	workers []int // worker, child, escapee
}

func start(t *testing.T, mode string, env ...string) *started {
	t.Helper()
	p := &started{t: t, dir: t.TempDir(), waited: make(chan struct{})}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(self)
	p.cmd.Env = append(append(os.Environ(), programVar+"="+p.dir, modeVar+"="+mode), env...)
	p.cmd.Stderr = &p.stderr
	// Should this test binary die, the supervisor dies with it and the worker cleans up.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.waited)
	}()
	t.Cleanup(func() {
		for _, pid := range p.workers {
			if st, ok := proctree.ReadStat(pid); ok && !st.Dead() {
				proctree.Signal(st, syscall.SIGKILL)
			}
		}
		p.cmd.Process.Kill()
		<-p.waited
		reapOrphans()
	})
	return p
}

// pids waits for the program's worker, child and escapee to write their pids and returns them.
func (p *started) pids() (worker, child, escapee int) {
	p.t.Helper()
	read := func(name string) int { return escapetest.WaitPID(p.t, filepath.Join(p.dir, name)) }
	worker, child, escapee = read("worker"), read("child"), read("escapee")
	p.workers = []int{worker, child, escapee}
	return worker, child, escapee
}

// exit waits for the supervisor to exit and returns its wait status.
func (p *started) exit() syscall.WaitStatus {
	p.t.Helper()
	select {
	case <-p.waited:
	case <-time.After(10 * time.Second):
		p.t.Fatalf("the supervisor did not exit; stderr: %s", p.stderr.String())
	}
	return p.cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// allGoneWithin fails the test unless every process of pids is gone within d.
func allGoneWithin(t *testing.T, d time.Duration, pids ...int) {
	t.Helper()
	if !eventually(d, func() bool { return !slices.ContainsFunc(pids, alive) }) {
		t.Errorf("alive %v after the other side died: %v", d, slices.DeleteFunc(slices.Clone(pids), func(pid int) bool { return !alive(pid) }))
	}
}

func alive(pid int) bool {
	st, ok := proctree.ReadStat(pid)
	return ok && !st.Dead()
}

func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond) // polling, bounded by the deadline
	}
	return true
}

// reapOrphans reaps the dead children of the test process that the programs orphaned.
func reapOrphans() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// TestSupervisorKilled checks that when the supervisor, the process a client started, is
// killed with SIGKILL, the worker and everything it started (a child, an escapee in a session of
// its own) are gone within a second.
func TestSupervisorKilled(t *testing.T) {
	p := start(t, "wait")
	worker, child, escapee := p.pids()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.exit()
	allGoneWithin(t, time.Second, worker, child, escapee)
}

// TestWorkerKilled checks that when the worker dies of a signal (SIGKILL: an OOM kill; SIGTERM
// unhandled), the supervisor stops everything the worker started within a second and dies of the
// same signal.
func TestWorkerKilled(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			p := start(t, "wait")
			worker, child, escapee := p.pids()
			if err := syscall.Kill(worker, sig); err != nil {
				t.Fatal(err)
			}
			allGoneWithin(t, time.Second, child, escapee)
			if ws := p.exit(); !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("supervisor ended %v, want killed by %v like its worker", ws, sig)
			}
		})
	}
}

// TestWorkerExitStatus checks that the supervisor exits with its worker's status once it has
// stopped what the worker left.
func TestWorkerExitStatus(t *testing.T) {
	p := start(t, "exit3")
	_, child, escapee := p.pids()
	if ws := p.exit(); ws.ExitStatus() != 3 {
		t.Errorf("supervisor ended %v, want exit status 3; stderr: %s", ws, p.stderr.String())
	}
	allGoneWithin(t, 0, child, escapee)
}

// TestSignalsForwarded checks that every signal the supervisor forwards reaches the worker: each
// one is sent to the supervisor, which must neither die of it nor keep it.
func TestSignalsForwarded(t *testing.T) {
	for _, sig := range forwarded() {
		name := unix.SignalName(sig.(syscall.Signal))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := start(t, "signal")
			_, child, escapee := p.pids()
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if ws := p.exit(); ws.ExitStatus() != 7 {
				t.Fatalf("supervisor ended %v, want the worker's exit status 7; stderr: %s", ws, p.stderr.String())
			}
			if got, _ := os.ReadFile(filepath.Join(p.dir, "signal")); strings.TrimSpace(string(got)) != name {
				t.Errorf("the worker received %q, want %s", got, name)
			}
			allGoneWithin(t, 0, child, escapee)
		})
	}
}

// TestForgedMarker checks that a process whose environment names a supervisor that is not its
// parent refuses to run, rather than run without one.
func TestForgedMarker(t *testing.T) {
	for _, mark := range []string{"1:1", strconv.Itoa(os.Getpid()) + ":1", "garbage", ""} {
		p := start(t, "wait", markerVar+"="+mark)
		if ws := p.exit(); ws.ExitStatus() != 1 || !strings.Contains(p.stderr.String(), "supervisor: ") {
			t.Errorf("%s=%q: ended %v, stderr %q; want exit 1 and an error", markerVar, mark, ws, p.stderr.String())
		}
		if _, err := os.Stat(filepath.Join(p.dir, "worker")); err == nil {
			t.Errorf("%s=%q: the program ran", markerVar, mark)
		}
	}
}

// TestStartFailureIsAnError checks that a worker that cannot be started is an error naming the
// cause, not a program that goes on unsupervised.
func TestStartFailureIsAnError(t *testing.T) {
	err := supervise(filepath.Join(t.TempDir(), "missing"))
	if err == nil || !strings.Contains(err.Error(), "supervisor: start the worker") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("supervise(missing) = %v, want a start error wrapping ErrNotExist", err)
	}
}
