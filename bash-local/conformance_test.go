package bashlocal

import (
	"log/slog"
	"os"
	"runtime"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtest"
)

// TestConformance runs the seam's conformance kit against the local executor, with the same
// leftover-process check as every other test once the kit has closed each executor.
func TestConformance(t *testing.T) {
	wd, _ := os.Getwd()
	bashtest.Run(t, func(t *testing.T) bash.Executor {
		h := newHarness(t, Config{Workdir: wd, Logger: slog.New(slog.DiscardHandler)})
		h.closeErr = true // the kit closes the executor and judges what Close returns
		// The kit builds its own requests, so the harness's mark cannot ride on them; the
		// executor's own tag finds what a case left behind.
		t.Cleanup(func() {
			if left := tagged(h.ex.tag); len(left) > 0 {
				t.Errorf("processes left after the kit closed the executor: %v", left)
			}
		})
		return h.ex
	}, bashtest.Options{
		Workdir:     wd,
		Limits:      bash.Limits{Grace: testGrace},
		Escapees:    runtime.GOOS == "linux",
		Progress:    true,
		Interactive: true,
	})
}

func TestHandMadeRequestDefaults(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Limits: bash.Limits{MaxOutputBytes: 100}})
	res, err := h.ex.Run(t.Context(), bash.Request{Command: "seq 1 100", Workdir: "/", Timeout: bash.DefaultTimeout})
	if err != nil || !res.Stdout.Truncated() || len(res.Stdout.Head)+len(res.Stdout.Tail) > 100 {
		t.Fatalf("Run = %+v, %v; want the default stdout budget applied", res.Stdout, err)
	}
}
