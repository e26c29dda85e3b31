//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/escapetest"
)

// dshProcess is `dsh mcp` run as a subprocess (this test binary, named dsh: see TestMain) and
// spoken to line by line, for the tests that must run as an unprivileged user.
type dshProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr bytes.Buffer
	nextID int
}

// startDsh starts `dsh mcp ARGS...` in dir and initializes the session.
func startDsh(t *testing.T, dir string, args ...string) *dshProcess {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := &dshProcess{t: t, nextID: 2}
	d.cmd = &exec.Cmd{Path: self, Args: append([]string{"dsh", "mcp", "-workdir", dir}, args...), Dir: dir}
	d.cmd.Stderr = &d.stderr
	dieWithTest(d.cmd)
	d.in, err = d.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.cmd.Process.Kill()
			d.cmd.Wait()
		}
	})
	d.out = bufio.NewScanner(stdout)
	d.out.Buffer(nil, 1<<20)
	d.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	d.await(1)
	d.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return d
}

func (d *dshProcess) send(line string) {
	d.t.Helper()
	if _, err := io.WriteString(d.in, line+"\n"); err != nil {
		d.t.Fatalf("write to dsh: %v", err)
	}
}

// await returns the text of the response with id, failing the test at the end of dsh's output.
func (d *dshProcess) await(id int) string {
	d.t.Helper()
	want := fmt.Sprintf(`"id":%d,`, id)
	for d.out.Scan() {
		if strings.Contains(d.out.Text(), want) {
			return d.out.Text()
		}
	}
	err := d.wait() // d.stderr is complete only once dsh has exited
	d.t.Fatalf("dsh ended without answering request %d (%v); stderr:\n%s", id, err, d.stderr.String())
	return ""
}

// bash runs command with the bash tool and returns the response line.
func (d *dshProcess) bash(command string) string {
	d.t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command, "description": "Test"})
	return d.await(d.startCall(string(args)))
}

// startCall sends a bash call with the JSON arguments args, without waiting for its response,
// and returns its id.
func (d *dshProcess) startCall(args string) int {
	d.t.Helper()
	id := d.nextID
	d.nextID++
	d.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bash","arguments":%s}}`, id, args))
	return id
}

// close ends the session (the end of stdin) and waits for dsh to exit 0.
func (d *dshProcess) close() {
	d.t.Helper()
	d.in.Close()
	for d.out.Scan() { // drain: dsh may still answer
	}
	if err := d.wait(); err != nil {
		d.t.Errorf("dsh mcp: %v; stderr:\n%s", err, d.stderr.String())
	}
}

// wait waits for dsh to exit, at most 20 s after which it kills it, and returns the error of
// its exit (errDshHung when it had to be killed).
func (d *dshProcess) wait() error {
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		<-done
		return errDshHung
	}
}

// errDshHung is dshProcess.wait's error for a dsh that did not exit within 20 s.
var errDshHung = errors.New("dsh mcp did not exit within 20s")

var modes = []struct {
	name string
	args []string
}{{"one-shot", nil}, {"persistent", []string{"-persistent"}}}

// TestHarnessEnvironmentHidden checks, as an unprivileged user (root reads anything), that no
// command can read the environment of dsh: neither of the worker that runs it nor of the
// supervisor above.
func TestHarnessEnvironmentHidden(t *testing.T) {
	if !escapetest.AsNobody(t) {
		return
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			d := startDsh(t, t.TempDir(), mode.args...)
			got := d.bash(`cat /proc/$PPID/environ; echo "worker exit $?"; cat /proc/$(awk '{print $4}' /proc/$PPID/stat)/environ; echo "supervisor exit $?"`)
			// ESCAPETEST_NOBODY is in dsh's environment (AsNobody set it), scrubbed from commands.
			if strings.Contains(got, "ESCAPETEST_NOBODY") || !strings.Contains(got, "worker exit 1") || !strings.Contains(got, "supervisor exit 1") {
				t.Errorf("a command read dsh's environment: %s", got)
			}
			d.close()
		})
	}
}

// TestSSHAgentGoneWithDsh checks, as an unprivileged user, that `eval $(ssh-agent -s)`, whose
// agent hides its tag (it is non-dumpable) and leaves its session, does not outlive dsh, in both
// modes.
func TestSSHAgentGoneWithDsh(t *testing.T) {
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		t.Skip("ssh-agent is not installed (openssh-client)")
	}
	if !escapetest.AsNobody(t) {
		return
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			d := startDsh(t, dir, mode.args...)
			d.bash(`eval "$(ssh-agent -s)" >/dev/null; echo "$SSH_AGENT_PID" > agent.pid`)
			agent := readPID(t, filepath.Join(dir, "agent.pid"))
			if !alive(agent) {
				t.Fatalf("the agent %d is not running: the test proves nothing", agent)
			}
			d.close()
			if alive(agent) {
				syscall.Kill(agent, syscall.SIGKILL)
				t.Errorf("ssh-agent %d alive after dsh mcp exited", agent)
			}
		})
	}
}
