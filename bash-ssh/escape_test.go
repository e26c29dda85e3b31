package bashssh

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-ssh/internal/sshdtest"
	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/escapetest"
)

// The escapes of issue 17 items 19 and 20: processes of a command that no longer carry its tag, or
// whose tag cannot be read. The "remote" host is this machine, so the tests read /proc to see what
// is left; they run as root and, through a server whose sessions run as sshdtest.TestUser, as an
// unprivileged remote user, to whom a non-dumpable process's environment is unreadable.

var (
	userOnce   sync.Once
	userServer *sshdtest.Server
	userErr    error
	userDir    string
)

// unprivilegedServer returns the shared sshd whose sessions run as sshdtest.TestUser.
func unprivilegedServer(t *testing.T) *sshdtest.Server {
	t.Helper()
	userOnce.Do(func() {
		if userErr = sshdtest.EnsureUser(sshdtest.TestUser); userErr != nil {
			return
		}
		userDir, userErr = os.MkdirTemp("", "bashssh-sshd-user-")
		if userErr == nil {
			userServer, userErr = sshdtest.New(userDir, sshdtest.Options{User: sshdtest.TestUser})
		}
	})
	if userErr != nil {
		t.Fatal(userErr)
	}
	return userServer
}

// remoteUsers runs body once as root and once as the unprivileged remote user.
func remoteUsers(t *testing.T, body func(t *testing.T, s *sshdtest.Server)) {
	t.Run("root", func(t *testing.T) { body(t, sharedServer(t)) })
	t.Run("user", func(t *testing.T) { body(t, unprivilegedServer(t)) })
}

// envWipeC is a program that overwrites its environment in place (so /proc/PID/environ no longer
// shows its tag) and writes its pid to argv[1] before sleeping.
const envWipeC = `#include <stdio.h>
#include <string.h>
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv) {
	for (char **e = environ; *e; e++) memset(*e, 'x', strlen(*e));
	FILE *f = fopen(argv[1], "w");
	if (argc != 2 || !f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f) != 0) return 3;
	for (;;) pause();
}
`

// helpers are the programs the escape tests run, built once per test in a directory every user
// may read.
type helpers struct {
	dir        string
	leaderExit string // escapetest.LeaderExit: PIDFILE
	envWipe    string // PIDFILE
	undumpable string // the test binary, started with escapetest.UndumpableEnv
}

