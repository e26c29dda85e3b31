package bashssh

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// heapPeak samples the heap in use until stop is called, and returns the peak growth over the
// heap at the start.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak {
				peak = ms.HeapInuse - base
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// largeOutput returns a command that writes n bytes: the line "0123456789abcdefghijklmnopq\n"
// repeated.
func largeOutput(n int) string {
	return "yes 0123456789abcdefghijklmnopq | head -c " + strconv.Itoa(n)
}

// TestLargeOutput streams 100 MiB through the connection: the run keeps its head and tail, the
// local spill file keeps the first MaxSpillBytes and is partial, and the local heap stays bounded by
// the budgets and the SSH window, not by the output.
func TestLargeOutput(t *testing.T) {
	const size = 100 << 20
	// leaktest turns the collector off while the tests run; a heap bound needs it.
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	cfg := serverConfig(sharedServer(t))
	cfg.MaxSpillBytes = 8 << 20
	ex := newExecutor(t, cfg)
	stop := heapPeak()
	res := mustRun(t, ex, bash.Request{Command: largeOutput(size), Timeout: 2 * time.Minute})
	peak := stop()
	out := res.Stdout
	line := "0123456789abcdefghijklmnopq\n"
	switch {
	case res.ExitCode == nil || *res.ExitCode != 0:
		t.Errorf("exit %s", codeString(res.ExitCode))
	case out.TotalBytes != size:
		t.Errorf("TotalBytes %d, want %d", out.TotalBytes, size)
	case !strings.HasPrefix(out.Head, line+line) || len(out.Head) != bash.DefaultHeadBytes:
		t.Errorf("head of %d bytes does not start the stream", len(out.Head))
	case int64(len(out.Head)+len(out.Tail))+out.OmittedBytes != size:
		t.Errorf("head %d + tail %d + omitted %d is not %d", len(out.Head), len(out.Tail), out.OmittedBytes, size)
	case !out.Spill.Partial || out.Spill.Bytes != cfg.MaxSpillBytes:
		t.Errorf("spill %+v, want partial with %d bytes", out.Spill, cfg.MaxSpillBytes)
	}
	want := strings.Repeat(line, size/len(line)+1)
	if !strings.HasSuffix(want[:size], out.Tail) {
		t.Errorf("the tail is not the end of the stream")
	}
	if data, err := os.ReadFile(out.Spill.Path); err != nil || len(data) != int(cfg.MaxSpillBytes) || !bytes.Equal(data, []byte(want[:len(data)])) {
		t.Errorf("the local spill file %s holds %d bytes (%v), want the first %d bytes of the stream", out.Spill.Path, len(data), err, cfg.MaxSpillBytes)
	}
	const bound = 32 << 20
	if peak > bound {
		t.Errorf("the heap grew by %d MiB for %d MiB of output, want under %d MiB", peak>>20, size>>20, bound>>20)
	}
	t.Logf("heap peak growth %.1f MiB for %d MiB of output", float64(peak)/(1<<20), size>>20)
}
