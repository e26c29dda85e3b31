// Package escapetest gives the tests of this repository the escapees that hide from a
// process-tree sweep, and a way to run a test as an unprivileged user, where root would read
// what they hide. It is for tests only.
//
//   - A non-dumpable process: the test binary itself, re-executed in a helper mode (Helper) that
//     calls prctl(PR_SET_DUMPABLE, 0) and sleeps; to a normal user its environment, and so its
//     tag, is unreadable.
//   - A process whose leader thread exited: a small C program (LeaderExit, built with gcc) whose
//     main calls pthread_exit while another thread sleeps; /proc/PID/environ reads ESRCH while
//     /proc/PID/task/TID/environ still holds the tag.
//
// A test binary that uses them calls Helper first in its TestMain.
package escapetest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctree"
)

// Environment of the helper mode.
const (
	helperVar  = "ESCAPETEST_HELPER"  // "undumpable": run as the non-dumpable sleeper
	pidFileVar = "ESCAPETEST_PIDFILE" // where the helper writes its pid once hidden
	nobodyVar  = "ESCAPETEST_NOBODY"  // set in a test binary re-run by AsNobody or AsUser
)

// NobodyUID is the user a test runs as under AsNobody: nobody on Debian and most Linux systems.
const NobodyUID = 65534

// Helper runs the helper mode when this process was started as one, and returns otherwise. Call
// it first in TestMain. In the "undumpable" mode the process makes itself non-dumpable, writes
// its pid and a newline to $ESCAPETEST_PIDFILE, and sleeps until it is killed.
func Helper() {
	if os.Getenv(helperVar) != "undumpable" {
		return
	}
	if err := proctree.SetDumpable(false); err != nil {
		os.Stderr.WriteString("escapetest: " + err.Error() + "\n")
		os.Exit(3)
	}
	if f := os.Getenv(pidFileVar); f != "" {
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			os.Stderr.WriteString("escapetest: " + err.Error() + "\n")
			os.Exit(3)
		}
	}
	for {
		time.Sleep(time.Hour)
	}
}

// WaitPID waits (up to 10 s) for file to hold a pid and a newline, and returns the pid; it fails
// t when none comes.
func WaitPID(t testing.TB, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(b), "\n") {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds no pid after 10s", file)
		}
		time.Sleep(5 * time.Millisecond) // polling, bounded by the deadline
	}
}

// UndumpableEnv returns the environment entries that make the test binary (os.Executable) start
// as the non-dumpable sleeper writing its pid to pidFile; a shell command starts it with
// `env ENTRIES... "$EXE"` or with the entries in its own environment.
func UndumpableEnv(pidFile string) []string {
	return []string{helperVar + "=undumpable", pidFileVar + "=" + pidFile}
}

// leaderExitC is the process whose leader thread exits: it writes its pid to argv[1], then main
// calls pthread_exit while a second thread sleeps forever.
const leaderExitC = `#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *sleeper(void *arg) { for (;;) pause(); return arg; }

int main(int argc, char **argv) {
	pthread_t t;
	if (argc != 2 || pthread_create(&t, 0, sleeper, 0) != 0) return 2;
	FILE *f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f) != 0) return 3;
	pthread_exit(0);
}
`

// LeaderExit builds the leader-exit program with gcc into a directory every user may read and
// returns its path; usage: PATH PIDFILE. It fails t when gcc is missing (./test installs gcc and
// libc6-dev) or the build fails. The directory is removed when the test ends.
func LeaderExit(t testing.TB) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("escapetest: gcc is needed to build a process whose leader thread exits (./test installs gcc and libc6-dev): %v", err)
	}
	dir := PublicDir(t)
	src := filepath.Join(dir, "leaderexit.c")
	bin := filepath.Join(dir, "leaderexit")
	if err := os.WriteFile(src, []byte(leaderExitC), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gcc, "-O2", "-pthread", "-o", bin, src).CombinedOutput()
	if err != nil {
		t.Fatalf("escapetest: gcc: %v\n%s", err, out)
	}
	return bin
}

// PublicDir returns a new directory under /tmp that every user may read, enter and write (mode
// 01777, like /tmp), removed when the test ends: a test that runs commands as nobody keeps its
// files there.
func PublicDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "escapetest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Rerun reports whether this test binary is a re-run that AsNobody or AsUser started.
func Rerun() bool { return os.Getenv(nobodyVar) != "" }

// AsNobody reports whether the calling test should run its body in this process. As a normal
// user it returns true. As root, which reads every process's environment and would hide the
// failures under test, it re-runs this one test in a copy of the test binary as uid NobodyUID
// (in /tmp, with TMPDIR=/tmp), reports that run's output, fails t when the run fails, and
// returns false. Linux only: elsewhere it returns true.
func AsNobody(t *testing.T) bool {
	t.Helper()
	return AsUser(t, NobodyUID)
}

// AsUser is AsNobody with uid (and the group of the same number) in place of nobody: a test
// that counts or limits its user's processes (RLIMIT_NPROC counts every task of a real user)
// takes a uid no other process uses.
func AsUser(t *testing.T, uid int) bool {
	t.Helper()
	if os.Geteuid() != 0 || runtime.GOOS != "linux" {
		return true
	}
	if os.Getenv(nobodyVar) != "" {
		t.Fatal("escapetest: a test binary re-run as an unprivileged user is still root")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := PublicDir(t)
	exe := filepath.Join(dir, filepath.Base(self))
	if err := copyFile(self, exe); err != nil {
		t.Fatal(err)
	}
	var pattern []string
	for part := range strings.SplitSeq(t.Name(), "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.Command(exe, "-test.run="+strings.Join(pattern, "/"), "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "HOME="+dir, nobodyVar+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		t.Errorf("as uid %d: %v\n%s", uid, err, out.String())
	case err != nil:
		t.Fatalf("run the test as uid %d: %v", uid, err)
	case !strings.Contains(out.String(), "--- PASS: "+t.Name()):
		t.Errorf("as uid %d the test did not run:\n%s", uid, out.String())
	default:
		t.Logf("passed as uid %d:\n%s", uid, out.String())
	}
	return false
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}
