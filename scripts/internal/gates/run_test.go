package gates

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func g(id string, needs, after []string) Gate {
	return Gate{ID: id, Args: []string{"true"}, Needs: needs, After: after}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		graph []Gate
		want  string // "" for valid
	}{
		{"empty graph", nil, "gate graph has no gates"},
		{"duplicate id", []Gate{g("a", nil, nil), g("a", nil, nil)}, `duplicate gate id "a"`},
		{"unknown need", []Gate{g("a", []string{"x"}, nil)}, `gate "a" depends on unknown gate "x"`},
		{"unknown after", []Gate{g("a", nil, []string{"y"})}, `gate "a" waits for unknown gate "y"`},
		{"no command", []Gate{{ID: "a"}}, `gate "a" has no command`},
		{"self cycle", []Gate{g("a", []string{"a"}, nil)}, "dependency cycle: a -> a"},
		{"needs cycle", []Gate{g("first", []string{"second"}, nil), g("second", []string{"first"}, nil)}, "dependency cycle: first -> second -> first"},
		{"mixed needs/after cycle", []Gate{g("first", []string{"second"}, nil), g("second", nil, []string{"first"})}, "dependency cycle: first -> second -> first"},
		{"long cycle behind a valid gate", []Gate{g("ok", nil, nil), g("a", []string{"b"}, nil), g("b", nil, []string{"c"}), g("c", []string{"a"}, nil)}, "dependency cycle: a -> b -> c -> a"},
		{"all problems listed", []Gate{g("a", []string{"x"}, []string{"y"}), g("a", nil, nil)}, "duplicate gate id \"a\"\ngate \"a\" depends on unknown gate \"x\"\ngate \"a\" waits for unknown gate \"y\""},
		{"diamond is fine", []Gate{g("a", nil, nil), g("b", []string{"a"}, nil), g("c", []string{"a"}, nil), g("d", []string{"b"}, []string{"c"})}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.graph)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate = %q, want %q", got, tt.want)
			}
		})
	}
}

// fakeExec returns an ExecFunc whose outcome per gate ID comes from fail
// (failed when true) and that records the order gates ran in.
type fakeExec struct {
	mu    sync.Mutex
	fail  map[string]bool
	order []string
}

func (f *fakeExec) run(g Gate) Result {
	f.mu.Lock()
	f.order = append(f.order, g.ID)
	f.mu.Unlock()
	if f.fail[g.ID] {
		return Result{Status: Failed, ExitCode: 1}
	}
	return Result{Status: Passed, ExitCode: 0}
}

