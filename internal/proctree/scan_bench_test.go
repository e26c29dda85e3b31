package proctree

import "testing"

// BenchmarkScan measures one scan of the process table as a sweep makes it: every process's
// stat, then the environment of each one that might carry the tag. Its cost grows with the
// number of processes on the machine (see /proc); dsh call pays it on every task's end and at
// the executor's close.
func BenchmarkScan(b *testing.B) {
	b.Run("stat", func(b *testing.B) {
		for b.Loop() {
			if _, ok := snapshot(); !ok {
				b.Skip("no /proc")
			}
		}
	})
	b.Run("stat+tag", func(b *testing.B) {
		s := NewStopper(Tree{Tag: "DSH_BENCH_TAG=nobody"}, StopOptions{})
		for b.Loop() {
			if got := s.Members(); len(got) != 0 {
				b.Fatalf("members of a tag no process carries: %v", got)
			}
		}
	})
}
