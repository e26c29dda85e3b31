package bashlocal

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
)

// inheritedFDVar makes the test binary the harness of TestNoInheritedDescriptors: it runs one
// command, which lists the files its descriptors name, and prints what the command printed.
const inheritedFDVar = "BASHLOCAL_TEST_INHERITED_FD"

// inheritedFDHelper runs as that harness when the variable is set, then exits.
func inheritedFDHelper() {
	if os.Getenv(inheritedFDVar) == "" {
		return
	}
	ex, err := New(Config{})
	if err == nil {
		var res bash.RunResult
		res, err = ex.Run(context.Background(), bash.Request{Command: `for f in /proc/self/fd/*; do readlink "$f"; done`})
		fmt.Print(res.Stdout.Text())
		ex.Close(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestNoInheritedDescriptors starts a harness with a descriptor its parent left open (not
// close-on-exec, as a parent's descriptors are at exec): the command must not see it.
func TestNoInheritedDescriptors(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	leaked := filepath.Join(t.TempDir(), "parent-descriptor")
	f, err := os.Create(leaked)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), inheritedFDVar+"=1")
	cmd.ExtraFiles = []*os.File{f} // fd 3 in the harness, without close-on-exec
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness: %v (%s)", err, out)
	}
	if !strings.Contains(string(out), "/dev/null") { // the listing itself ran (stdin)
		t.Fatalf("the command listed nothing: %q", out)
	}
	if strings.Contains(string(out), leaked) {
		t.Errorf("the command inherited the parent's descriptor: %q", out)
	}
}
