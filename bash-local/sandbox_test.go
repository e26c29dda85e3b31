//go:build linux

package bashlocal

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtest"
	"github.com/dsh-go/dsh/bash/sandboxtest"
)

// setuidVar names the set-user-ID program TestSandboxEscapesAsNobody prepares for the run it
// starts as nobody.
const setuidVar = "BASHLOCAL_TEST_SETUID"

// TestSandboxEscapes runs the escape suite against the local executor in workspace-write mode with
// the network off: no way out, and the usual work still works.
func TestSandboxEscapes(t *testing.T) {
	opts := sandboxtest.NewOptions(t)
	opts.Probe, opts.Setuid = true, os.Getenv(setuidVar)
	sandboxtest.Run(t, func(t *testing.T) sandboxtest.Shell {
		h := newHarness(t, Config{Workdir: opts.Workdir, Sandbox: bash.Sandbox{
			Mode:     bash.SandboxWorkspaceWrite,
			DenyRead: append(append([]string(nil), bash.DefaultDenyRead...), opts.Denied),
		}})
		return sandboxtest.Executor(h.ex)
	}, opts)
}

// TestSandboxEscapesAsNobody runs TestSandboxEscapes again as the unprivileged user nobody (uid
// 65534) when the tests run as root, who passes permission checks that an ordinary user would
// meet first and so could hide an escape; a set-user-ID copy of id is its setuid target.
func TestSandboxEscapesAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestSandboxEscapes already runs unprivileged")
	}
	dir, err := os.MkdirTemp("/tmp", "sandbox-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, setuid := filepath.Join(dir, "bashlocal.test"), filepath.Join(dir, "id-setuid")
	copyExecutable(t, self, bin, 0o755)
	idPath, err := exec.LookPath("id")
	if err != nil {
		t.Fatal(err)
	}
	copyExecutable(t, idPath, setuid, 0o4755)
	cmd := exec.Command(bin, "-test.run", "^TestSandboxEscapes$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR=/tmp", "HOME=/nonexistent", setuidVar+"="+setuid)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("TestSandboxEscapes as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestSandboxEscapes") || strings.Contains(string(out), "--- SKIP: TestSandboxEscapes/loosen/setuid") {
		t.Fatalf("TestSandboxEscapes as nobody did not run every case:\n%s", out)
	}
}

func copyExecutable(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(out.Close(), os.Chmod(dst, mode)); err != nil {
		t.Fatal(err)
	}
}

// TestConformanceSandboxed runs the seam's conformance kit against a sandboxed executor:
// everything the executor promises (timeouts, kill of the tree, escapees, spill files, the
// environment) still holds inside the sandbox. The kit's scratch directory is a writable root.
func TestConformanceSandboxed(t *testing.T) {
	wd := t.TempDir()
	bashtest.Run(t, func(t *testing.T) bash.Executor {
		h := newHarness(t, Config{Workdir: wd, Logger: slog.New(slog.DiscardHandler), Sandbox: bash.Sandbox{
			Mode: bash.SandboxWorkspaceWrite, WritableRoots: []string{os.TempDir()},
		}})
		h.closeErr = true
		t.Cleanup(func() {
			if left := tagged(h.ex.tag); len(left) > 0 {
				t.Errorf("processes left after the kit closed the executor: %v", left)
			}
		})
		return h.ex
	}, bashtest.Options{
		Workdir:  wd,
		Limits:   bash.Limits{Grace: testGrace},
		Escapees: runtime.GOOS == "linux",
		Progress: true,
	})
}

