//go:build linux

package ptyshell

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkRun measures one command on a warm shell at the engine level.
func BenchmarkRun(b *testing.B) {
	s, err := Start(context.Background(), Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		if r, err := s.Run(context.Background(), "true"); err != nil || r.Outcome != Completed {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkSweepOrphans measures the per-run look for re-parented processes.
func BenchmarkSweepOrphans(b *testing.B) {
	s, err := Start(context.Background(), Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		s.sweepOrphans()
	}
}

// outputCommand prints 100 MB: lines of 55 bytes, cut at exactly outputBytes.
const (
	outputBytes   = 100_000_000
	outputCommand = "yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c 100000000"
)

// BenchmarkRunOutput measures 100 MB of output through one Run: terminal reads, sanitizer,
// tracker and clipper. It reports the CPU time of the test process per run (cpu-ns/op).
func BenchmarkRunOutput(b *testing.B) {
	s, err := Start(context.Background(), Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.SetBytes(outputBytes)
	defer reportCPU(b)()
	for b.Loop() {
		r, err := s.Run(context.Background(), outputCommand)
		if err != nil || r.Outcome != Completed || !r.Output.Clipped() {
			b.Fatal(r.Outcome, err)
		}
	}
}

// BenchmarkTerminalFloor is the floor of BenchmarkRunOutput: the same command on a bare
// terminal, its output read through a non-blocking master like the shell's and discarded, with
// the shell's terminal modes (output processing off) and with the default ones (a LF becomes
// CR LF in the kernel).
func BenchmarkTerminalFloor(b *testing.B) {
	for _, c := range []struct {
		name  string
		setup func(*os.File) error
	}{
		{"shell-modes", func(tty *os.File) error { return setModes(tty.Fd()) }},
		{"output-processing", func(*os.File) error { return nil }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(outputBytes)
			defer reportCPU(b)()
			buf := make([]byte, readBatch)
			for b.Loop() {
				if n := bareTerminal(b, c.setup, buf); n < outputBytes {
					b.Fatal(n)
				}
			}
		})
	}
}

// bareTerminal runs outputCommand on a new terminal set up by setup and returns the number of
// bytes read from it.
func bareTerminal(b *testing.B, setup func(*os.File) error, buf []byte) int {
	ptmx, tty, err := openPTY()
	if err != nil {
		b.Fatal(err)
	}
	defer ptmx.Close()
	if err := setup(tty); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", outputCommand)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	tty.Close()
	rc, err := ptmx.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	total := 0
	for err == nil {
		var n int
		n, err = readBatchFrom(rc, buf)
		total += n
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return total
}

// reportCPU returns a function that reports the CPU time this process used per operation since
// reportCPU was called (cpu-ns/op), which a busy machine distorts less than the elapsed time.
func reportCPU(b *testing.B) func() {
	var before unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &before)
	return func() {
		var after unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_SELF, &after)
		cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}
