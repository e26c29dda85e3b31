//go:build linux

package proclimit

import (
	"math"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestParseStatus reads the real uid (the first of four) and the thread count.
func TestParseStatus(t *testing.T) {
	status := "Name:\tbash\nState:\tS (sleeping)\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\nThreads:\t7\n"
	uid, threads, ok := parseStatus([]byte(status))
	if !ok || uid != 1000 || threads != 7 {
		t.Errorf("parseStatus = %d, %d, %v; want 1000, 7, true", uid, threads, ok)
	}
	if _, _, ok := parseStatus([]byte("Name:\tx\nUid:\tabc\t0\t0\t0\n")); ok {
		t.Error("parseStatus accepted a status without a number of threads and with a bad uid")
	}
}

// TestApplyAndCount sets a child's limit and reads it back, and counts this process's own
// threads among its user's tasks.
func TestApplyAndCount(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if err := Apply(cmd.Process.Pid, 77); err != nil {
		t.Fatal(err)
	}
	var got unix.Rlimit
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_NPROC, nil, &got); err != nil {
		t.Fatal(err)
	}
	if got.Cur != 77 || got.Max != 77 {
		t.Errorf("RLIMIT_NPROC of the child = %d/%d, want 77/77", got.Cur, got.Max)
	}
	mine := 0
	if ents, err := os.ReadDir("/proc/self/task"); err == nil {
		mine = len(ents)
	}
	if n := UserTasks(os.Getuid()); n < mine+1 {
		t.Errorf("UserTasks = %d, fewer than this process's %d threads and its child", n, mine)
	}
	if !Reached(os.Getuid(), 2) {
		t.Error("Reached(uid, 2) is false with this process and its child running")
	}
	if Reached(os.Getuid(), math.MaxInt32) {
		t.Error("Reached(uid, MaxInt32) is true")
	}
}
