//go:build linux

package persistentbash

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/tools"
)

// TestToolDescribesItself checks the title and the four hints the tool carries, which a harness
// shows without a table of its own, and the provider form of the tool list.
func TestToolDescribesItself(t *testing.T) {
	checkLeaks(t)
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	list := s.Tools()
	if len(list) != 1 || list[0] != s.Tool() {
		t.Fatalf("Tools() = %v, want [Tool()]", list)
	}
	want := tools.Annotations{DestructiveHint: true, OpenWorldHint: true}
	if tool := list[0]; tool.Title != "Run a command in a persistent bash shell" || tool.Annotations == nil || *tool.Annotations != want {
		t.Errorf("title %q, annotations %+v; want %q, %+v", tool.Title, tool.Annotations, ToolTitle, want)
	}
}

// TestReleaseKeepsOtherOwners checks that Release closes one owner's shell and the processes it
// started, before it returns, and leaves every other owner's shell, state and processes alone.
func TestReleaseKeepsOtherOwners(t *testing.T) {
	h := newHarness(t, Config{})
	pids := map[string]string{}
	for _, owner := range []string{"a", "b"} {
		h.expect(owner, "export MINE="+owner, "")
		pidFile := filepath.Join(h.dir, owner+".pid")
		if r := h.call(owner, "bash -c 'echo $$ > "+pidFile+"; exec sleep 300' >/dev/null 2>&1 &"); r.IsError {
			t.Fatal(r.Text())
		}
		waitFor(t, owner+"'s background job", func() bool {
			data, err := os.ReadFile(pidFile)
			return err == nil && strings.HasSuffix(string(data), "\n")
		})
		data, _ := os.ReadFile(pidFile)
		pids[owner] = strings.TrimSpace(string(data))
	}
	if err := h.s.Release("a"); err != nil {
		t.Fatalf("Release(a): %v", err)
	}
	if _, err := os.Stat("/proc/" + pids["a"]); err == nil {
		t.Errorf("a's job %s is alive after Release(a) returned", pids["a"])
	}
	if _, err := os.Stat("/proc/" + pids["b"]); err != nil {
		t.Errorf("b's job %s died with Release(a): %v", pids["b"], err)
	}
	h.expect("b", "echo $MINE; kill -0 "+pids["b"]+" && echo alive", "b\nalive")
	for _, owner := range []string{"", "nobody", "a"} {
		if err := h.s.Release(owner); err != nil {
			t.Errorf("Release(%q) with nothing to release: %v", owner, err)
		}
	}
	h.expect("a", "echo ${MINE:-fresh}", "fresh")
	h.expect("b", "echo $MINE", "b")
}

// TestCloseIsIdempotent checks that a second Close, concurrent or later, waits for the first and
// returns what it returned, and that calls after Close are refused.
func TestCloseIsIdempotent(t *testing.T) {
	h := newHarness(t, Config{})
	h.expect("a", "true", "")
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- h.s.Close(context.Background()) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if r := h.call("a", "true"); !r.IsError || r.Text() != "Error: "+ErrClosed.Error() {
		t.Errorf("after Close: %q", r.Text())
	}
}

// TestCloseBoundedByContext checks that Close honours its context: a process that ignores
// SIGTERM and SIGHUP is killed at once when ctx ends, instead of after a long KillGrace, and Close
// returns ctx's error once it is gone.
func TestCloseBoundedByContext(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	s, err := New(Config{Workdir: dir, KillGrace: 10 * time.Second, Env: map[string]string{"HOME": dir}}) // not newHarness: its cleanup wants a clean Close
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, s: s, dir: dir}
	if _, err := h.reg.Register(s.Tool()); err != nil {
		t.Fatal(err)
	}
	child := h.stubbornChild("a")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "persistentbash: close: ") {
		t.Fatalf("Close with a short context: %v, want persistentbash: close: … deadline exceeded", err)
	}
	if _, err := os.Stat("/proc/" + child); err == nil {
		t.Fatalf("child %s alive after Close returned", child)
	}
}
