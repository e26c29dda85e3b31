package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/leaktest"
)

// loadRun opens sessions sessions on fx (principals alternating) and has each make calls
// calls of `echo`, one after the other, all sessions at once; every result is checked. It
// returns every call's latency and the time the whole run took; the sessions are closed
// (DELETE) before it returns.
func loadRun(tb testing.TB, fx *httpFixture, sessions, calls int) ([]time.Duration, time.Duration) {
	tb.Helper()
	clients := make([]*mcp.ClientSession, sessions)
	for i := range clients {
		token := aliceToken
		if i%2 == 1 {
			token = bobToken
		}
		cs, err := fx.dial(token, nil)
		if err != nil {
			tb.Fatalf("session %d: %v", i, err)
		}
		clients[i] = cs
	}
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for i, cs := range clients {
		wg.Go(func() {
			for j := range calls {
				want := fmt.Sprintf("s%d-c%d\n", i, j)
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo " + want[:len(want)-1], "description": "Echo"}})
				d := time.Since(t0)
				if err != nil || res.IsError || text(res) != want {
					tb.Errorf("session %d call %d: %v %q, want %q", i, j, err, textOf(res), want)
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, cs := range clients {
		if err := cs.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	}
	slices.Sort(lat)
	return lat, elapsed
}

// textOf is text(res) for a result that may be nil.
func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return "<nil>"
	}
	return text(res)
}

// percentile returns the p-th percentile (0 < p <= 1) of the sorted durations d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// TestHTTPLoad is the bounded load test: 50 sessions × 20 calls of echo, all sessions at once,
// every result checked; afterwards no session is left and no process the calls started is
// alive.
func TestHTTPLoad(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{MaxPrincipalSessions: defaultMaxSessions})
	lat, elapsed := loadRun(t, fx, 50, 20)
	if len(lat) != 1000 {
		t.Fatalf("%d calls answered, want 1000", len(lat))
	}
	t.Logf("1000 calls in %v: %.0f calls/s, p50 %v, p99 %v", elapsed, 1000/elapsed.Seconds(), percentile(lat, 0.5), percentile(lat, 0.99))
	fx.front.mu.Lock()
	left := len(fx.front.sessions)
	fx.front.mu.Unlock()
	if left != 0 {
		t.Errorf("%d sessions left after every client closed", left)
	}
	if kids := leaktest.Children(); len(kids) != 0 {
		t.Errorf("processes left: %v", kids)
	}
}

// BenchmarkHTTPCall is BenchmarkMCPCall/true over the streamable HTTP transport on loopback:
// one session, a bash call of `true` with the bearer check, the front and the SDK's handler.
func BenchmarkHTTPCall(b *testing.B) {
	fx := startHTTP(b, config{}, httpConfig{MaxPrincipalSessions: defaultMaxSessions})
	c := fx.connect(aliceToken, nil)
	b.Run("true", func(b *testing.B) {
		params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true", "description": "Nothing"}}
		for b.Loop() {
			res, err := c.cs.CallTool(context.Background(), params)
			if err != nil || res.IsError || text(res) != "(no output)" {
				b.Fatalf("%v %v", err, res)
			}
		}
	})
}

// BenchmarkHTTPLoad reports the load test's figures: calls/s, p50 and p99 latency of 50
// sessions × 20 calls of echo at once (each iteration is one whole run).
func BenchmarkHTTPLoad(b *testing.B) {
	fx := startHTTP(b, config{}, httpConfig{MaxPrincipalSessions: defaultMaxSessions})
	var all []time.Duration
	var total time.Duration
	for b.Loop() {
		lat, elapsed := loadRun(b, fx, 50, 20)
		all = append(all, lat...)
		total += elapsed
	}
	slices.Sort(all)
	b.ReportMetric(float64(len(all))/total.Seconds(), "calls/s")
	b.ReportMetric(float64(percentile(all, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(all, 0.99).Microseconds())/1000, "p99-ms")
}

// BenchmarkHTTPIdleSession reports the server's memory per idle session: the resident memory
// of a real dsh mcp -http worker (run with GOGC=10, so that little garbage is counted) before
// and after 200 SDK clients open a session each and then do nothing, per session.
func BenchmarkHTTPIdleSession(b *testing.B) {
	const n = 200
	var perSession float64
	for b.Loop() {
		d := startDshHTTPEnv(b, []string{"GOGC=10"}, "-max-sessions", "256")
		fx := &httpFixture{t: b, url: d.url}
		worker := workerOf(b, d.cmd.Process.Pid)
		warm, err := fx.dial(aliceToken, nil) // the first session pays for code paths, not state
		if err != nil {
			b.Fatal(err)
		}
		before := rssKB(b, worker)
		clients := make([]*mcp.ClientSession, n)
		for i := range clients {
			if clients[i], err = fx.dial(aliceToken, nil); err != nil {
				b.Fatal(err)
			}
		}
		after := rssKB(b, worker)
		perSession += float64(after-before) / n
		for _, cs := range append(clients, warm) {
			_ = cs.Close()
		}
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		d.wait(b)
	}
	b.ReportMetric(perSession/float64(b.N), "KB/session")
}

// workerOf returns the pid of the dsh worker under the supervisor pid.
func workerOf(tb testing.TB, pid int) int {
	tb.Helper()
	var kids []string
	eventually(10*time.Second, func() bool {
		kids = nil
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, f := range tasks { // the worker is the child of whichever thread forked it
			b, _ := os.ReadFile(f)
			kids = append(kids, strings.Fields(string(b))...)
		}
		return len(kids) == 1
	})
	if len(kids) != 1 {
		tb.Fatalf("supervisor %d has children %v, want one worker", pid, kids)
	}
	w, err := strconv.Atoi(kids[0])
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// rssKB returns the resident memory of process pid in KiB.
func rssKB(tb testing.TB, pid int) int64 {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb
		}
	}
	tb.Fatalf("no VmRSS for %d", pid)
	return 0
}

// BenchmarkHTTPCallBeside measures one session's call of `true` while 50 other sessions are
// open: idle, each calling `true` 4 times a second, or each calling it back to back (which
// saturates the machine's cores). Compare with BenchmarkHTTPCall/true.
func BenchmarkHTTPCallBeside(b *testing.B) {
	for _, bc := range []struct {
		name string
		rate time.Duration // 0: idle; negative: back to back
	}{{"50_idle", 0}, {"50_at_4_per_s", 250 * time.Millisecond}, {"50_back_to_back", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			fx := startHTTP(b, config{}, httpConfig{MaxPrincipalSessions: defaultMaxSessions})
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range 50 {
				cs, err := fx.dial(bobToken, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = cs.Close() })
				if bc.rate == 0 {
					continue
				}
				wg.Go(func() {
					var tick <-chan time.Time // nil: never waits
					if bc.rate > 0 {
						t := time.NewTicker(bc.rate)
						defer t.Stop()
						tick = t.C
					}
					for ctx.Err() == nil {
						if tick != nil {
							select {
							case <-ctx.Done():
								return
							case <-tick:
							}
						}
						if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true", "description": "Nothing"}}); err != nil && ctx.Err() == nil {
							b.Error(err)
							return
						}
					}
				})
			}
			c := fx.connect(aliceToken, nil)
			params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true", "description": "Nothing"}}
			for b.Loop() {
				res, err := c.cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
			}
			stop()
			wg.Wait()
		})
	}
}
