// Package leaktest is the leak check every test binary of this repository runs: no goroutine, no
// file descriptor, no child process and no tagged process may outlive the tests that started
// them. It replaces a hand-written checker per module.
//
// A package's TestMain calls Main (or wraps its testing.M with Wrap for testscript.Main); a test
// that owns processes or descriptors may also call Check for a per-test verdict.
package leaktest

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/internal/proctree"
)

// Settle is how long the checks wait for processes that were killed to be gone and reaped, and
// for goroutines that are ending.
const Settle = 5 * time.Second

// Options select what the end-of-binary check covers. The zero value checks goroutines,
// descriptors and child processes.
type Options struct {
	// Tags are environment entries ("NAME=value") whose carriers must all be gone; with a
	// trailing "*" an entry matches every value that starts with what precedes it.
	Tags func() []string
	// IgnoreGoroutines are top functions of goroutines that may stay (goleak.IgnoreTopFunction).
	IgnoreGoroutines []string
	// KeepGC leaves the garbage collector on. By default it is off while the tests run, so that a
	// leaked *os.File is not silently closed by its finalizer before the descriptor count.
	KeepGC bool
	// After runs after the tests and before the checks (stopping a shared server, say).
	After func()
}

// M is what testing.M and the wrapper Wrap returns have in common (testscript.Main takes one).
type M interface{ Run() int }

// Wrap returns m with the checks of opts run after it, for a TestMain that hands its M to
// another runner, such as testscript.Main.
func Wrap(m M, opts Options) M { return wrapped{m, opts} }

type wrapped struct {
	m    M
	opts Options
}

func (w wrapped) Run() int {
	before := prepare(w.opts)
	code := w.m.Run()
	if w.opts.After != nil {
		w.opts.After()
	}
	if code != 0 {
		return code
	}
	if err := check(before, w.opts); err != nil {
		fmt.Fprintln(os.Stderr, "leaktest:", err)
		return 1
	}
	return 0
}

// Main runs the tests of m, then the checks of opts, and exits: 1 when a test failed or something
// leaked.
func Main(m *testing.M, opts Options) { os.Exit(Wrap(m, opts).Run()) }

// prepare warms up what the runtime opens once per process (the poller's descriptors), turns the
// collector off unless asked not to, and returns the descriptors open now.
func prepare(opts Options) []string {
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	flag.Parse()
	if f := flag.Lookup("test.bench"); !opts.KeepGC && (f == nil || f.Value.String() == "") {
		debug.SetGCPercent(-1)
	}
	return Descriptors()
}

func check(before []string, opts Options) error {
	var problems []string
	var ignore []goleak.Option
	for _, fn := range opts.IgnoreGoroutines {
		ignore = append(ignore, goleak.IgnoreTopFunction(fn))
	}
	if err := goleak.Find(ignore...); err != nil {
		problems = append(problems, "leaked goroutines: "+err.Error())
	}
	if left := waitGone(func() []string { return processes(opts) }); len(left) > 0 {
		problems = append(problems, "leaked processes:\n  "+strings.Join(left, "\n  "))
	}
	if after := Descriptors(); len(after) > len(before) {
		problems = append(problems, fmt.Sprintf("leaked file descriptors: %d open before the tests, %d after: %v", len(before), len(after), after))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(problems, "\n"))
}

func processes(opts Options) []string {
	out := Children()
	if opts.Tags != nil {
		for _, tag := range opts.Tags() {
			out = append(out, Tagged(tag)...)
		}
	}
	return out
}

// waitGone polls list until it is empty or Settle has passed, and returns what is left.
func waitGone(list func() []string) []string {
	deadline := time.Now().Add(Settle)
	for {
		left := list()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond) // polling for exits to settle, bounded by deadline
	}
}

// Check registers a cleanup on t, run after every cleanup registered later (so after the test
// closed what it opened), that fails t when a goroutine, a descriptor, a child process or a
// process carrying one of tags ("NAME=value", or "NAME=prefix*") started during the test is
// left. Leftover processes are killed.
func Check(t testing.TB, tags ...string) {
	t.Helper()
	before := Descriptors()
	t.Cleanup(func() {
		goleak.VerifyNone(t, goleak.IgnoreCurrent())
		left := waitGone(func() []string { return processes(Options{Tags: func() []string { return tags }}) })
		if len(left) > 0 {
			t.Errorf("processes left behind: %s", strings.Join(left, "; "))
			killAll(left)
		}
		if after := Descriptors(); len(after) > len(before) {
			t.Errorf("file descriptors: %d at start, %d at end: %v", len(before), len(after), after)
		}
	})
}

// Descriptors returns this process's open file descriptors, each as "FD->TARGET" where the system
// says what it refers to.
func Descriptors() []string {
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		target, _ := os.Readlink(dir + "/" + e.Name())
		out = append(out, e.Name()+"->"+target)
	}
	return out
}

// Children returns the live child processes of this process (zombies are not counted: they
// hold nothing), as "PID (STATE)", where the system can list them.
func Children() []string {
	all, ok := proctree.Snapshot()
	if !ok {
		return nil
	}
	self := os.Getpid()
	var out []string
	for _, st := range all {
		if st.PPID == self && !st.Dead() {
			out = append(out, describe(st))
		}
	}
	return out
}

// Tagged returns the live processes whose environment holds tag ("NAME=value"; a trailing "*"
// matches every value that starts with what precedes it), as "PID (STATE)".
func Tagged(tag string) []string {
	all, ok := proctree.Snapshot()
	if !ok {
		return nil
	}
	entry, prefix := strings.CutSuffix(tag, "*")
	self := os.Getpid()
	var out []string
	for _, st := range all {
		if st.PID != self && !st.Dead() && proctree.HasTag(st.PID, entry, prefix) {
			out = append(out, describe(st))
		}
	}
	return out
}

func describe(st proctree.Stat) string {
	cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/cmdline")
	return fmt.Sprintf("%d (%c) %s", st.PID, st.State, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")))
}

// killAll sends SIGKILL to the processes a report lists, so one leaking test does not spoil the
// next.
func killAll(left []string) {
	var pids []int
	for _, l := range left {
		if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	for _, pid := range slices.Compact(pids) {
		if st, ok := proctree.ReadStat(pid); ok {
			proctree.Signal(st, 9)
		}
	}
}
