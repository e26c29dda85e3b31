package proclimit

import (
	"math"
	"testing"
)

// TestCapFor checks the command limit against the harness's own: Reserve below a finite one,
// half of a small one, a request clamped to the ceiling, the default without a limit.
func TestCapFor(t *testing.T) {
	for _, c := range []struct {
		want int
		soft uint64
		cap  int
	}{
		{0, 4096, 4096 - Reserve},
		{100, 4096, 100},
		{5000, 4096, 4096 - Reserve},
		{0, 100, 50},
		{0, 1, 1},
		{0, math.MaxUint64, DefaultCap()},
		{123, math.MaxUint64, 123},
	} {
		if got := capFor(c.want, c.soft); got != c.cap {
			t.Errorf("capFor(%d, %d) = %d, want %d", c.want, c.soft, got, c.cap)
		}
	}
	if got, err := Cap(0); err != nil || got < 1 {
		t.Errorf("Cap(0) = %d, %v", got, err)
	}
	if DefaultCap() < 1 {
		t.Errorf("DefaultCap() = %d", DefaultCap())
	}
}
