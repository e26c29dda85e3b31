package bashssh

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
)

// The benchmarks come in pairs run in the same process: an SSH run over loopback against the local
// backend running the same command, a warm connection against a fresh one per call, and the
// throughput of a large output.
//
//	go test ./bash-ssh -run '^$' -bench . -benchtime 200x

func benchRun(b *testing.B, ex bash.Executor, command string) {
	b.Helper()
	spec, err := ex.Resolve(bash.Request{Command: command})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ex.Run(ctx, spec); err != nil { // warm: connect, fill caches
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := ex.Run(ctx, spec)
		if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
			b.Fatalf("Run(%q) = %+v, %v", command, res, err)
		}
	}
}

func BenchmarkSSHRun(b *testing.B) {
	b.Run("true", func(b *testing.B) {
		benchRun(b, newExecutor(b, serverConfig(sharedServer(b))), "true")
	})
}

func BenchmarkLocalRun(b *testing.B) {
	b.Run("true", func(b *testing.B) {
		ex, err := bashlocal.New(bashlocal.Config{Limits: bash.Limits{Grace: testGrace}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ex.Close(context.Background()) })
		benchRun(b, ex, "true")
	})
}

// BenchmarkSSHRunFreshConn pays for a new connection (TCP, handshake, authentication) and a Close
// on every call: the difference with BenchmarkSSHRun/true is what connection reuse saves.
func BenchmarkSSHRunFreshConn(b *testing.B) {
	b.Run("true", func(b *testing.B) {
		cfg := serverConfig(sharedServer(b))
		ctx := context.Background()
		for b.Loop() {
			ex, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			spec, _ := ex.Resolve(bash.Request{Command: "true"})
			res, err := ex.Run(ctx, spec)
			if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
				b.Fatalf("Run = %+v, %v", res, err)
			}
			if err := ex.Close(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSSHRunOutput reports the throughput of 100 MiB of output through the connection into the
// head+tail collector and a local spill file, and the peak heap growth of a run.
func BenchmarkSSHRunOutput(b *testing.B) {
	b.Run("100MiB", func(b *testing.B) {
		const size = 100 << 20
		ex := newExecutor(b, serverConfig(sharedServer(b)))
		spec, _ := ex.Resolve(bash.Request{Command: largeOutput(size)})
		ctx := context.Background()
		b.SetBytes(size)
		var peak uint64
		for b.Loop() {
			stop := heapPeak()
			res, err := ex.Run(ctx, spec)
			peak = max(peak, stop())
			if err != nil || res.Stdout.TotalBytes != size {
				b.Fatalf("Run = %+v, %v", res.Stdout, err)
			}
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
}
