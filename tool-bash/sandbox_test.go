//go:build linux

package toolbash

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

// TestSandboxedBash checks what the model sees of a sandboxed executor: the policy in the
// description, a denial marker, and an unsandboxed run that needs an approval it cannot give
// itself.
func TestSandboxedBash(t *testing.T) {
	wd, outside := t.TempDir(), t.TempDir()
	ex := localExecutor(t, bashlocal.Config{Workdir: wd, Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}})
	var asked []string
	approve := func(_ context.Context, _ tools.Call, command, why string) (bool, error) {
		asked = append(asked, command+" / "+why)
		return why == "it must write there", nil
	}
	refusing := newHarness(t, ex, Config{})
	approving := newHarness(t, ex, Config{ApproveUnsandboxed: approve})
	if d := refusing.set.Tools()[0].Description; !strings.Contains(d, "Commands run in a sandbox (workspace-write, network off;") || !strings.Contains(d, "`sandbox: \"off\"`") {
		t.Errorf("the description does not state the sandbox:\n%s", d)
	}
	target := filepath.Join(outside, "f")
	write := `"command":"echo x > ` + target + `","description":"Write outside"`
	if out := refusing.ok(nil, "bash", `{`+write+`}`); !strings.Contains(out, "[sandbox: write outside the workspace denied: "+target+"]") {
		t.Errorf("denied write renders as %q", out)
	}
	for _, tc := range []struct{ args, want string }{
		{`{` + write + `,"sandbox":"none"}`, `invalid sandbox: the only value is "off", got "none"`},
		{`{` + write + `,"sandbox":"off"}`, `invalid justification`},
		{`{` + write + `,"sandbox":"off","justification":"please"}`, `needs a person's approval, and no approver is configured`},
	} {
		if res := refusing.fail(nil, "bash", tc.args); !strings.Contains(res.Text(), tc.want) {
			t.Errorf("%s: %q, want %q", tc.args, res.Text(), tc.want)
		}
	}
	if res := approving.fail(nil, "bash", `{`+write+`,"sandbox":"off","justification":"please"}`); !strings.Contains(res.Text(), "was refused; the command did not run") {
		t.Errorf("a refused approval: %q", res.Text())
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the command ran outside the sandbox without an approval")
	}
	approving.ok(nil, "bash", `{`+write+`,"sandbox":"off","justification":"it must write there"}`)
	if _, err := os.Stat(target); err != nil || len(asked) != 2 {
		t.Fatalf("an approved call did not run unsandboxed: %v (asked %q)", err, asked)
	}
}

func TestUnsandboxedDescriptionUnchanged(t *testing.T) {
	h := newLocalHarness(t, bashlocal.Config{})
	if d := h.set.Tools()[0].Description; d != bashDescription {
		t.Errorf("an unsandboxed executor changed the description:\n%s", d)
	}
}
