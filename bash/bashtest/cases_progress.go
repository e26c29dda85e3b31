package bashtest

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// runProgress checks Request.Progress on a foreground Run of a command that writes "first\n",
// waits for a gate file, then writes "second\n": every report has bytes the command wrote and a
// whole line of it, reports are at least bash.ProgressInterval apart and never grow smaller, and
// none comes once Run has returned. A backend that promises progress (Options.Progress) must
// report the first line while the command waits; the kit opens the gate once it has.
func runProgress(c *kc) {
	gate := filepath.Join(c.tempDir(), "gate")
	var mu sync.Mutex
	var got []bash.Progress
	var at []time.Time
	returned := false
	first := make(chan struct{})
	var once sync.Once
	spec := c.spec(GateCommand(gate), func(r *bash.Request) {
		r.Progress = func(p bash.Progress) {
			mu.Lock()
			defer mu.Unlock()
			if returned {
				c.errorf("Progress reported %+v after Run returned", p)
			}
			got, at = append(got, p), append(at, time.Now())
			if p.LastLine == "first" {
				once.Do(func() { close(first) })
			}
		}
	})
	var res bash.RunResult
	c.parallel(2, func(i int) {
		if i == 1 {
			defer func() {
				if err := os.WriteFile(gate, nil, 0o600); err != nil {
					c.errorf("cannot create the gate file: %v", err)
				}
			}()
			if c.opts.Progress {
				select {
				case <-first:
				case <-time.After(bash.ProgressInterval + c.quick()):
					c.errorf("Run(%q) reported no progress with the last line %q while the command waited", spec.Command, "first")
				}
			}
			return
		}
		res = c.mustRun(spec)
		mu.Lock()
		returned = true
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	total := res.Stdout.TotalBytes + res.Stderr.TotalBytes
	for i, p := range got {
		if p.Bytes <= 0 || p.Bytes > total {
			c.errorf("progress report %d %+v: Bytes outside 1..%d, the bytes the command wrote", i, p, total)
		}
		if p.LastLine != "first" && p.LastLine != "second" {
			c.errorf("progress report %d %+v: LastLine is not a whole line the command wrote", i, p)
		}
		if i > 0 && p.Bytes < got[i-1].Bytes {
			c.errorf("progress report %d %+v after %+v: Bytes went down", i, p, got[i-1])
		}
		// Times are taken as the reports arrive: a little scheduling delay is allowed.
		if i > 0 && at[i].Sub(at[i-1]) < bash.ProgressInterval*9/10 {
			c.errorf("progress report %d came %v after the previous one, want at least %v", i, at[i].Sub(at[i-1]), bash.ProgressInterval)
		}
	}
}
