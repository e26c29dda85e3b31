package bash_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtest"
)

func fakeOptions(t *testing.T, slack time.Duration) (fakeConfig, bashtest.Options) {
	cfg := fakeConfig{
		workdir:        t.TempDir(),
		defaultTimeout: 2 * time.Minute,
		maxTimeout:     10 * time.Minute,
		grace:          50 * time.Millisecond,
		maxOutput:      1000,
	}
	return cfg, bashtest.Options{
		Workdir: cfg.workdir,
		Limits: bash.Limits{
			Timeout:        cfg.defaultTimeout,
			MaxTimeout:     cfg.maxTimeout,
			Grace:          cfg.grace,
			MaxOutputBytes: cfg.maxOutput,
		},
		Slack: slack,
	}
}

// TestKitPassesFake shows that a correct executor passes the kit, and that the kit leaves no
// goroutine behind when the executor behaves.
func TestKitPassesFake(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg, opts := fakeOptions(t, 5*time.Second)
	err := bashtest.TestExecutor(t.Context(), func() (bash.Executor, error) {
		return newFakeExecutor(cfg, ""), nil
	}, opts)
	if err != nil {
		t.Fatalf("the fake executor fails the kit:\n%v", err)
	}
	waitGoroutines(t, before)
}

// TestKitRunPassesFake runs the kit's cases as subtests.
func TestKitRunPassesFake(t *testing.T) {
	cfg, opts := fakeOptions(t, 5*time.Second)
	bashtest.Run(t, func(t *testing.T) bash.Executor { return newFakeExecutor(cfg, "") }, opts)
}

// waitGoroutines waits until no more than want goroutines run, and fails the test after 5 s.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, want at most %d:\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		<-tick.C
	}
}

// TestKitCatchesFaults shows that the kit can fail: each deliberate fault of the fake must be
// reported with the promise it breaks.
func TestKitCatchesFaults(t *testing.T) {
	tests := []faultTest{
		{"resolve-no-cap", "(the request's value, capped at 10m0s)"},
		{"resolve-drops-empty-stdin", "want a non-nil empty slice: presence is kept"},
		{"timeout-as-abort", `Run("sleep 60"): TimedOut = false, want true`},
		{"both-causes", "exactly one cause is reported"},
		{"pre-cancel-spawns", "Run with a context that is already done started the command anyway"},
		{"run-hangs", `Run("echo hi") did not return within`},
		{"start-blocks", `Start("sleep 60") did not return within`},
		{"get-copies", "want the *Task Start returned"},
		{"list-reversed", "in start order"},
		{"spawn-failure-errors", `want a task that ends killed with a "spawn failed:" note`},
		{"self-signal-completed", "a task that dies of a signal is killed"},
		{"read-repeats", "reads never repeat bytes"},
		{"merge-no-separator", `ReadOutput of "printf out; echo err >&2" after it ended = "out[stderr]\nerr\n"`},
		{"never-lossy", "into a 1000-byte cap is not lossy"},
		{"kill-always-true", "a second Kill"},
		{"kill-no-mark", "a task killed through the executor stays killed when it then exits 0"},
		{"no-escalation", "SIGKILL follows after the grace period"},
		{"kill-no-grace", "before the 50ms grace period"},
		{"unknown-message", "does not match bash.ErrUnknownTask"},
		{"owner-empty-reported", "for a task started without an owner; want false"},
		{"no-self-resolve", "Run of a request without a timeout"},
		{"lossy-no-marker", "has no \"[… "},
		{"notify-twice", "was called 2 times"},
		{"notify-before-facts", "still running: exit facts are final before listeners run"},
		{"notify-after-done", "listeners run before Done closes"},
		{"notify-inside-start", "before Start returned"},
		{"panic-stops-listeners", "a panicking listener does not stop the others"},
		{"unsubscribe-noop", "unsubscribe removes a listener"},
		{"notify-after-close", "after Close began"},
		{"close-no-wait", "Close waits until every process is gone"},
		{"start-after-close", "Start after Close returned"},
	}
	// The kits run at once rather than as parallel subtests: they spend their time waiting on
	// timers, and go test would run only GOMAXPROCS of them at a time. A short slack keeps the
	// faults that hang quick to report.
	check := func(tt faultTest, slack time.Duration, parallel int) error {
		cfg, opts := fakeOptions(t, slack)
		opts.Parallel = parallel
		return bashtest.TestExecutor(t.Context(), func() (bash.Executor, error) {
			return newFakeExecutor(cfg, tt.fault), nil
		}, opts)
	}
	errs := make([]error, len(tests))
	var wg sync.WaitGroup
	for i, tt := range tests {
		wg.Go(func() { errs[i] = check(tt, 2*time.Second, 100) })
	}
	wg.Wait()
	for i, tt := range tests {
		t.Run(string(tt.fault), func(t *testing.T) {
			err := errs[i]
			if err != nil && !strings.Contains(err.Error(), tt.want) && starved(err) {
				// On a loaded machine a call of a case that would have caught the fault can miss
				// the short deadline first; try once more, alone and with the default slack.
				t.Logf("retrying after a missed deadline:\n%v", err)
				err = check(tt, 5*time.Second, 8)
			}
			t.Logf("the kit's report:\n%v", err)
			switch {
			case err == nil:
				t.Errorf("the kit passed an executor with fault %s", tt.fault)
			case !strings.Contains(err.Error(), tt.want):
				t.Errorf("the kit's report for fault %s lacks %q:\n%v", tt.fault, tt.want, err)
			}
		})
	}
}

type faultTest struct {
	fault fault
	want  string
}

// starved reports whether a report of the kit says that a call or a task missed its deadline.
func starved(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "did not return within") || strings.Contains(msg, "was not closed within")
}

func TestKitRefusesBadOptions(t *testing.T) {
	newFake := func() (bash.Executor, error) { t.Fatal("newExecutor called despite bad options"); return nil, nil }
	err := bashtest.TestExecutor(t.Context(), newFake, bashtest.Options{Limits: bash.Limits{MaxOutputBytes: -1}, Slack: -1, Parallel: -1})
	if err == nil {
		t.Fatal("TestExecutor accepted empty options")
	}
	for _, field := range []string{"Workdir", "Limits.MaxOutputBytes", "Slack", "Parallel"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("the error %q does not name Options.%s", err, field)
		}
	}
}

func TestKitGivesUpWithContext(t *testing.T) {
	cfg, opts := fakeOptions(t, 5*time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var mu sync.Mutex
	var made []*fakeExecutor
	err := bashtest.TestExecutor(ctx, func() (bash.Executor, error) {
		e := newFakeExecutor(cfg, "")
		mu.Lock()
		defer mu.Unlock()
		made = append(made, e)
		return e, nil
	}, opts)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("TestExecutor with a cancelled context returned %v, want the cases to give up", err)
	}
	for _, e := range made {
		if !e.isClosed() {
			t.Error("TestExecutor gave up without closing an executor it made")
		}
	}
}
