package gates

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ExecFunc runs one gate to completion and returns its result. It is
// called from its own goroutine, once per gate.
type ExecFunc func(g Gate) Result

// ErrInterrupted is the reason given to gates that never started because
// the run was interrupted.
var ErrInterrupted = errors.New("not started: interrupted")

// Run validates graph and runs it on workers concurrent gates, calling
// exec for each gate that becomes ready and done (from the calling
// goroutine, one call at a time) as each gate settles. Ready gates start in
// declaration order. When nothing is running and nothing can start, each
// pending gate with a need that failed or was skipped is skipped with the
// reason "dependency failed or skipped: <ids>", without running.
// When ctx is done, gates not yet started are skipped with
// [ErrInterrupted] and Run waits for the running ones (stopping them is
// the caller's job, as only it knows which signal to send). Run returns the
// results in declaration order. It errors before running anything when
// the graph is invalid or workers is below 1.
func Run(ctx context.Context, graph []Gate, workers int, exec ExecFunc, done func(Result)) ([]Result, error) {
	if workers < 1 {
		return nil, fmt.Errorf("worker count must be a positive integer, got %d", workers)
	}
	if err := Validate(graph); err != nil {
		return nil, err
	}
	if done == nil {
		done = func(Result) {}
	}
	index := make(map[string]int, len(graph))
	for i, g := range graph {
		index[g.ID] = i
	}
	results := make([]Result, len(graph))
	status := make([]Status, len(graph)) // zero: pending
	started := make([]bool, len(graph))
	finished := make(chan int)
	running := 0

	settle := func(i int, r Result) {
		status[i] = r.Status
		results[i] = r
		done(r)
	}
	ready := func(i int) bool {
		for _, n := range graph[i].Needs {
			if status[index[n]] != Passed {
				return false
			}
		}
		for _, a := range graph[i].After {
			if status[index[a]] == 0 {
				return false
			}
		}
		return true
	}
	// skipBlocked skips every pending gate with a need that failed or was
	// skipped and reports whether it skipped any.
	skipBlocked := func() bool {
		changed := false
		for i, g := range graph {
			if started[i] || status[i] != 0 {
				continue
			}
			var bad []string
			for _, n := range g.Needs {
				if s := status[index[n]]; s == Failed || s == Skipped {
					bad = append(bad, n)
				}
			}
			if len(bad) > 0 {
				settle(i, Result{Gate: g, Status: Skipped, ExitCode: -1,
					Err: fmt.Errorf("dependency failed or skipped: %s", strings.Join(bad, ", "))})
				changed = true
			}
		}
		return changed
	}

	for {
		interrupted := ctx.Err() != nil
		for i := 0; i < len(graph) && running < workers && !interrupted; i++ {
			if started[i] || status[i] != 0 || !ready(i) {
				continue
			}
			started[i] = true
			running++
			go func(i int) {
				start := time.Now()
				r := exec(graph[i])
				r.Gate = graph[i]
				if r.Duration == 0 {
					r.Duration = time.Since(start)
				}
				results[i] = r
				finished <- i
			}(i)
		}
		if running == 0 && !interrupted {
			// Nothing runs and nothing could start: what is still pending
			// waits on a need that failed or was skipped.
			if skipBlocked() {
				continue
			}
		}
		if running == 0 {
			pending := slices.IndexFunc(status, func(s Status) bool { return s == 0 })
			if pending < 0 {
				return results, nil
			}
			if interrupted {
				for i, g := range graph {
					if status[i] == 0 {
						settle(i, Result{Gate: g, Status: Skipped, ExitCode: -1, Err: ErrInterrupted})
					}
				}
				return results, nil
			}
			// Validation rules this out; fail loudly rather than hang.
			return results, fmt.Errorf("scheduler stalled at gate %q", graph[pending].ID)
		}
		select {
		case i := <-finished:
			running--
			settle(i, results[i])
		case <-ctx.Done():
			// Wake up to stop starting gates; keep waiting for the
			// running ones.
			i := <-finished
			running--
			settle(i, results[i])
		}
	}
}