func buildHelpers(t *testing.T) helpers {
	t.Helper()
	dir := escapetest.PublicDir(t)
	h := helpers{dir: dir, leaderExit: escapetest.LeaderExit(t), envWipe: filepath.Join(dir, "envwipe"), undumpable: filepath.Join(dir, "undumpable")}
	src := filepath.Join(dir, "envwipe.c")
	if err := os.WriteFile(src, []byte(envWipeC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O2", "-o", h.envWipe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.undumpable, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// escapee is a program whose tag is gone or hidden; command(pidFile) runs it so that it writes its
// pid to pidFile.
type escapee struct {
	name    string
	command func(h helpers, pidFile string) string
}

func escapees() []escapee {
	return []escapee{
		{"env -i", func(_ helpers, pf string) string { return "echo $$ >" + quote(pf) + "; env -i sleep 600" }},
		{"env -u", func(_ helpers, pf string) string {
			return "echo $$ >" + quote(pf) + "; exec env -u " + envpolicy.TagVar + " sleep 600"
		}},
		{"rewrites its environment", func(h helpers, pf string) string { return quote(h.envWipe) + " " + quote(pf) }},
		{"leader thread exited", func(h helpers, pf string) string { return quote(h.leaderExit) + " " + quote(pf) }},
		{"untagged, blanks and a parenthesis in its name", func(_ helpers, pf string) string {
			return "exec env -u " + envpolicy.TagVar + " bash -c " + quote("printf 'x) S 1 2 3' >/proc/$$/comm; echo $$ >"+quote(pf)+"; while :; do sleep 1; done")
		}},
		{"non-dumpable", func(h helpers, pf string) string {
			return "exec env " + strings.Join(quoteAll(escapetest.UndumpableEnv(pf)), " ") + " " + quote(h.undumpable)
		}},
	}
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = quote(s)
	}
	return out
}

// startTime returns the start time of pid as /proc/PID/stat gives it, or "" when pid is gone (a
// zombie whose threads have all exited counts as gone).
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 20 {
		return ""
	}
	if fields[0] == "Z" || fields[0] == "X" {
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
		live := false
		for _, f := range tasks {
			if tb, err := os.ReadFile(f); err == nil {
				ts := string(tb)
				if st := strings.Fields(ts[strings.LastIndexByte(ts, ')')+1:]); len(st) > 0 && st[0] != "Z" && st[0] != "X" {
					live = true
				}
			}
		}
		if !live {
			return ""
		}
	}
	return fields[19]
}

// proc is a process the test watches: its pid and start time.
type proc struct {
	pid   int
	start string
}

func watchPID(t *testing.T, pidFile string) proc {
	t.Helper()
	pid := escapetest.WaitPID(t, pidFile)
	p := proc{pid, startTime(pid)}
	if p.start == "" {
		t.Fatalf("process %d from %s is already gone", pid, pidFile)
	}
	t.Cleanup(func() {
		if p.alive() {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	})
	return p
}

func (p proc) alive() bool { return p.start != "" && startTime(p.pid) == p.start }

// waitGone fails t when p is still alive after within.
func (p proc) waitGone(t *testing.T, within time.Duration, after string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for p.alive() {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive %v after %s", p.pid, within, after)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc
	}
}

// TestUntaggedCommandStops: a command whose processes no longer show the tag is stopped by a
// timeout, by Kill and by Close, as root and as an unprivileged remote user (item 19).
func TestUntaggedCommandStops(t *testing.T) {
	h := buildHelpers(t)
	remoteUsers(t, func(t *testing.T, s *sshdtest.Server) {
		for _, esc := range escapees() {
			t.Run(esc.name, func(t *testing.T) {
				ex := newExecutor(t, serverConfig(s))
				pf := filepath.Join(h.dir, fmt.Sprintf("%s-%s-run", s.User, strings.ReplaceAll(esc.name, " ", "_")))
				begin := time.Now()
				res, p := runTimingOut(t, ex, esc.command(h, pf), pf)
				if took := time.Since(begin); !res.TimedOut || took > time.Second+testGrace+3*time.Second {
					t.Errorf("Run returned after %v with TimedOut %v (signal %q), want a timeout after about 1s", took, res.TimedOut, res.Signal)
				}
				p.waitGone(t, 5*time.Second, "the timeout")

				pf = filepath.Join(h.dir, fmt.Sprintf("%s-%s-kill", s.User, strings.ReplaceAll(esc.name, " ", "_")))
				task, err := ex.Start(bash.Request{Command: esc.command(h, pf)})
				if err != nil {
					t.Fatal(err)
				}
				p = watchPID(t, pf)
				if ok, err := ex.Kill(task.ID()); !ok || err != nil {
					t.Fatalf("Kill = %v, %v", ok, err)
				}
				select {
				case <-task.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("the task did not finish within 5s of Kill")
				}
				p.waitGone(t, 5*time.Second, "Kill")

				pf = filepath.Join(h.dir, fmt.Sprintf("%s-%s-close", s.User, strings.ReplaceAll(esc.name, " ", "_")))
				if _, err := ex.Start(bash.Request{Command: esc.command(h, pf)}); err != nil {
					t.Fatal(err)
				}
				p = watchPID(t, pf)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				begin = time.Now()
				if err := ex.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
				if took := time.Since(begin); took > 3*time.Second {
					t.Errorf("Close took %v", took)
				}
				if p.alive() {
					t.Errorf("process %d still alive after Close", p.pid)
				}
			})
		}
	})
}

// TestReparentedDescendantStops: a descendant that left the command's session and its tag
// (setsid env -i) and ignores SIGTERM is still stopped by the timeout, after SIGTERM ended its
// parent and it was re-parented (item 20).
func TestReparentedDescendantStops(t *testing.T) {
	h := buildHelpers(t)
	remoteUsers(t, func(t *testing.T, s *sshdtest.Server) {
		ex := newExecutor(t, serverConfig(s))
		pf := filepath.Join(h.dir, s.User+"-descendant")
		cmd := "setsid env -i bash -c " + quote("trap '' TERM; echo $$ >"+quote(pf)+"; exec sleep 600") + " & wait"
		_, p := runTimingOut(t, ex, cmd, pf)
		p.waitGone(t, 5*time.Second, "the timeout")
	})
}

// runTimingOut runs command on ex with a 1 s timeout, watches the process whose pid it writes to
// pf, and returns the result and that process once Run has returned; Run still running 15 s
// later fails the test.
func runTimingOut(t *testing.T, ex *Executor, command, pf string) (bash.RunResult, proc) {
	t.Helper()
	errc := make(chan error, 1)
	var res bash.RunResult
	go func() {
		var err error
		res, err = ex.Run(context.Background(), bash.Request{Command: command, Timeout: time.Second})
		errc <- err
	}()
	p := watchPID(t, pf)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run still running 15s after it started with a 1s timeout")
	}
	return res, p
}

// TestHiddenEscapees: processes a finished command left in sessions of their own whose tag is
// hard to read. Close stops those it can read (root reads everything; a leader thread that exited
// still has a live thread's environment); as an unprivileged user, it cannot read a non-dumpable
// process (ssh-agent makes itself one), so it leaves it running and returns an error naming it
// (item 20).
func TestHiddenEscapees(t *testing.T) {
	h := buildHelpers(t)
	cases := []struct {
		name         string
		command      func(pf string) string
		hiddenAsUser bool
	}{
		{"setsid, leader thread exited", func(pf string) string {
			return "setsid -f " + quote(h.leaderExit) + " " + quote(pf)
		}, false},
		{"setsid, non-dumpable", func(pf string) string {
			return "setsid -f env " + strings.Join(quoteAll(escapetest.UndumpableEnv(pf)), " ") + " " + quote(h.undumpable)
		}, true},
		{"ssh-agent", func(pf string) string {
			return `eval "$(ssh-agent -s)" >/dev/null && echo "$SSH_AGENT_PID" >` + quote(pf)
		}, true},
	}
	remoteUsers(t, func(t *testing.T, s *sshdtest.Server) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ex, err := New(serverConfig(s))
				if err != nil {
					t.Fatal(err)
				}
				trackTags(ex)
				t.Cleanup(func() { ex.Close(context.Background()) }) // after a failure; the test checks Close
				pf := filepath.Join(h.dir, s.User+"-"+strings.NewReplacer(" ", "_", ",", "").Replace(tc.name))
				res := mustRun(t, ex, bash.Request{Command: tc.command(pf)})
				if res.ExitCode == nil || *res.ExitCode != 0 {
					t.Fatalf("the command failed: %s %s", codeString(res.ExitCode), res.Stderr.Text())
				}
				p := watchPID(t, pf)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				err = ex.Close(ctx)
				hidden := tc.hiddenAsUser && s.User == sshdtest.TestUser
				switch {
				case hidden && (err == nil || !strings.Contains(err.Error(), strconv.Itoa(p.pid)+" (")):
					t.Errorf("Close = %v, want an error naming process %d", err, p.pid)
				case hidden && !p.alive():
					t.Errorf("Close stopped process %d, which it cannot tell is the executor's", p.pid)
				case !hidden && err != nil:
					t.Errorf("Close: %v", err)
				case !hidden && p.alive():
					t.Errorf("process %d still alive after Close", p.pid)
				}
				t.Logf("Close: %v", err)
			})
		}
	})
}
