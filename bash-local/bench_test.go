package bashlocal

import (
	"context"
	"io"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// The benchmarks come in pairs measured in the same package run, so their ratio means something
// on a noisy machine: the executor against a plain os/exec call doing the same work.

func BenchmarkRun(b *testing.B) {
	b.Run("true", func(b *testing.B) {
		ex := benchExecutor(b)
		spec, _ := ex.Resolve(bash.Request{Command: "true"})
		b.ResetTimer()
		for b.Loop() {
			if res, err := ex.Run(context.Background(), spec); err != nil || *res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		}
	})
}

// BenchmarkSandboxRun is BenchmarkRun with the default sandbox (workspace-write, network off, the
// default deny list): the same command, confined.
func BenchmarkSandboxRun(b *testing.B) {
	b.Run("true", func(b *testing.B) {
		ex := benchExecutorWith(b, Config{Workdir: b.TempDir(), Sandbox: bash.Sandbox{Mode: bash.SandboxWorkspaceWrite}})
		spec, _ := ex.Resolve(bash.Request{Command: "true"})
		b.ResetTimer()
		for b.Loop() {
			if res, err := ex.Run(context.Background(), spec); err != nil || *res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		}
	})
}

func BenchmarkRawExec(b *testing.B) {
	b.Run("true", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("bash", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

const gib = 1 << 30

func BenchmarkRunOutput(b *testing.B) {
	b.Run("1GiB", func(b *testing.B) {
		ex := benchExecutor(b)
		spec, _ := ex.Resolve(bash.Request{Command: "head -c 1073741824 /dev/zero"})
		b.SetBytes(gib)
		peak := watchHeap(b)
		b.ResetTimer()
		for b.Loop() {
			res, err := ex.Run(context.Background(), spec)
			if err != nil || res.Stdout.TotalBytes != gib {
				b.Fatal(res.Stdout.TotalBytes, err)
			}
		}
		b.StopTimer()
		peak()
	})
}

func BenchmarkRawExecOutput(b *testing.B) {
	b.Run("1GiB", func(b *testing.B) {
		b.SetBytes(gib)
		peak := watchHeap(b)
		b.ResetTimer()
		for b.Loop() {
			cmd := exec.Command("bash", "-c", "head -c 1073741824 /dev/zero")
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			if n, _ := io.Copy(io.Discard, out); n != gib {
				b.Fatal(n)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		peak()
	})
}

func benchExecutor(b *testing.B) *Executor { return benchExecutorWith(b, Config{}) }

func benchExecutorWith(b *testing.B, cfg Config) *Executor {
	cfg.Grace, cfg.SpillDir = testGrace, b.TempDir()
	ex, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ex.Close(context.Background()) })
	return ex
}

// watchHeap samples the live heap every millisecond until the returned function is called, which
// reports the peak growth over the starting heap as the metric peak-heap-MiB.
func watchHeap(b *testing.B) (stop func()) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if v := read(); v > base && v-base > peak {
					peak = v - base
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	}
}
