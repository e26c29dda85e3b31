//go:build linux

package persistentbash

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/escapetest"
	"github.com/dsh-go/dsh/internal/proctree"
	"github.com/dsh-go/dsh/tools"
)

// TestSessionFacts checks the session facts a persistent shell's commands see: the session's
// opaque id (never its owner token), the shell kind and the workspace.
func TestSessionFacts(t *testing.T) {
	h := newHarness(t, Config{})
	r := h.reg.Execute(context.Background(), tools.Call{ID: "1", Name: ToolName,
		Args:  []byte(`{"command":"echo \"$DSH_SESSION_ID|$DSH_SHELL|$DSH_HOME\"; env | grep -c secret-owner"}`),
		Agent: &tools.Agent{Owner: "secret-owner", Session: "sess-7", Dir: h.dir}})
	if want := "sess-7|persistent|" + h.dir + "\n0\n[exit code: 1]"; r.IsError || r.Text() != want {
		t.Errorf("got %q, want %q", r.Text(), want)
	}
}

// TestSandboxedShell runs a persistent shell in a workspace-write sandbox: writes stay in the
// workspace and $TMPDIR, a write outside is denied and says so, the network is closed, and the
// shell's state still carries over between calls.
func TestSandboxedShell(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	h := newHarness(t, Config{Workdir: ws, Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}})
	h.expect("a", "mkdir sub && cd sub && echo in > f && cat f && echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"", "in\nt")
	h.expect("a", "pwd", filepath.Join(ws, "sub"))
	r := h.call("a", "echo x > "+outside+"/f")
	if !strings.Contains(r.Text(), "[sandbox: ") || !strings.Contains(r.Text(), "[exit code: 1]") {
		t.Errorf("a write outside the workspace: %q", r.Text())
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write outside the workspace happened: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	if r := h.call("a", "exec 3<>/dev/tcp/127.0.0.1/"+port+" && echo connected"); strings.Contains(r.Text(), "connected") {
		t.Errorf("the network is open: %q", r.Text())
	}
	var f Facts
	if err := jsonFacts(r, &f); err != nil || !strings.Contains(f.Sandbox, "workspace-write") {
		t.Errorf("facts %+v (%v) do not name the sandbox", f, err)
	}
	if !strings.Contains(h.s.Tool().Description, "The shell runs in a sandbox (workspace-write") {
		t.Errorf("the description does not state the sandbox: %q", h.s.Tool().Description)
	}
}

func TestSandboxConfigErrors(t *testing.T) {
	for _, sb := range []bash.Sandbox{{Mode: "everything"}, {Mode: bash.SandboxReadOnly, Network: "maybe"}, {Mode: bash.SandboxWorkspaceWrite, WritableRoots: []string{"rel"}}} {
		if s, err := New(Config{Sandbox: sb}); err == nil || !strings.Contains(err.Error(), "Sandbox.") {
			if s != nil {
				s.Close(context.Background())
			}
			t.Errorf("New with %+v: %v, want an error naming the field", sb, err)
		}
	}
}

// TestCloseStopsHiddenEscapees runs as an unprivileged user: a command leaves behind a process
// in a new session that made itself non-dumpable (its tag unreadable) and whose parent is gone;
// Close must still stop it (it is an orphan of this process, a child subreaper) and reap it.
func TestCloseStopsHiddenEscapees(t *testing.T) {
	if !escapetest.AsNobody(t) {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(escapetest.PublicDir(t), "pid")
	s, err := New(Config{Workdir: t.TempDir(), KillGrace: 300 * time.Millisecond, Env: map[string]string{"HOME": os.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var reg tools.Registry
	reg.Register(s.Tool())
	env := strings.Join(escapetest.UndumpableEnv(pidFile), " ")
	cmd := "( setsid env " + env + " " + strconv.Quote(exe) + " </dev/null >/dev/null 2>&1 & ) ; true"
	r := reg.Execute(context.Background(), tools.Call{ID: "1", Name: ToolName, Args: []byte(`{"command":` + strconv.Quote(cmd) + `}`), Agent: &tools.Agent{Owner: "a"}})
	if r.IsError {
		t.Fatal(r.Text())
	}
	pid := escapetest.WaitPID(t, pidFile)
	if proctree.HasTag(pid, ptyshellTag(), true) {
		t.Fatal("the escapee's tag is readable: the test would not test hiding")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if st, ok := proctree.ReadStat(pid); ok && !st.Dead() {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the hidden escapee %d survived Close", pid)
	}
}

func ptyshellTag() string { return "DSH_PROC_TAG=" }

func jsonFacts(r tools.Result, f *Facts) error {
	got, ok := factsOf(r)
	if !ok {
		return errors.New("no facts")
	}
	*f = got
	return nil
}
