//go:build linux

package bashlocal

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/proctree"
)

// escapees are commands that leave processes behind in different ways; each writes the pid of
// the process that must not survive into the file named by $PIDFILE, then blocks.
var escapees = []struct {
	name    string
	command string
}{
	{"background child in the group", `sleep 600 & echo $! > "$PIDFILE"; wait`},
	{"nohup child", `nohup sleep 600 >/dev/null 2>&1 & echo $! > "$PIDFILE"; wait`},
	{"TERM-trapping child", `bash -c 'trap "" TERM; echo $$ > "$PIDFILE"; while :; do sleep 1; done' & wait`},
	{"setsid escapee", `setsid bash -c 'echo $$ > "$PIDFILE"; exec sleep 600' </dev/null >/dev/null 2>&1 & sleep 600`},
	{"double-forked daemon", `( setsid bash -c '( trap "" TERM HUP; echo $BASHPID > "$PIDFILE"; exec sleep 600 ) & exit 0' & ) </dev/null >/dev/null 2>&1; sleep 600`},
}

func TestNoOrphansOnKill(t *testing.T) {
	t.Parallel()
	for _, tc := range escapees {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, Config{})
			path, pid := pidFile(t, "pid")
			r := h.req(tc.command)
			r.Env["PIDFILE"] = path
			task := h.start(r)
			child := pid()
			if !alive(child) {
				t.Fatalf("the escapee %d is not running", child)
			}
			h.ex.Kill(task.ID())
			waitDone(t, task)
			waitFor(t, "the escapee to be killed", func() bool { return !alive(child) })
		})
	}
}

func TestNoOrphansOnTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range escapees {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, Config{})
			path, pid := pidFile(t, "pid")
			r := h.req(tc.command)
			r.Env["PIDFILE"] = path
			r.Timeout = 30 * time.Second
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The timeout case and the abort case share the stop path; abort once the pid is
			// known so the test does not depend on timing.
			go func() { pid(); cancel() }()
			res, err := h.ex.Run(ctx, h.spec(r))
			if err != nil || !res.Aborted {
				t.Fatalf("Run = %+v, %v; want aborted", res, err)
			}
			child := pid()
			waitFor(t, "the escapee to be killed", func() bool { return !alive(child) })
		})
	}
}

func TestNoOrphansOnClose(t *testing.T) {
	t.Parallel()
	for _, tc := range escapees {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, Config{})
			path, pid := pidFile(t, "pid")
			r := h.req(tc.command)
			r.Env["PIDFILE"] = path
			h.start(r)
			child := pid()
			if err := h.ex.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if alive(child) {
				t.Errorf("escapee %d alive after Close returned", child)
			}
		})
	}
}

// TestNoOrphansAfterForegroundRun covers processes a finished foreground run left behind, in
// and out of its group: Close must find and stop them.
func TestNoOrphansAfterForegroundRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Limits: bash.Limits{Grace: 100 * time.Millisecond}})
	path1, pid1 := pidFile(t, "in-group")
	path2, pid2 := pidFile(t, "setsid")
	res := h.run(h.req(`sleep 600 >/dev/null 2>&1 & echo $! > ` + path1 + `; setsid bash -c 'echo $$ > ` + path2 + `; exec sleep 600' </dev/null >/dev/null 2>&1 & echo done`))
	if res.Stdout.Text() != "done\n" {
		t.Fatalf("stdout %q", res.Stdout.Text())
	}
	a, b := pid1(), pid2()
	if !alive(a) || !alive(b) {
		t.Fatal("the survivors are not running")
	}
	if err := h.ex.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if alive(a) || alive(b) {
		t.Errorf("survivors alive after Close: %d=%v %d=%v", a, alive(a), b, alive(b))
	}
}

// TestEscapeesReapedUnderSubreaper covers the harness as the child subreaper of its commands
// (New makes it one): an escapee that was re-parented to the harness must be reaped once killed,
// not left as a zombie child forever.
func TestEscapeesReapedUnderSubreaper(t *testing.T) {
	h := newHarness(t, Config{})
	var v int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0); err != nil || v != 1 {
		t.Fatalf("after New the process is not a child subreaper: %d, %v", v, err)
	}
	path, pid := pidFile(t, "pid")
	r := h.req(`( setsid bash -c 'echo $BASHPID > "$PIDFILE"; exec sleep 600' & ) </dev/null >/dev/null 2>&1; sleep 600`)
	r.Env["PIDFILE"] = path
	task := h.start(r)
	child := pid()
	waitFor(t, "the escapee to be re-parented to the test process", func() bool {
		st, ok := proctree.ReadStat(child)
		return ok && st.PPID == os.Getpid()
	})
	h.ex.Kill(task.ID())
	waitDone(t, task)
	waitFor(t, "the escapee to be reaped", func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(child))
		return os.IsNotExist(err)
	})
}