func statuses(rs []Result) string {
	var parts []string
	for _, r := range rs {
		s := r.Gate.ID + "=" + r.Status.String()
		if r.Err != nil {
			s += "(" + r.Err.Error() + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestRunRejectsBeforeExecuting(t *testing.T) {
	bad := [][]Gate{
		nil,
		{g("a", nil, nil), g("a", nil, nil)},
		{g("a", []string{"x"}, nil)},
		{g("a", nil, []string{"x"})},
		{g("first", []string{"second"}, nil), g("second", nil, []string{"first"})},
	}
	for _, graph := range bad {
		f := &fakeExec{}
		if _, err := Run(context.Background(), graph, 1, f.run, nil); err == nil {
			t.Errorf("Run(%v) succeeded, want an error", graph)
		}
		if len(f.order) != 0 {
			t.Errorf("Run(%v) executed %v before rejecting the graph", graph, f.order)
		}
	}
	f := &fakeExec{}
	_, err := Run(context.Background(), []Gate{g("a", nil, nil)}, 0, f.run, nil)
	if err == nil || !strings.Contains(err.Error(), "positive integer") || len(f.order) != 0 {
		t.Errorf("Run with 0 workers: err %v, ran %v; want a worker-count error and nothing run", err, f.order)
	}
}

func TestRunScheduling(t *testing.T) {
	tests := []struct {
		name    string
		graph   []Gate
		fail    map[string]bool
		workers int
		want    string
		order   string // for one worker: the exact run order
	}{
		{"dependent of a failed gate is skipped",
			[]Gate{g("root", nil, nil), g("dep", []string{"root"}, nil)}, map[string]bool{"root": true}, 1,
			"root=FAILED dep=SKIPPED(dependency failed or skipped: root)", "root"},
		{"skip cascades through needs",
			[]Gate{g("a", nil, nil), g("b", []string{"a"}, nil), g("c", []string{"b"}, nil)}, map[string]bool{"a": true}, 2,
			"a=FAILED b=SKIPPED(dependency failed or skipped: a) c=SKIPPED(dependency failed or skipped: b)", "a"},
		{"after follower runs when its predecessor fails",
			[]Gate{g("pre", nil, nil), g("follow", nil, []string{"pre"})}, map[string]bool{"pre": true}, 2,
			"pre=FAILED follow=PASS", "pre follow"},
		{"after follower runs when its predecessor was skipped",
			[]Gate{g("root", nil, nil), g("mid", []string{"root"}, nil), g("follow", nil, []string{"mid"})}, map[string]bool{"root": true}, 2,
			"root=FAILED mid=SKIPPED(dependency failed or skipped: root) follow=PASS", "root follow"},
		{"declaration order among ready gates",
			[]Gate{g("c", []string{"a"}, nil), g("a", nil, nil), g("b", nil, nil)}, nil, 1,
			"c=PASS a=PASS b=PASS", "a c b"},
		{"several failed needs named",
			[]Gate{g("x", nil, nil), g("y", nil, nil), g("z", []string{"x", "y"}, nil)}, map[string]bool{"x": true, "y": true}, 1,
			"x=FAILED y=FAILED z=SKIPPED(dependency failed or skipped: x, y)", "x y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeExec{fail: tt.fail}
			var doneOrder []string
			rs, err := Run(context.Background(), tt.graph, tt.workers, f.run, func(r Result) { doneOrder = append(doneOrder, r.Gate.ID) })
			if err != nil {
				t.Fatal(err)
			}
			if got := statuses(rs); got != tt.want {
				t.Errorf("results = %s\n want %s", got, tt.want)
			}
			if tt.workers == 1 || tt.order != "" && len(strings.Fields(tt.order)) <= 1 {
				if got := strings.Join(f.order, " "); got != tt.order {
					t.Errorf("run order = %q, want %q", got, tt.order)
				}
			} else if len(f.order) != len(strings.Fields(tt.order)) {
				t.Errorf("ran %v, want each of %q once", f.order, tt.order)
			}
			if len(doneOrder) != len(tt.graph) {
				t.Errorf("done called for %v, want once per gate", doneOrder)
			}
		})
	}
}

func TestRunNeverExceedsWorkers(t *testing.T) {
	var mu sync.Mutex
	running, peak := 0, 0
	started := make(chan string, 5)
	release := make(chan struct{})
	exec := func(g Gate) Result {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		started <- g.ID
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return Result{Status: Passed}
	}
	var graph []Gate
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		graph = append(graph, g(id, nil, nil))
	}
	done := make(chan []Result)
	go func() {
		rs, _ := Run(context.Background(), graph, 2, exec, nil)
		done <- rs
	}()
	// Two start at once; each release lets exactly one more start.
	var order []string
	order = append(order, <-started, <-started)
	for range graph[2:] {
		release <- struct{}{}
		order = append(order, <-started)
	}
	release <- struct{}{}
	release <- struct{}{}
	rs := <-done
	if peak != 2 {
		t.Errorf("peak concurrency = %d, want 2", peak)
	}
	if got := strings.Join(order[2:], " "); got != "c d e" {
		t.Errorf("later gates started in order %q, want declaration order", got)
	}
	if got := statuses(rs); got != "a=PASS b=PASS c=PASS d=PASS e=PASS" {
		t.Errorf("results = %s", got)
	}
}

func TestRunInterruptedSkipsPending(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan string, 4)
	release := make(chan struct{})
	exec := func(g Gate) Result {
		started <- g.ID
		<-release
		return Result{Status: Failed, Signal: "SIGTERM", ExitCode: -1}
	}
	graph := []Gate{g("a", nil, nil), g("b", nil, nil), g("c", nil, nil)}
	done := make(chan []Result)
	go func() {
		rs, _ := Run(ctx, graph, 1, exec, nil)
		done <- rs
	}()
	if id := <-started; id != "a" {
		t.Fatalf("first gate = %s, want a", id)
	}
	cancel()
	close(release)
	rs := <-done
	if got := statuses(rs); got != "a=FAILED b=SKIPPED(not started: interrupted) c=SKIPPED(not started: interrupted)" {
		t.Errorf("results = %s", got)
	}
	if !errors.Is(rs[1].Err, ErrInterrupted) {
		t.Errorf("skip reason = %v, want ErrInterrupted", rs[1].Err)
	}
	select {
	case id := <-started:
		t.Errorf("gate %s started after the interrupt", id)
	default:
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{Result{ExitCode: 1}, "exit 1"},
		{Result{ExitCode: -1, Signal: "SIGTERM"}, "signal SIGTERM"},
		{Result{ExitCode: -1, Err: errors.New("failed to start command: nope")}, "failed to start command: nope"},
		{Result{ExitCode: -1}, "no exit code or signal"},
	}
	for _, tt := range tests {
		if got := tt.r.Reason(); got != tt.want {
			t.Errorf("Reason(%+v) = %q, want %q", tt.r, got, tt.want)
		}
	}
}