// TestSandboxFailsClosed checks that a kernel without what the policy needs (acted out through
// the test hook: Landlock ABI 5, without signal scoping) makes a sandboxed call fail with
// "sandbox unavailable: …" and nothing run, and that best effort runs it and says in the result
// what was not enforced.
func TestSandboxFailsClosed(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	marker := filepath.Join(wd, "ran")
	h := newHarness(t, Config{Workdir: wd, Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}, landlockABI: 5})
	_, err := h.ex.Run(t.Context(), bash.Request{Command: "touch ran"})
	if !errors.Is(err, bash.ErrSandboxUnavailable) || !strings.Contains(err.Error(), "sandbox unavailable: signal and abstract Unix socket scoping (Landlock ABI 6)") {
		t.Fatalf("Run = %v, want sandbox unavailable naming what is missing", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran although its sandbox was unavailable")
	}
	task, err := h.ex.Start(bash.Request{Command: "touch ran"})
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, task)
	if read, _ := h.ex.ReadOutput(task.ID()); !strings.Contains(read.Delta, "spawn failed: bashlocal: sandbox unavailable:") || task.Status() != bash.TaskKilled {
		t.Fatalf("background task: %q, %s; want a spawn failure naming the sandbox", read.Delta, task.Status())
	}
	res, err := h.ex.Run(t.Context(), bash.Request{Command: "touch ran", Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite, BestEffort: true}})
	if err != nil || res.Sandbox == nil || strings.Join(res.Sandbox.Unenforced, ";") != "signal and abstract Unix socket scoping (Landlock ABI 6)" {
		t.Fatalf("best effort: %+v, %v; want the run to say what was not enforced", res.Sandbox, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("best effort: the command did not run: %v", err)
	}
}

