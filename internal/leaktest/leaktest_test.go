//go:build linux

package leaktest

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m, Options{}) }

// TestFindsWhatLeaks checks that each probe sees a leak of its kind: a child left running, a
// process carrying a tag, a descriptor left open.
func TestFindsWhatLeaks(t *testing.T) {
	before := Descriptors()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if after := Descriptors(); len(after) != len(before)+1 {
		t.Errorf("an open file: %d descriptors before, %d after", len(before), len(after))
	}
	f.Close()

	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), "LEAKTEST_MARK=x-"+strconv.Itoa(os.Getpid()))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	has := func(list []string) bool {
		return slices.ContainsFunc(list, func(s string) bool { return strings.HasPrefix(s, pid+" ") })
	}
	if !has(Children()) {
		t.Errorf("Children() = %v, missing the running child %s", Children(), pid)
	}
	if !has(Tagged("LEAKTEST_MARK=x-" + strconv.Itoa(os.Getpid()))) {
		t.Errorf("Tagged(exact) misses the tagged child %s", pid)
	}
	if !has(Tagged("LEAKTEST_MARK=x-*")) {
		t.Errorf("Tagged(prefix) misses the tagged child %s", pid)
	}
	if has(Tagged("LEAKTEST_MARK=y-*")) {
		t.Errorf("Tagged lists a child for a tag it does not carry")
	}
	killAll([]string{pid + " (S) sleep 60"})
	cmd.Wait()
	if has(Children()) {
		t.Errorf("Children() still lists %s after it was killed and reaped", pid)
	}
}
