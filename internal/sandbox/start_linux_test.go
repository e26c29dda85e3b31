package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// confined runs script under bash -c, confined by p, and returns its output and error.
func confined(t *testing.T, p *Prepared, script string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("bash", "-c", script)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := p.Start(cmd); err != nil {
		t.Fatalf("Start: %v", err)
	}
	err := cmd.Wait()
	return out.String(), err
}

func prepare(t *testing.T, opts Options, policy Policy) *Prepared {
	t.Helper()
	if missing := Probe().Missing(); len(missing) > 0 {
		t.Skipf("this machine cannot sandbox: %v", missing) // TestFailClosed covers it
	}
	sb := New(opts)
	t.Cleanup(sb.Close)
	p, err := sb.Prepare(policy)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStartLeavesNoConfinedThread checks that once Start returns, no thread of this process is
// left with the command's seccomp filter or no_new_privs: the thread that started it is gone.
func TestStartLeavesNoConfinedThread(t *testing.T) {
	p := prepare(t, Options{}, Policy{Writable: []string{t.TempDir()}})
	for range 20 {
		if out, err := confined(t, p, "true"); err != nil {
			t.Fatalf("true: %v %s", err, out)
		}
		tasks, _ := filepath.Glob("/proc/self/task/*/status")
		for _, status := range tasks {
			data, err := os.ReadFile(status)
			if err != nil {
				continue // a thread that just ended
			}
			if strings.Contains(string(data), "NoNewPrivs:\t1") || strings.Contains(string(data), "Seccomp:\t2") {
				t.Fatalf("%s is still confined:\n%s", status, data)
			}
		}
	}
}

// TestRulesFollowNewEntries checks that a directory listed to leave out a deny path is listed
// again once it gains an entry: the new entry is readable, the deny path still is not.
func TestRulesFollowNewEntries(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{"old": "old", ".ssh/key": "secret"} {
		os.MkdirAll(filepath.Dir(filepath.Join(home, name)), 0o755)
		os.WriteFile(filepath.Join(home, name), []byte(body), 0o644)
	}
	sb := New(Options{})
	t.Cleanup(sb.Close)
	policy := Policy{Writable: []string{work}, DenyRead: []string{filepath.Join(home, ".ssh")}}
	read := func() string {
		p, err := sb.Prepare(policy)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := confined(t, p, "cd "+home+" && cat old new .ssh/key")
		return out
	}
	if out := read(); !strings.Contains(out, "old") || strings.Contains(out, "secret") {
		t.Fatalf("before: %q", out)
	}
	os.WriteFile(filepath.Join(home, "new"), []byte("new"), 0o644)
	if out := read(); !strings.Contains(out, "new") || strings.Contains(out, "secret") {
		t.Fatalf("after a new entry: %q", out)
	}
}

func TestFilterJumpsStayInside(t *testing.T) {
	for _, network := range []bool{false, true} {
		prog := filter(network)
		for pc, ins := range prog {
			if ins.Code&0x07 == 0x05 && ins.Code != 0x05 { // conditional jumps
				if pc+1+int(ins.Jt) >= len(prog) || pc+1+int(ins.Jf) >= len(prog) {
					t.Errorf("network=%v: instruction %d jumps out of the program", network, pc)
				}
			}
		}
	}
}