// TestSandboxBadInput checks that each kind of bad policy is refused with an error naming the
// field, by New for a configuration and by Run for a request.
func TestSandboxBadInput(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	for _, tc := range []struct {
		name string
		sb   bash.Sandbox
		want string
	}{
		{"unknown mode", bash.Sandbox{Mode: "strict"}, `Sandbox.Mode "strict"`},
		{"relative root", bash.Sandbox{Mode: bash.SandboxWorkspaceWrite, WritableRoots: []string{"out"}}, `Sandbox.WritableRoots[0] "out" is not absolute`},
		{"missing root", bash.Sandbox{Mode: bash.SandboxWorkspaceWrite, WritableRoots: []string{filepath.Join(wd, "gone")}}, `Sandbox.WritableRoots[0] "` + filepath.Join(wd, "gone") + `" is not an existing directory`},
		{"deny inside root", bash.Sandbox{Mode: bash.SandboxWorkspaceWrite, WritableRoots: []string{wd}, DenyRead: []string{filepath.Join(wd, "s")}}, `Sandbox.DenyRead[0]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(Config{Sandbox: tc.sb}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want an error containing %q", err, tc.want)
			}
			if tc.name == "missing root" {
				return // a request's roots are checked when it runs: see below
			}
			h := newHarness(t, Config{Workdir: wd})
			if _, err := h.ex.Run(t.Context(), bash.Request{Command: "true", Sandbox: tc.sb}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	h := newHarness(t, Config{Workdir: wd})
	_, err := h.ex.Run(t.Context(), bash.Request{Command: "true", Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite, WritableRoots: []string{filepath.Join(wd, "gone")}}})
	if err == nil || !strings.Contains(err.Error(), "writable root") || !strings.Contains(err.Error(), "gone") {
		t.Errorf("Run with a missing writable root = %v, want an error naming it", err)
	}
	if err := os.Mkdir(filepath.Join(wd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = h.ex.Run(t.Context(), bash.Request{Command: "true", Workdir: filepath.Join(wd, "sub"), Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite, DenyRead: []string{wd}}})
	if err == nil || !strings.Contains(err.Error(), "overlaps writable root") {
		t.Errorf("Run with a workdir inside a deny path = %v, want an overlap error", err)
	}
}

// TestSandboxMarkers checks what a result says about a denial: the path when a tool named it, the
// network when a socket was refused, the policy otherwise; nothing for a command that succeeded.
func TestSandboxMarkers(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	h := newHarness(t, Config{Workdir: wd, Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}})
	for _, tc := range []struct{ command, want string }{
		{"echo x > /etc/dsh-sandbox-marker-test", "write outside the workspace denied: /etc/dsh-sandbox-marker-test"},
		{"exec 3<>/dev/tcp/127.0.0.1/9", "network access denied (network off)"},
		{"exit 4", "the command failed inside the sandbox (workspace-write, network off;"},
		{"echo ok > ok", ""},
	} {
		res, err := h.ex.Run(t.Context(), bash.Request{Command: tc.command})
		if err != nil || res.Sandbox == nil || !strings.HasPrefix(res.Sandbox.Denial, tc.want) || (tc.want == "") != (res.Sandbox.Denial == "") {
			t.Errorf("%s: %+v, %v; want a denial starting %q", tc.command, res.Sandbox, err, tc.want)
		}
	}
	ro, err := h.ex.Run(t.Context(), bash.Request{Command: "echo x > made", Sandbox: bash.Sandbox{Mode: bash.SandboxReadOnly}})
	if err != nil || ro.Sandbox == nil || ro.Sandbox.Denial != "write denied (read-only sandbox): "+filepath.Join(wd, "made") {
		t.Errorf("read-only: %+v, %v", ro.Sandbox, err)
	}
	task, err := h.ex.Start(bash.Request{Command: "echo x > /etc/dsh-sandbox-marker-test"})
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, task)
	if read, _ := h.ex.ReadOutput(task.ID()); !strings.Contains(read.Delta, "[sandbox: write outside the workspace denied: /etc/dsh-sandbox-marker-test]") {
		t.Errorf("background task's last read = %q, want the sandbox marker", read.Delta)
	}
}

// TestSandboxTmpdir checks that every confined call of an executor shares one private TMPDIR that
// Close removes, and that a request's own TMPDIR wins.
func TestSandboxTmpdir(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	ex, err := New(Config{Workdir: wd, Limits: bash.Limits{Grace: testGrace}, Sandbox: bash.Sandbox{Mode: bash.SandboxReadOnly}})
	if err != nil {
		t.Fatal(err)
	}
	first, err1 := ex.Run(t.Context(), bash.Request{Command: `echo "$TMPDIR"; echo kept > "$TMPDIR/f"`})
	second, err2 := ex.Run(t.Context(), bash.Request{Command: `echo "$TMPDIR"; cat "$TMPDIR/f"`})
	own, err3 := ex.Run(t.Context(), bash.Request{Command: `echo "$TMPDIR"`, Env: map[string]string{"TMPDIR": "/mine"}})
	if err := errors.Join(err1, err2, err3, ex.Close(t.Context())); err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimSpace(first.Stdout.Text())
	if !strings.HasPrefix(filepath.Base(dir), "dsh-tmp-") || second.Stdout.Text() != dir+"\nkept\n" || own.Stdout.Text() != "/mine\n" {
		t.Fatalf("TMPDIR: %q, then %q, own %q", first.Stdout.Text(), second.Stdout.Text(), own.Stdout.Text())
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the private TMPDIR %s outlived Close: %v", dir, err)
	}
}

// TestSandboxWorkspaceIsTheExecutors checks that a call started elsewhere (a model picks the
// call's workdir) may not write where it starts: the workspace is the executor's directory.
func TestSandboxWorkspaceIsTheExecutors(t *testing.T) {
	t.Parallel()
	wd, elsewhere := t.TempDir(), t.TempDir()
	h := newHarness(t, Config{Workdir: wd, Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}})
	res, err := h.ex.Run(t.Context(), bash.Request{Command: "echo x > here; echo y > " + filepath.Join(wd, "there"), Workdir: elsewhere})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "here")); err == nil {
		t.Errorf("a call started in %s could write there (stderr %q)", elsewhere, res.Stderr.Text())
	}
	if _, err := os.Stat(filepath.Join(wd, "there")); err != nil {
		t.Errorf("the call could not write in the workspace: %v (stderr %q)", err, res.Stderr.Text())
	}
}
