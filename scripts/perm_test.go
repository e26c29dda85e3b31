package scripts_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnreadablePathsAreErrorsNotSilence checks that a file and a directory
// the gate may not read are exit-2 errors naming them, while the findings in
// the readable files are still printed. The tests run as root, which reads
// mode-0000 files anyway, so the gate runs as the unprivileged user
// "nobody" (UID 65534) through a copy of the gate binary (see TestMain)
// that it may execute; as a normal user it runs as itself.
func TestUnreadablePathsAreErrorsNotSilence(t *testing.T) {
	// As root the gate runs as nobody, who must reach the files: use /tmp
	// rather than a TMPDIR that may sit under a private home directory.
	base := ""
	if os.Geteuid() == 0 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "perm-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	repo := filepath.Join(dir, "repo")
	for _, d := range []string{bin, repo, filepath.Join(repo, "locked-dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"go.work":           "go 1.26\n",
		"a.md":              "[x](gone.md)\n",
		"locked.md":         "[y](gone.md)\n",
		"locked-dir/in.md":  "[z](gone.md)\n",
		"target.md":         "# T\n",
		"b.md":              "[t](locked.md#frag)\n",
		"wrapped/two.md":    "two\nlines\n",
		"wrapped/locked.md": "x\n",
	}
	for name, body := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"locked.md", "wrapped/locked.md", "locked-dir"} {
		if err := os.Chmod(filepath.Join(repo, p), 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(repo, "locked-dir"), 0o755) }) // runs before RemoveAll

	self := filepath.Join(gateBin, "doc-sync")
	run := func(name string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		exe := filepath.Join(bin, name)
		if err := copyFile(self, exe); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, args...)
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("run %s: %v", name, err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}

	out, errs, code := run("verify-md-links", "-root", repo)
	if code != 2 {
		t.Errorf("verify-md-links exit %d, want 2\nstderr:\n%s", code, errs)
	}
	for _, want := range []string{
		"verify-md-links: locked.md: open: permission denied",
		"verify-md-links: locked-dir: open: permission denied",
		"verify-md-links: wrapped/locked.md: open: permission denied",
	} {
		if !strings.Contains(errs, want+"\n") {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, `a.md:1:1: broken link "gone.md": target does not exist`) {
		t.Errorf("the readable file's finding is missing:\n%s", out)
	}

	out, errs, code = run("verify-md-wrap", "-root", repo)
	if code != 2 || !strings.Contains(errs, "verify-md-wrap: locked.md: open: permission denied") ||
		!strings.Contains(out, `wrapped/two.md:1: paragraph spans 2 lines`) {
		t.Errorf("verify-md-wrap: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
