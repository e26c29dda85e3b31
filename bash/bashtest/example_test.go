package bashtest_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtest"
)

// A backend checks itself against the seam's contract in one call from its own tests, as a file
// system does with testing/fstest. newExecutor stands for the backend's constructor; each case
// gets a fresh executor, which the kit closes. The Limits are the executor's own (zero fields are
// the defaults); a short Grace keeps the kit fast.
func ExampleRun() {
	conformance := func(t *testing.T, newExecutor func(bash.Limits) (bash.Executor, error)) {
		limits := bash.Limits{Grace: 200 * time.Millisecond}
		workdir := t.TempDir()
		bashtest.Run(t, func(t *testing.T) bash.Executor {
			ex, err := newExecutor(limits)
			if err != nil {
				t.Fatal(err)
			}
			return ex
		}, bashtest.Options{
			Workdir:  workdir,
			Limits:   limits,
			Escapees: runtime.GOOS == "linux", // the backend promises that escapees die too
		})
	}
	_ = conformance // called as conformance(t, mybackend.New) from a Test function
}
