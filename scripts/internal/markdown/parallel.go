package markdown

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel runs fn(0) … fn(n-1) on up to GOMAXPROCS goroutines and
// returns when every call has returned. fn must be safe to call
// concurrently for different indexes; calls for one index never overlap.
func Parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
