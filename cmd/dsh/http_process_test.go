package main

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dshHTTP is a real `dsh mcp -http` process (the test binary installed as dsh on PATH).
type dshHTTP struct {
	cmd    *exec.Cmd
	url    string
	stderr *strings.Builder
	done   chan struct{} // closed once stderr is read to the end
}

var servingRE = regexp.MustCompile(`^dsh mcp: serving MCP at (https?://\S+)$`)

// startDshHTTP starts dsh mcp -http 127.0.0.1:0 with the test token file and args, and waits
// for the line that says where it serves.
func startDshHTTP(t *testing.T, args ...string) *dshHTTP {
	t.Helper()
	return startDshHTTPEnv(t, nil, args...)
}

// startDshHTTPEnv is startDshHTTP with the extra environment env.
func startDshHTTPEnv(t testing.TB, env []string, args ...string) *dshHTTP {
	t.Helper()
	bin, err := exec.LookPath("dsh")
	if err != nil {
		t.Fatal(err)
	}
	return startHTTPBinary(t, bin, env, args...)
}

// startHTTPBinary starts the dsh binary bin as `dsh mcp -http 127.0.0.1:0` with the test tokens,
// the extra environment env and args, and returns it once it says where it serves.
func startHTTPBinary(t testing.TB, bin string, env []string, args ...string) *dshHTTP {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp", "-http", "127.0.0.1:0", "-token-file", writeTokens(t)}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	dieWithTest(cmd)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &dshHTTP{cmd: cmd, stderr: &strings.Builder{}, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		defer close(d.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
				continue
			}
			d.stderr.WriteString(sc.Text() + "\n")
		}
	}()
	select {
	case d.url = <-urls:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("dsh mcp -http did not say where it serves within 20s")
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return d
}

// wait waits for dsh to exit and returns its exit code.
func (d *dshHTTP) wait(t testing.TB) int {
	t.Helper()
	<-d.done
	err := d.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return d.cmd.ProcessState.ExitCode()
}

// TestHTTPProcess drives a real dsh mcp -http with the SDK's streamable HTTP client: two
// sessions, a call, a background task, then SIGTERM while a call runs: new sessions are
// refused at once, the call in flight finishes and is answered, dsh exits 0 with nothing on
// stderr and nothing it started left alive.
func TestHTTPProcess(t *testing.T) {
	d := startDshHTTP(t, "-drain", "20s")
	fx := &httpFixture{t: t, url: d.url}
	a, b := fx.connect(aliceToken, nil), fx.connect(bobToken, nil)
	dir := t.TempDir()
	id := a.startBackground("echo $$ > " + filepath.Join(dir, "bg") + "; exec sleep 300")
	bgPID := readPID(t, filepath.Join(dir, "bg"))
	if got := text(b.call("bash_output", taskArgs(id))); got != "Error: task "+id+" belongs to another session" {
		t.Errorf("another session's task: %q", got)
	}
	gate := filepath.Join(dir, "gate")
	// The call in flight is made with plain requests: the SDK's client fails the whole
	// connection, its pending call included, when the server ends its event stream at exit,
	// which may come before it has read the call's result.
	raw := fx.rawConnect(bobToken)
	stream := raw.stream(callBody(7, "echo $$ > "+filepath.Join(dir, "fg")+"; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo finished"))
	readPID(t, filepath.Join(dir, "fg"))
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	refused := eventually(10*time.Second, func() bool {
		resp := fx.post(aliceToken, "", initBody, nil)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	if !refused {
		t.Error("a new session was not refused with 503 after SIGTERM")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for data := range stream {
		got = append(got, data)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"id":7,"result"`) || !strings.Contains(got[0], `finished\n`) {
		t.Errorf("the call in flight at SIGTERM: %q", got)
	}
	if code := d.wait(t); code != 0 {
		t.Errorf("dsh exited %d, want 0; stderr:\n%s", code, d.stderr)
	}
	if d.stderr.Len() != 0 {
		t.Errorf("stderr: %s", d.stderr)
	}
	if alive(bgPID) {
		t.Errorf("background task (pid %d) alive after dsh exited", bgPID)
	}
}
