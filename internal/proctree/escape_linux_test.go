//go:build linux

package proctree_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/escapetest"
	"github.com/dsh-go/dsh/internal/leaktest"
	"github.com/dsh-go/dsh/internal/proctree"
)

func TestMain(m *testing.M) {
	escapetest.Helper()
	leaktest.Main(m, leaktest.Options{})
}

// waitFor polls cond every 5 ms until it holds, failing t after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling, bounded by the deadline
	}
}

// escape runs script with bash (its $0 is the pid file it must fill, env is added to the
// environment), waits for the pid of the process it leaves behind, and returns it; that process
// is killed when the test ends, should a failed test leave it.
func escape(t *testing.T, env []string, script string) int {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pid")
	sh := exec.Command("bash", "-c", script, file)
	sh.Env = append(os.Environ(), env...)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("start the escapee: %v %s", err, out)
	}
	pid := escapetest.WaitPID(t, file)
	killOnCleanup(t, pid)
	return pid
}

// startOwned starts cmd through proctree.StartOwned and returns the release of its record.
func startOwned(t *testing.T, cmd *exec.Cmd) (release func()) {
	t.Helper()
	release, err := proctree.StartOwned(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return release
}

// killOnCleanup kills pid with SIGKILL when the test ends, should a failed test leave it.
func killOnCleanup(t *testing.T, pid int) {
	t.Cleanup(func() {
		if st, ok := proctree.ReadStat(pid); ok && !st.Dead() {
			proctree.Signal(st, syscall.SIGKILL)
		}
	})
}

func alive(pid int) bool {
	st, ok := proctree.ReadStat(pid)
	return ok && !st.Dead()
}

// stop stops tree with a short grace and fails t unless that ends within 10 s.
func stop(t *testing.T, tree proctree.Tree) {
	t.Helper()
	s := proctree.NewStopper(tree, proctree.StopOptions{Grace: 200 * time.Millisecond, Reap: true})
	s.Terminate()
	select {
	case <-s.Stopped():
	case <-time.After(10 * time.Second):
		t.Fatalf("stopping %+v did not end", tree)
	}
}

// TestLeaderExitedProcessIsFound checks that a process whose leader thread exited while another
// thread runs is alive, carries its tag (read from the live thread) and is stopped by its tag.
func TestLeaderExitedProcessIsFound(t *testing.T) {
	prog := escapetest.LeaderExit(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	tag := "PROCTREE_TEST_TAG=leader-exit-" + strconv.Itoa(os.Getpid())
	cmd := exec.Command(prog, pidFile)
	cmd.Env = append(os.Environ(), tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	release := startOwned(t, cmd)
	defer func() {
		cmd.Process.Kill() // a failed stop must not leave the test waiting forever
		cmd.Wait()
		release()
	}()
	pid := escapetest.WaitPID(t, pidFile)
	waitFor(t, "the leader thread to exit", func() bool {
		st, ok := proctree.ReadStat(pid)
		return ok && st.State == 'Z'
	})
	if st, _ := proctree.ReadStat(pid); st.Dead() || st.Threads < 2 {
		t.Errorf("stat %+v: a process with a live thread reads as dead", st)
	}
	if !proctree.HasTag(pid, tag, false) {
		t.Errorf("HasTag(%d, %q) = false: the live thread's environment was not read", pid, tag)
	}
	stop(t, proctree.Tree{Tag: tag})
	if alive(pid) {
		t.Errorf("process %d survived the stop of its tag", pid)
	}
}

// TestOrphansFindsHiddenEscapees checks, as a normal user, the rule of Tree.Orphans: a child of
// this process (a subreaper) in another session whose environment cannot be read is a member;
// an owned child and a readable child without the tag are not.
func TestOrphansFindsHiddenEscapees(t *testing.T) {
	if !escapetest.AsNobody(t) {
		return
	}
	if err := proctree.BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tag := "PROCTREE_TEST_TAG=orphans-" + strconv.Itoa(os.Getpid())

	// The escapee: the non-dumpable helper, double-forked into its own session, so that it is
	// re-parented here and nothing but its parentage says where it comes from.
	escapee := escape(t, append([]string{tag, "HELPER=" + self}, escapetest.UndumpableEnv("")...),
		`ESCAPETEST_PIDFILE="$0"; export ESCAPETEST_PIDFILE; ( setsid "$HELPER" </dev/null >/dev/null 2>&1 & )`)
	waitFor(t, "the escapee to be re-parented here", func() bool {
		st, ok := proctree.ReadStat(escapee)
		return ok && st.PPID == os.Getpid()
	})
	if proctree.HasTag(escapee, tag, false) {
		t.Fatal("the non-dumpable escapee's environment is readable: the test proves nothing")
	}

	// Two children that are not escapees: one owned, hidden the same way; one readable, untagged.
	ownedFile := filepath.Join(dir, "owned")
	owned := exec.Command(self)
	owned.Env = append(os.Environ(), escapetest.UndumpableEnv(ownedFile)...)
	owned.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	release := startOwned(t, owned)
	plain := exec.Command("sleep", "600")
	plain.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := plain.Start(); err != nil {
		t.Fatal(err)
	}
	escapetest.WaitPID(t, ownedFile)

	stop(t, proctree.Tree{Tag: tag, Orphans: true})
	if alive(escapee) {
		t.Errorf("the hidden escapee %d survived the orphan sweep", escapee)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(escapee)); err == nil {
		t.Errorf("the escapee %d was killed but not reaped", escapee)
	}
	if !alive(owned.Process.Pid) || !alive(plain.Process.Pid) {
		t.Errorf("the sweep killed a child that is no escapee: owned alive %v, untagged alive %v",
			alive(owned.Process.Pid), alive(plain.Process.Pid))
	}
	for _, c := range []*exec.Cmd{owned, plain} {
		c.Process.Kill()
		if _, err := c.Process.Wait(); err != nil {
			t.Errorf("wait for %d: %v (its exit status was stolen)", c.Process.Pid, err)
		}
	}
	release()
}

// TestDescendantsTakesEverythingBelow checks that Tree.Descendants stops every descendant of this
// process, including one in another session that carries no tag.
func TestDescendantsTakesEverythingBelow(t *testing.T) {
	if err := proctree.BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	pid := escape(t, nil, `( setsid env -i bash -c 'echo $$ > "$0"; exec sleep 600' "$0" </dev/null >/dev/null 2>&1 & )`)
	stop(t, proctree.Tree{Descendants: true})
	if alive(pid) {
		t.Errorf("descendant %d survived", pid)
	}
}

// TestSetDumpableHidesEnvironment checks, as a normal user, that a non-dumpable process's
// environment cannot be read by its own commands, and that it still reads theirs (execve makes
// them dumpable), so that a tag sweep still finds an escapee.
func TestSetDumpableHidesEnvironment(t *testing.T) {
	if !escapetest.AsNobody(t) {
		return
	}
	if err := proctree.SetDumpable(false); err != nil {
		t.Fatal(err)
	}
	if proctree.Dumpable() {
		t.Fatal("Dumpable() = true after SetDumpable(false)")
	}
	out, err := exec.Command("bash", "-c", `cat /proc/$PPID/environ`).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("a command read its harness's environment: err %v, output %q", err, out)
	}
	tag := "PROCTREE_TEST_TAG=dumpable-" + strconv.Itoa(os.Getpid())
	pid := escape(t, []string{tag}, `setsid bash -c 'echo $$ > "$0"; exec sleep 600' "$0" </dev/null >/dev/null 2>&1 &`)
	stop(t, proctree.Tree{Tag: tag})
	if alive(pid) {
		t.Errorf("escapee %d survived a non-dumpable harness's sweep", pid)
	}
}
