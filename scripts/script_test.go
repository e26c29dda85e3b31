package scripts_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/scripts/internal/catalog"
	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/docsync"
	"github.com/dsh-go/dsh/scripts/internal/gates"
	"github.com/dsh-go/dsh/scripts/internal/links"
	"github.com/dsh-go/dsh/scripts/internal/notices"
	"github.com/dsh-go/dsh/scripts/internal/rescope"
	"github.com/dsh-go/dsh/scripts/internal/rfc"
	"github.com/dsh-go/dsh/scripts/internal/wrap"
	"github.com/rogpeppe/go-internal/testscript"
)

// The commands under test run as real processes: testscript installs this
// test binary under each name and dispatches on argv[0], exactly as
// doc-sync does for its own children.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"verify-md-links": func() { os.Exit(links.Main(os.Args[1:], os.Stdout, os.Stderr)) },
		"verify-md-wrap":  func() { os.Exit(wrap.Main(os.Args[1:], os.Stdout, os.Stderr)) },
		"verify-rfc":      func() { os.Exit(rfc.Main(os.Args[1:], os.Stdout, os.Stderr)) },
		"doc-sync":        func() { os.Exit(docsync.Main(os.Args, os.Stdout, os.Stderr)) },
		"gen-catalog":     func() { os.Exit(catalog.Main(os.Args[1:], os.Stdout, os.Stderr)) },
		"rescope-vendor":  func() { os.Exit(rescope.Main(os.Args[1:], os.Stdout, os.Stderr)) },
		"gen-notices":     func() { os.Exit(notices.Main(os.Args[1:], os.Stdout, os.Stderr)) },
		// run-gates GRAPH.json runs a gate graph of fake gates through
		// doc-sync's scheduler and reporting (test only).
		"run-gates": runGates,
	})
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

func TestScripts(t *testing.T) {
	repo, err := cli.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	// gen-notices reads license files from the module cache, which
	// lies under HOME by default; scenarios keep the real one (doc-sync
	// on this repository needs it) unless they set their own.
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", repo)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("HOME", filepath.Join(env.WorkDir, ".home"))
			env.Setenv("GOMODCACHE", strings.TrimSpace(string(modcache)))
			// Every scenario is a repository root unless it removes this.
			return os.WriteFile(filepath.Join(env.WorkDir, "go.work"), []byte("go 1.26\n"), 0o644)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile": waitFile,
			"pidgone":  pidGone,
			"repeat":   repeat,
			"signal":   sendSignal,
			"mvq":      moveQuoted,
			"concat":   concat,
		},
	})
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
