// Package docsync implements doc-sync, the one command that runs every
// documentation gate. The gates are commands of this module; doc-sync
// links them all into its own binary and runs each as a child process of
// that binary under the gate's name (as a multi-call binary does), so one
// "go run ./scripts/doc-sync" compiles everything once and the gates run
// in parallel with no further build.
package docsync

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/scripts/internal/catalog"
	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/figures"
	"github.com/dsh-go/dsh/scripts/internal/gates"
	"github.com/dsh-go/dsh/scripts/internal/links"
	"github.com/dsh-go/dsh/scripts/internal/mdgo"
	"github.com/dsh-go/dsh/scripts/internal/modproxy"
	"github.com/dsh-go/dsh/scripts/internal/notices"
	"github.com/dsh-go/dsh/scripts/internal/rescope"
	"github.com/dsh-go/dsh/scripts/internal/rfc"
	"github.com/dsh-go/dsh/scripts/internal/wrap"
)

// MainFunc is the entry point of a gate command: it takes the arguments
// after the program name and returns the exit code.
type MainFunc func(args []string, stdout, stderr io.Writer) int

// Entry is one gate of doc-sync. A new gate joins by adding one Entry to
// [Table]: its command's name (the directory under scripts/), the package
// function that runs it, and its arguments after -root.
type Entry struct {
	Command string   // the command name, e.g. "verify-md-links"
	Main    MainFunc // runs the command in the child process
	Args    []string // arguments after "-root ROOT", e.g. {"-check"}
	Needs   []string // gate IDs (command names) that must pass first
	After   []string // gate IDs that must settle first
}

// Table lists the gates in the order they start, longest first, so the
// slowest one never starts last.
var Table = []Entry{
	{Command: "gen-notices", Main: notices.Main, Args: []string{"-check"}},
	{Command: "gen-catalog", Main: catalog.Main, Args: []string{"-check"}},
	{Command: "verify-md-go", Main: mdgo.Main},
	{Command: "verify-md-links", Main: links.Main},
	{Command: "verify-md-figures", Main: figures.Main},
	{Command: "verify-md-wrap", Main: wrap.Main},
	{Command: "verify-rfc", Main: rfc.Main},
	{Command: "rescope-vendor", Main: rescope.Main, Args: []string{"-check"}},
	{Command: "build-modproxy", Main: modproxy.Main, Args: []string{"-check"}},
}

// Lookup returns the Main of the gate command named name, or nil.
func Lookup(name string) MainFunc {
	for _, e := range Table {
		if e.Command == name {
			return e.Main
		}
	}
	return nil
}

// Graph returns the gates of table for the repository at root, each run
// as the executable self under its command name.
func Graph(table []Entry, self, root string) []gates.Gate {
	display := "go run ./scripts/%s"
	if wdRoot, err := cwdRoot(); err != nil || wdRoot != root {
		display += " -root " + root
	}
	var out []gates.Gate
	for _, e := range table {
		args := append([]string{e.Command, "-root", root}, e.Args...)
		out = append(out, gates.Gate{
			ID:      e.Command,
			Label:   strings.Join(append([]string{e.Command}, e.Args...), " "),
			Display: strings.Join(append([]string{fmt.Sprintf(display, e.Command)}, e.Args...), " "),
			Path:    self,
			Args:    args,
			Dir:     root,
			Needs:   e.Needs,
			After:   e.After,
		})
	}
	return out
}

func cwdRoot() (string, error) {
	r, err := cli.ResolveRoot("")
	return r, err
}

const usage = "doc-sync [-root DIR]"

// Main runs doc-sync with the full argument list argv (argv[0] included).
// When argv[0] names a gate command, it runs that gate instead: this is
// how doc-sync's children start. It returns the exit code: 0 when every
// gate passed, 1 when one failed or was skipped, 2 on a usage or setup
// error.
func Main(argv []string, stdout, stderr io.Writer) int {
	name := filepath.Base(argv[0])
	if m := Lookup(strings.TrimSuffix(name, ".exe")); m != nil {
		return m(argv[1:], stdout, stderr)
	}
	fs := cli.NewFlagSet("doc-sync", usage, stderr)
	root := cli.RootFlag(fs)
	if err := fs.Parse(argv[1:]); err != nil {
		return cli.ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "doc-sync: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cli.ExitError
	}
	dir, err := cli.ResolveRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "doc-sync: %v\n", err)
		return cli.ExitError
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "doc-sync: find own executable: %v\n", err)
		return cli.ExitError
	}
	return RunGates(Graph(Table, self, dir), stdout, stderr)
}

