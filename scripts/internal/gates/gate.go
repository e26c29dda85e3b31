// Package gates runs a graph of checks ("gates") as child processes with a
// small scheduler: the graph is validated before anything starts, ready
// gates start in declaration order on a fixed number of workers, a gate
// whose "needs" did not pass is skipped, a gate waits for its "after"
// gates to settle whatever their outcome, and each gate's output is kept
// (in memory, then in a temporary file) so it can be replayed when the gate
// fails. doc-sync is its user; the scheduler takes the function that runs
// one gate, so tests can run it on fakes.
package gates

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Gate is one check. It is run without a shell.
type Gate struct {
	ID    string // unique in the graph
	Label string // shown in output; the ID when empty
	// Display is the command a person runs to reproduce the gate; Args
	// joined by spaces when empty.
	Display string
	// Path is the executable; when empty, Args[0] is looked up on PATH.
	Path string
	// Args is the full argument list, Args[0] included (it may differ from
	// Path: doc-sync runs its own binary under each gate's name).
	Args []string
	Dir  string   // working directory; the caller's when empty
	Env  []string // added to the caller's environment
	// Needs lists gates that must pass before this one starts; if one
	// fails or is skipped, this gate is skipped.
	Needs []string
	// After lists gates that must settle (pass, fail or be skipped) before
	// this one starts.
	After []string
	// AllowFailure keeps a failure of this gate from failing the run.
	AllowFailure bool
	// Stream writes the gate's output live instead of keeping it.
	Stream bool
}

// Name returns the label, or the ID when there is none.
func (g Gate) Name() string {
	if g.Label != "" {
		return g.Label
	}
	return g.ID
}

// Command returns the command line shown to a person.
func (g Gate) Command() string {
	if g.Display != "" {
		return g.Display
	}
	return strings.Join(g.Args, " ")
}

// Status is how a gate settled.
type Status int

// Statuses.
const (
	Passed Status = iota + 1
	Failed
	Skipped
)

func (s Status) String() string {
	switch s {
	case Passed:
		return "PASS"
	case Failed:
		return "FAILED"
	case Skipped:
		return "SKIPPED"
	}
	return "PENDING"
}

// Result is how one gate ended.
type Result struct {
	Gate     Gate
	Status   Status
	ExitCode int    // -1 when the process did not exit normally or never ran
	Signal   string // "SIGTERM" when a signal ended the process
	Err      error  // a start failure, or why the gate was skipped
	Duration time.Duration
	Output   *Output // nil for streamed and skipped gates
}

// Reason is the outcome in words: the error, "exit N" and "signal SIG"
// joined by ", ", or "no exit code or signal" when none applies.
func (r Result) Reason() string {
	var parts []string
	if r.Err != nil {
		parts = append(parts, r.Err.Error())
	}
	if r.ExitCode >= 0 {
		parts = append(parts, fmt.Sprintf("exit %d", r.ExitCode))
	}
	if r.Signal != "" {
		parts = append(parts, "signal "+r.Signal)
	}
	if len(parts) == 0 {
		return "no exit code or signal"
	}
	return strings.Join(parts, ", ")
}

// Validate checks the graph before anything runs: it must have gates,
// unique IDs, known "needs" and "after" targets, and no cycle through
// either kind of edge. It returns every problem, joined.
func Validate(graph []Gate) error {
	if len(graph) == 0 {
		return errors.New("gate graph has no gates")
	}
	var errs []error
	index := make(map[string]int, len(graph))
	for i, g := range graph {
		if g.ID == "" {
			errs = append(errs, fmt.Errorf("gate %d has no id", i+1))
			continue
		}
		if _, dup := index[g.ID]; dup {
			errs = append(errs, fmt.Errorf("duplicate gate id %q", g.ID))
			continue
		}
		index[g.ID] = i
	}
	for _, g := range graph {
		for _, n := range g.Needs {
			if _, ok := index[n]; !ok {
				errs = append(errs, fmt.Errorf("gate %q depends on unknown gate %q", g.ID, n))
			}
		}
		for _, a := range g.After {
			if _, ok := index[a]; !ok {
				errs = append(errs, fmt.Errorf("gate %q waits for unknown gate %q", g.ID, a))
			}
		}
		if len(g.Args) == 0 && g.Path == "" {
			errs = append(errs, fmt.Errorf("gate %q has no command", g.ID))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if cycle := findCycle(graph, index); cycle != nil {
		return fmt.Errorf("dependency cycle: %s", strings.Join(cycle, " -> "))
	}
	return nil
}

// findCycle returns the first cycle found by a depth-first search over
// both edge kinds, as a path that starts and ends at the same ID, or nil.
func findCycle(graph []Gate, index map[string]int) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(graph))
	var path []string
	var visit func(i int) []string
	visit = func(i int) []string {
		state[i] = onPath
		path = append(path, graph[i].ID)
		for _, dep := range append(append([]string(nil), graph[i].Needs...), graph[i].After...) {
			j := index[dep]
			switch state[j] {
			case onPath:
				start := 0
				for k, id := range path {
					if id == dep {
						start = k
					}
				}
				return append(append([]string(nil), path[start:]...), dep)
			case unseen:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = done
		return nil
	}
	for i := range graph {
		if state[i] == unseen {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}
