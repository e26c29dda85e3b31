// Package bashtest checks an implementation of [bash.Executor] against the seam's contract, in the
// spirit of testing/fstest.TestFS and testing/slogtest.
//
// [TestExecutor] runs every case of the kit, each against a fresh executor that it closes at the
// end, and returns all misbehaviours joined; [Run] runs the same cases as subtests of a test. Each
// reported error names the case ("kill/running") and the promise that was broken. The kit runs
// real bash commands (the ones listed in commands.go), so the executor must run them with bash,
// coreutils' seq and sleep available, and the commands must see the kit's scratch files under
// [os.TempDir]: the kit creates a gate file that a running task waits for and checks a marker file
// that a command that must not run would write.
//
// Every call into the executor is bounded: a call that does not return in time, or that panics,
// is reported and ends its case, so a hung executor makes the kit fail instead of hanging it. The
// kit never sleeps to synchronise; it waits on Done channels and polls with deadlines.
package bashtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// Options tells the kit how the executor under test is configured. Workdir is required; the
// embedded Limits are the executor's own (zero fields mean the bash package defaults, as for every
// backend): the kit checks Resolve against them and derives its waits from them.
type Options struct {
	// Workdir is the directory Resolve fills in when a request names none.
	Workdir string
	// Limits are the executor's limits. Keep Grace short (200 ms) so the kit stays fast: several
	// cases wait for it.
	bash.Limits
	// Escapees turns on the cases that check that processes which left the command's process
	// group (a setsid child, a double fork, a nohup child) are gone after Kill, a timeout and
	// Close. Set it for a backend that promises that (the local one on Linux, the SSH one against
	// a Linux host).
	Escapees bool
	// Progress reports that the backend calls Request.Progress during a foreground Run (see
	// backend.WatchProgress): the kit then requires a report while a command waits. Without it
	// the kit only checks the reports the backend makes, if any.
	Progress bool
	// Interactive requires bash.Interactive: without it the interactive cases report the executor
	// as lacking it. When false they are skipped for an executor without it (and run when it has it).
	Interactive bool
	// Slack is the time allowed on top of what the contract implies before a call, a task or Close
	// counts as hung (5 s when zero). It also bounds calls that must return at once, such as Start.
	Slack time.Duration
	// Parallel is the number of cases TestExecutor runs at once (8 when zero). Run leaves this to
	// the go test -parallel flag.
	Parallel int
}

func (o Options) validate() error {
	var errs []error
	if o.Workdir == "" {
		errs = append(errs, errors.New("Options.Workdir is empty"))
	}
	o.Limits.SetDefaults()
	if err := o.Limits.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("Options: %w", err))
	}
	if o.Slack < 0 {
		errs = append(errs, fmt.Errorf("Options.Slack is %v, want >= 0", o.Slack))
	}
	if o.Parallel < 0 {
		errs = append(errs, fmt.Errorf("Options.Parallel is %d, want >= 0", o.Parallel))
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	o.Limits.SetDefaults()
	if o.Slack == 0 {
		o.Slack = 5 * time.Second
	}
	if o.Parallel == 0 {
		o.Parallel = 8
	}
	return o
}

// TestExecutor checks the executors newExecutor returns against the contract of [bash.Executor]. It
// calls newExecutor once per case, runs up to opts.Parallel cases at once, and closes each
// executor when its case ends. It returns nil when every case passed, and otherwise every
// misbehaviour found, joined with [errors.Join], each prefixed with its case's name. It returns an
// error at once when opts is invalid. When ctx is done the remaining cases give up and report it.
// TestExecutor is safe to call from several goroutines.
func TestExecutor(ctx context.Context, newExecutor func() (bash.Executor, error), opts Options) error {
	if err := opts.validate(); err != nil {
		return fmt.Errorf("bashtest: %w", err)
	}
	opts = opts.withDefaults()
	results := make([][]error, len(cases))
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for i, tc := range cases {
		if tc.skip(opts) != "" {
			continue
		}
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				results[i] = []error{fmt.Errorf("%s: not run: %w", tc.name, context.Cause(ctx))}
				return
			}
			ex, err := newExecutor()
			if err != nil {
				results[i] = []error{fmt.Errorf("%s: newExecutor: %w", tc.name, err)}
				return
			}
			if lacks := tc.interactive && !isInteractive(ex); lacks {
				if opts.Interactive {
					results[i] = []error{fmt.Errorf("%s: the executor (%T) lacks bash.Interactive", tc.name, ex)}
				}
				_ = ex.Close(ctx)
				return
			}
			results[i] = runCase(ctx, tc, ex, newExecutor, opts)
		})
	}
	wg.Wait()
	var all []error
	for _, errs := range results {
		all = append(all, errs...)
	}
	return errors.Join(all...)
}

// Run runs the kit's cases as parallel subtests of t, named after the cases, each against the
// executor newExecutor returns for that subtest (newExecutor may register cleanups on it, such as a
// leak check, which run after the kit has closed the executor). A broken promise is reported with
// t.Error; a case that needs an unknown option is skipped. The subtests give up when t's context
// is done.
func Run(t *testing.T, newExecutor func(t *testing.T) bash.Executor, opts Options) {
	t.Helper()
	if err := opts.validate(); err != nil {
		t.Fatalf("bashtest: %v", err)
	}
	opts = opts.withDefaults()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if why := tc.skip(opts); why != "" {
				t.Skip(why)
			}
			t.Parallel()
			ex := newExecutor(t)
			if tc.interactive && !isInteractive(ex) {
				_ = ex.Close(t.Context())
				if opts.Interactive {
					t.Fatalf("the executor (%T) lacks bash.Interactive", ex)
				}
				t.Skipf("the executor (%T) lacks bash.Interactive", ex)
			}
			probe := func() (bash.Executor, error) { return newExecutor(t), nil }
			for _, err := range runCase(t.Context(), tc, ex, probe, opts) {
				t.Error(err)
			}
		})
	}
}

func isInteractive(ex bash.Executor) bool {
	_, ok := ex.(bash.Interactive)
	return ok
}
