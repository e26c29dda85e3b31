package scripts_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/docsync"
	"github.com/dsh-go/dsh/scripts/internal/gates"
	"github.com/rogpeppe/go-internal/testscript"
)

// gateBin is the directory of the gate commands the scenarios run: the
// doc-sync binary, built once by TestMain, and a symlink to it under each
// gate's name (doc-sync runs the gate its argv[0] names, as it does for
// its own children).
var gateBin string

// TestMain builds the gate commands once, then runs the tests. The
// commands under test run as real processes: the doc-sync binary that
// "go run ./scripts/doc-sync" builds, with the same flags, so the build
// cache that doc-sync warms serves it. It is built without the race
// detector (licensecheck alone takes seconds to start under it, in every
// gen-notices process); the race detector covers the gates' concurrent
// code in their package tests, and run-gates, the scheduler under test,
// is this test binary, dispatched by testscript on argv[0].
func TestMain(m *testing.M) {
	testscript.Main(buildFirst{m}, map[string]func(){
		// run-gates GRAPH.json runs a gate graph of fake gates through
		// doc-sync's scheduler and reporting (test only).
		"run-gates": runGates,
	})
}

// buildFirst runs the tests of m after building the gate commands into
// gateBin, and removes them afterwards.
type buildFirst struct{ m *testing.M }

func (b buildFirst) Run() int {
	dir, err := os.MkdirTemp("", "scripts-gates-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil { // perm_test runs a copy as nobody
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "doc-sync"), "./doc-sync")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build the gate commands: %v\n", err)
		return 1
	}
	for _, e := range docsync.Table {
		if err := os.Symlink("doc-sync", filepath.Join(dir, e.Command)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	gateBin = dir
	return b.m.Run()
}

func runGates() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: run-gates GRAPH.json")
		os.Exit(cli.ExitError)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(cli.ExitError)
	}
	var graph []gates.Gate
	if err := json.Unmarshal(b, &graph); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(cli.ExitError)
	}
	os.Exit(docsync.RunGates(graph, os.Stdout, os.Stderr))
}

// goEnv returns the go command's settings named by keys, as it sees them.
func goEnv(t *testing.T, keys ...string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"env", "-json"}, keys...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{}
	if err := json.Unmarshal(out, &vals); err != nil {
		t.Fatal(err)
	}
	return vals
}

// TestScripts runs the scenarios of testdata/script. Each starts in a
// repository root of its own, with the module proxy off (GOPROXY=off): a
// scenario that needs the network sets GOPROXY=$HOSTGOPROXY, the
// caller's, and one that needs the caller's module cache under another
// name finds it in $HOSTGOMODCACHE. The module cache, build cache and go configuration file are
// the caller's, so gen-notices finds the license files this repository's
// modules bring and nothing is compiled twice, unless a scenario sets its
// own.
func TestScripts(t *testing.T) {
	repo, err := cli.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	host := goEnv(t, "GOMODCACHE", "GOCACHE", "GOENV", "GOPROXY")
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", gateBin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("REPO", repo)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("HOME", filepath.Join(env.WorkDir, ".home"))
			for _, k := range []string{"GOMODCACHE", "GOCACHE", "GOENV"} {
				env.Setenv(k, host[k])
			}
			env.Setenv("GOPROXY", "off")
			env.Setenv("HOSTGOPROXY", host["GOPROXY"])
			env.Setenv("HOSTGOMODCACHE", host["GOMODCACHE"])
			// A race-enabled process waits a second before it exits (to
			// catch races at exit); run-gates needs no such wait.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			// Every scenario is a repository root unless it removes this.
			return os.WriteFile(filepath.Join(env.WorkDir, "go.work"), []byte("go 1.26\n"), 0o644)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile": waitFile,
			"pidgone":  pidGone,
			"repeat":   repeat,
			"signal":   sendSignal,
			"exits":    exits,
			"mvq":      moveQuoted,
			"concat":   concat,
		},
	})
}

// exits N PROG [ARG...] runs PROG as exec does and checks that it exits
// with status N; its output is what stdout and stderr then match.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROG [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// waitfile FILE waits (up to 20s) until FILE exists.
func waitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	poll(ts, "file "+args[0], func() bool {
		_, err := os.Stat(ts.MkAbs(args[0]))
		return err == nil
	})
}

// signal TERM|INT sends the signal to every background command.
func sendSignal(ts *testscript.TestScript, neg bool, args []string) {
	sigs := map[string]os.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT}
	if neg || len(args) != 1 || sigs[args[0]] == nil {
		ts.Fatalf("usage: signal TERM|INT")
	}
	for _, c := range ts.BackgroundCmds() {
		ts.Check(c.Process.Signal(sigs[args[0]]))
	}
}

// pidgone FILE... waits (up to 20s) until no process whose PID is written
// in each FILE is alive (a zombie counts as gone).
func pidGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: pidgone FILE...")
	}
	for _, f := range args {
		pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(f)))
		ts.Check(err)
		poll(ts, fmt.Sprintf("process %d to end", pid), func() bool {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				return true
			}
			s := string(b)
			i := strings.LastIndexByte(s, ')')
			return i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
		})
	}
}

func poll(ts *testscript.TestScript, what string, cond func() bool) {
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			ts.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mvq FROM "TO" renames FROM to TO, a Go string literal, so that a
// scenario can make file names no txtar header can hold (a newline).
func moveQuoted(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mvq FROM \"TO\"")
	}
	to, err := strconv.Unquote(args[1])
	ts.Check(err)
	ts.Check(os.Rename(ts.MkAbs(args[0]), ts.MkAbs(to)))
}

// concat OUT IN... writes the files IN, one after the other, to OUT.
func concat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: concat OUT IN...")
	}
	var b []byte
	for _, in := range args[1:] {
		b = append(b, ts.ReadFile(in)...)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
}

// repeat FILE N TEXT [TAIL] writes TEXT N times, then TAIL, to FILE ("\n"
// in TEXT and TAIL is a newline). It makes inputs too big to inline.
func repeat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: repeat FILE N TEXT [TAIL]")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	unq := func(s string) string { return strings.ReplaceAll(s, `\n`, "\n") }
	s := strings.Repeat(unq(args[2]), n)
	if len(args) == 4 {
		s += unq(args[3])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(s), 0o644))
}