// Workers returns the number of gates to run at once for a graph of n
// gates: min(n, 4, CPUs), or the positive integer in
// DSH_GATE_CONCURRENCY. source says where the number came from.
func Workers(n int) (workers int, source string, err error) {
	if v := os.Getenv("DSH_GATE_CONCURRENCY"); v != "" {
		w, err := strconv.Atoi(v)
		if err != nil || w < 1 {
			return 0, "", fmt.Errorf("DSH_GATE_CONCURRENCY must be a positive integer, got %q", v)
		}
		return w, "DSH_GATE_CONCURRENCY", nil
	}
	cpus := runtime.NumCPU()
	return max(1, min(n, 4, cpus)), fmt.Sprintf("%d available CPU(s), cap 4", cpus), nil
}

// RunGates runs graph as doc-sync does and reports on stdout (one PASS
// line per passing gate) and stderr (the start line, the long form of
// each failed or skipped gate with its replayed output, and the summary).
// SIGINT and SIGTERM received meanwhile are forwarded to every running
// gate's process group and stop new gates from starting; a second one
// kills the groups. Every child is waited for before RunGates returns the
// exit code.
func RunGates(graph []gates.Gate, stdout, stderr io.Writer) int {
	workers, source, err := Workers(len(graph))
	if err != nil {
		fmt.Fprintf(stderr, "doc-sync: %v\n", err)
		return cli.ExitError
	}
	if err := gates.Validate(graph); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "doc-sync: %s\n", line)
		}
		return cli.ExitError
	}
	verbose := os.Getenv("DSH_GATE_VERBOSE") == "1"
	ex := &gates.Executor{Stdout: stdout, Stderr: stderr}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	watcherDone := make(chan struct{})
	stopWatcher := make(chan struct{})
	go func() {
		defer close(watcherDone)
		count := 0
		for {
			select {
			case sig := <-sigs:
				count++
				cancel()
				if count == 1 {
					fmt.Fprintf(stderr, "doc-sync: %v received; stopping the running gates (again to kill them)\n", sig)
					ex.Signal(sig)
				} else {
					ex.Signal(syscall.SIGKILL)
				}
			case <-stopWatcher:
				return
			}
		}
	}()

	fmt.Fprintf(stderr, "doc-sync: running %d gate(s) with %d worker(s) (%s).\n", len(graph), workers, source)
	start := time.Now()
	results, err := gates.Run(ctx, graph, workers, ex.Run, func(r gates.Result) {
		printResult(r, verbose, stdout, stderr)
		if r.Output != nil {
			r.Output.Close()
		}
	})
	close(stopWatcher)
	<-watcherDone
	if err != nil {
		fmt.Fprintf(stderr, "doc-sync: %v\n", err)
		return cli.ExitError
	}
	return summarize(results, time.Since(start), stderr)
}

func printResult(r gates.Result, verbose bool, stdout, stderr io.Writer) {
	secs := r.Duration.Seconds()
	if r.Status == gates.Passed && !verbose {
		fmt.Fprintf(stdout, "doc-sync: PASS %s (%.2fs)\n", r.Gate.Name(), secs)
		return
	}
	fmt.Fprintf(stderr, "\n== %s %s (%.2fs) ==\n", r.Status, r.Gate.Name(), secs)
	fmt.Fprintf(stderr, "command: %s\n", r.Gate.Command())
	outcome := r.Reason()
	if r.Status == gates.Passed {
		outcome = "passed"
	}
	fmt.Fprintf(stderr, "outcome: %s\n", outcome)
	if r.Output != nil {
		if err := r.Output.Replay(stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "doc-sync: replay output of %s: %v\n", r.Gate.Name(), err)
		}
	}
}

func summarize(results []gates.Result, took time.Duration, stderr io.Writer) int {
	var passed, failed, skipped int
	var bad []gates.Result
	code := cli.ExitClean
	for _, r := range results {
		switch r.Status {
		case gates.Passed:
			passed++
			continue
		case gates.Failed:
			failed++
		case gates.Skipped:
			skipped++
		}
		bad = append(bad, r)
		if !r.Gate.AllowFailure {
			code = cli.ExitFindings
		}
	}
	fmt.Fprintf(stderr, "\ndoc-sync: %d passed, %d failed, %d skipped in %.2fs.\n", passed, failed, skipped, took.Seconds())
	if len(bad) > 0 {
		fmt.Fprintln(stderr, "doc-sync: unsuccessful gates:")
		for _, r := range bad {
			nb := ""
			if r.Gate.AllowFailure {
				nb = "NON-BLOCKING "
			}
			fmt.Fprintf(stderr, "  - %s%s %s (%.2fs, %s)\n", nb, r.Status, r.Gate.Name(), r.Duration.Seconds(), r.Reason())
			fmt.Fprintf(stderr, "    %s\n", r.Gate.Command())
		}
	}
	return code
}
