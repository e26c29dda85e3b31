//go:build linux

package bashlocal

import (
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/escapetest"
	"github.com/dsh-go/dsh/internal/proclimit"
)

// forkBomb is the classic one: each call starts two more in the background and returns.
const forkBomb = ":(){ :|:& };:"

// bombRoom is how many tasks the commands of TestForkBombIsBounded may have beyond what the user
// had when it began: the whole test is bounded by it and the harness's reserve, whose sum is above
// 2×Reserve, so that the commands' limit is the test's own less Reserve.
const bombRoom = 72

// TestForkBombIsBounded runs a fork bomb, in the foreground and as a background task, as an
// unprivileged user of its own (RLIMIT_NPROC does not bind root, and counts every task of the
// user) under a low RLIMIT_NPROC that this test process sets on itself first, so that the bomb
// can never take more than bombRoom+Reserve tasks of the machine, with or without the executor's
// limit. The executor, and this process, survive it: the result says [process limit reached], no
// process of the bomb is left when the call returns, and the next command forks freely. Without
// the commands' lower limit, the bomb takes the tasks this process needs for its threads.
func TestForkBombIsBounded(t *testing.T) {
	if !escapetest.AsUser(t, 60000+os.Getpid()%5000) {
		return
	}
	limit := proclimit.UserTasks(os.Getuid()) + proclimit.Reserve + bombRoom
	lim := unix.Rlimit{Cur: uint64(limit), Max: uint64(limit)}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		t.Fatalf("lower this test's own RLIMIT_NPROC to %d: %v", limit, err)
	}
	h := newHarness(t, Config{Limits: bash.Limits{Grace: time.Second, Timeout: time.Minute}})
	if want := limit - proclimit.Reserve; h.ex.nproc != want {
		t.Fatalf("the commands' limit is %d, want %d (this process's %d less the reserve)", h.ex.nproc, want, limit)
	}

	began := time.Now()
	res := h.run(bash.Request{Command: forkBomb})
	took := time.Since(began)
	if !res.ProcessLimit || res.TimedOut || res.Aborted {
		t.Errorf("fork bomb: ProcessLimit %v, TimedOut %v, Aborted %v; want the process limit alone\nstderr: %.300s",
			res.ProcessLimit, res.TimedOut, res.Aborted, res.Stderr.Text())
	}
	if left := tagged(h.ex.tag); len(left) > 0 {
		t.Errorf("processes of the bomb left after Run returned: %d, such as %v", len(left), left[0])
	}
	t.Logf("foreground bomb stopped after %v; %d bytes of stderr", took.Round(time.Millisecond), res.Stderr.TotalBytes)

	res = h.run(bash.Request{Command: "for i in 1 2 3 4 5 6 7 8; do /bin/true & done; wait; (echo ok)"})
	if got := res.Stdout.Text(); got != "ok\n" || exitCode(res) != "0" || res.ProcessLimit {
		t.Errorf("the command after the bomb: stdout %q, exit %s, ProcessLimit %v, stderr %q; want ok, 0, false",
			got, exitCode(res), res.ProcessLimit, res.Stderr.Text())
	}

	task := h.start(bash.Request{Command: forkBomb})
	waitDone(t, task)
	read, err := h.ex.ReadOutput(task.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(read.Delta, bash.ProcessLimitMarker+"\n") {
		t.Errorf("the background bomb's last read does not end with %s: ...%s", bash.ProcessLimitMarker, tail(read.Delta, 300))
	}
	if left := tagged(h.ex.tag); len(left) > 0 {
		t.Errorf("processes of the background bomb left after it ended: %d, such as %v", len(left), left[0])
	}
}

// tail returns the last n bytes of s at most.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }
