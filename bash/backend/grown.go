package backend

// closedChan is the channel Grown returns when the stream has already grown.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Grown returns a channel that is closed once the stream holds more than n bytes: at once when
// it already does, on the next Write otherwise. It returns nil (a channel that never fires) once
// the collector is sealed and holds no more than n: a sealed stream never grows. Many waiters
// share one channel, so waiting costs a Write nothing until someone waits.
func (c *Collector) Grown(n int64) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.total > n:
		return closedChan
	case c.sealed:
		return nil
	}
	if c.grow == nil {
		c.grow = make(chan struct{})
	}
	return c.grow
}
