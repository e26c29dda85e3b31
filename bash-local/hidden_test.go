//go:build linux

package bashlocal

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-go/dsh/internal/escapetest"
	"github.com/dsh-go/dsh/internal/proctree"
)

// TestHiddenEscapees checks, as an unprivileged user (root reads every environment and would hide
// the failure), that escapees whose tag cannot be read are still stopped: by Kill when their
// parent still lives (they descend from the task), by Close in every case (the executor is the
// child subreaper of its commands, and an unowned child of it in another session is an escapee).
func TestHiddenEscapees(t *testing.T) {
	if !escapetest.AsNobody(t) {
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	leaderExit := escapetest.LeaderExit(t)
	cases := []struct {
		name string
		// command starts the escapee, which writes its pid to $PIDFILE ($HELPER is the
		// non-dumpable helper, $LEADEREXIT the process whose leader thread exits).
		command string
		// byKill: Kill of the task alone stops it (otherwise only Close can: its parent is gone,
		// and an orphan cannot be traced to one task).
		byKill bool
	}{
		{"non-dumpable, double-forked into its own session",
			`( setsid "$HELPER" </dev/null >/dev/null 2>&1 & ); sleep 600`, false},
		{"non-dumpable, in its own session, parent alive",
			`setsid "$HELPER" </dev/null >/dev/null 2>&1 & wait`, true},
		{"leader thread exited, double-forked into its own session",
			`( setsid "$LEADEREXIT" "$PIDFILE" </dev/null >/dev/null 2>&1 & ); sleep 600`, true},
	}
	for _, tc := range cases {
		for _, stop := range []string{"kill", "close"} {
			if stop == "kill" && !tc.byKill {
				continue
			}
			t.Run(tc.name+"/"+stop, func(t *testing.T) {
				h := newHarness(t, Config{})
				path, pid := pidFile(t, "pid")
				r := h.req(tc.command)
				for _, kv := range escapetest.UndumpableEnv(path) {
					k, v, _ := strings.Cut(kv, "=")
					r.Env[k] = v
				}
				r.Env["PIDFILE"], r.Env["HELPER"], r.Env["LEADEREXIT"] = path, self, leaderExit
				task := h.start(r)
				escapee := pid()
				killOnCleanup(t, escapee)
				waitFor(t, "the escapee to hide /proc/PID/environ", func() bool {
					_, err := os.ReadFile("/proc/" + strconv.Itoa(escapee) + "/environ")
					return err != nil // the leader thread exits just after writing the pid
				})
				if stop == "kill" {
					h.ex.Kill(task.ID())
					waitDone(t, task)
					waitFor(t, "the escapee to be stopped by Kill", func() bool { return !alive(escapee) })
					return
				}
				if err := h.ex.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
				if alive(escapee) {
					t.Errorf("escapee %d alive after Close returned", escapee)
				}
			})
		}
	}
}

// TestCloseSparesAnotherExecutorsOrphans checks, as an unprivileged user, that an executor's Close
// does not stop what may be another open executor's: an orphan that hides its tag cannot be
// traced to its executor, so only the last executor of the process to close sweeps it.
func TestCloseSparesAnotherExecutorsOrphans(t *testing.T) {
	if !escapetest.AsNobody(t) {
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	owner, other := newHarness(t, Config{}), newHarness(t, Config{})
	path, pid := pidFile(t, "pid")
	r := owner.req(`( setsid "$HELPER" </dev/null >/dev/null 2>&1 & ); sleep 600`)
	for _, kv := range escapetest.UndumpableEnv(path) {
		k, v, _ := strings.Cut(kv, "=")
		r.Env[k] = v
	}
	r.Env["PIDFILE"], r.Env["HELPER"] = path, self
	owner.start(r)
	escapee := pid()
	killOnCleanup(t, escapee)
	waitFor(t, "the escapee to hide /proc/PID/environ", func() bool {
		_, err := os.ReadFile("/proc/" + strconv.Itoa(escapee) + "/environ")
		return err != nil
	})
	if err := other.ex.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !alive(escapee) {
		t.Fatalf("the other executor's Close stopped escapee %d, which may be the open executor's", escapee)
	}
	if err := owner.ex.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if alive(escapee) {
		t.Errorf("escapee %d alive after the last executor's Close returned", escapee)
	}
}

// TestSSHAgentDoesNotOutliveClose checks the everyday hidden escapee, as an unprivileged user:
// `eval $(ssh-agent -s)` leaves an agent holding keys, in its own session and non-dumpable, after
// the command that started it has returned.
func TestSSHAgentDoesNotOutliveClose(t *testing.T) {
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		t.Skip("ssh-agent is not installed (openssh-client)")
	}
	if !escapetest.AsNobody(t) {
		return
	}
	h := newHarness(t, Config{})
	path, pid := pidFile(t, "agent")
	res := h.run(h.req(`eval "$(ssh-agent -s)" >/dev/null && echo "$SSH_AGENT_PID" > ` + path + ` && ssh-add -l; echo "exit $?"`))
	if got := res.Stdout.Text(); !strings.Contains(got, "exit 1") { // 1: the agent has no identities
		t.Fatalf("the agent did not answer: stdout %q stderr %q", got, res.Stderr.Text())
	}
	agent := pid()
	killOnCleanup(t, agent)
	if !alive(agent) {
		t.Fatalf("the agent %d is not running: the case proves nothing", agent)
	}
	if err := h.ex.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if alive(agent) {
		t.Errorf("ssh-agent %d alive after Close returned", agent)
	}
}

// killOnCleanup kills pid when the test ends, should a failed test leave it.
func killOnCleanup(t *testing.T, pid int) {
	t.Cleanup(func() {
		if st, ok := proctree.ReadStat(pid); ok && !st.Dead() {
			proctree.Signal(st, syscall.SIGKILL)
		}
	})
}

// TestHideFromCommands checks, as an unprivileged user, that a command cannot read the harness's
// environment once HideFromCommands ran, and that escapees are still found by their tag (the
// commands are dumpable again after execve) and stopped by Kill.
func TestHideFromCommands(t *testing.T) {
	if !escapetest.AsNobody(t) {
		return
	}
	if err := HideFromCommands(); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{})
	res := h.run(h.req(`cat /proc/$PPID/environ; echo "exit $?"`))
	// ESCAPETEST_NOBODY is in this process's initial environment, which /proc/PID/environ shows.
	if out := res.Stdout.Text(); strings.Contains(out, "ESCAPETEST_NOBODY") || !strings.Contains(out, "exit 1") {
		t.Errorf("a command read the harness's environment: stdout %q stderr %q", out, res.Stderr.Text())
	}
	path, pid := pidFile(t, "pid")
	r := h.req(`setsid bash -c 'echo $$ > "$PIDFILE"; exec sleep 600' </dev/null >/dev/null 2>&1 & sleep 600`)
	r.Env["PIDFILE"] = path
	task := h.start(r)
	escapee := pid()
	killOnCleanup(t, escapee)
	h.ex.Kill(task.ID())
	waitDone(t, task)
	waitFor(t, "the setsid escapee to be stopped by Kill", func() bool { return !alive(escapee) })
}
