package bashlocal

import (
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// progressLog records the reports of a Run and fails the test on one made after Run returned.
type progressLog struct {
	t        *testing.T
	mu       sync.Mutex
	returned bool
	at       []time.Time
	got      []bash.Progress
}

func (l *progressLog) report(p bash.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.returned {
		l.t.Errorf("progress %+v reported after Run returned", p)
	}
	l.at = append(l.at, time.Now())
	l.got = append(l.got, p)
}

func (l *progressLog) runReturned() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.returned = true
}

func TestRunProgress(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	log := &progressLog{t: t}
	req := h.req(`for i in 1 2 3 4 5 6 7 8; do echo "line $i"; echo "err $i" >&2; sleep 0.2; done; echo last`)
	req.Progress = log.report
	res := h.run(req)
	log.runReturned()
	if res.Stdout.Text() == "" || exitCode(res) != "0" {
		t.Fatalf("run: exit %s stdout %q", exitCode(res), res.Stdout.Text())
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	// 1.6 s of output at most every 250 ms: at least 3 reports, at most 7.
	if n := len(log.got); n < 3 || n > 7 {
		t.Errorf("%d reports %+v; want 3 to 7", n, log.got)
	}
	line := regexp.MustCompile(`^(line|err) [1-8]$`)
	total := res.Stdout.TotalBytes + res.Stderr.TotalBytes
	for i, p := range log.got {
		if !line.MatchString(p.LastLine) {
			t.Errorf("report %d: last line %q; want a line of the command", i, p.LastLine)
		}
		if p.Bytes <= 0 || p.Bytes > total {
			t.Errorf("report %d: %d bytes; want 1 to %d", i, p.Bytes, total)
		}
		if i > 0 {
			if p.Bytes <= log.got[i-1].Bytes {
				t.Errorf("report %d: %d bytes after %d; want more", i, p.Bytes, log.got[i-1].Bytes)
			}
			if gap := log.at[i].Sub(log.at[i-1]); gap < bash.ProgressInterval-10*time.Millisecond {
				t.Errorf("report %d came %v after the previous; want at least %v", i, gap, bash.ProgressInterval)
			}
		}
	}
}

func TestRunProgressQuiet(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	log := &progressLog{t: t}
	req := h.req(`sleep 0.7`)
	req.Progress = log.report
	h.run(req)
	log.runReturned()
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.got) != 0 {
		t.Errorf("a command without output reported %+v; want nothing", log.got)
	}
}

// TestRunProgressTimeout: a command still writing when its timeout kills it reports nothing once
// Run has returned.
func TestRunProgressTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	log := &progressLog{t: t}
	req := h.req(`while :; do echo busy; sleep 0.01; done`)
	req.Timeout = 700 * time.Millisecond
	req.Progress = log.report
	res := h.run(req)
	log.runReturned()
	if !res.TimedOut {
		t.Fatalf("want a timeout, got %+v", res)
	}
	log.mu.Lock()
	n := len(log.got)
	log.mu.Unlock()
	if n == 0 {
		t.Error("no progress from a command that wrote for 700 ms")
	}
	// Any report made now would fail the test through log.report.
	time.Sleep(2 * bash.ProgressInterval) // lets the watcher tick, were it still running
}
