package proclimit

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCapFor checks the command limit against the harness's own: Reserve below a finite one,
// half of a small one, a request clamped to the ceiling, the default without a limit.
func TestCapFor(t *testing.T) {
	for _, c := range []struct {
		want int
		soft uint64
		cap  int
	}{
		{0, 4096, 4096 - Reserve},
		{100, 4096, 100},
		{5000, 4096, 4096 - Reserve},
		{0, 100, 50},
		{0, 1, 1},
		{0, math.MaxUint64, DefaultCap()},
		{123, math.MaxUint64, 123},
	} {
		if got := capFor(c.want, c.soft); got != c.cap {
			t.Errorf("capFor(%d, %d) = %d, want %d", c.want, c.soft, got, c.cap)
		}
	}
	if got, err := Cap(0); err != nil || got < 1 {
		t.Errorf("Cap(0) = %d, %v", got, err)
	}
	if DefaultCap() < 1 {
		t.Errorf("DefaultCap() = %d", DefaultCap())
	}
}

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
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
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
