//go:build linux

package ptyshell

import (
	"context"
	"testing"
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
