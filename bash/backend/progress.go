package backend

import (
	"bytes"
	"slices"
	"sync"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// LastLine returns the last whole non-empty line of the stream collected so far (ended by a
// newline or a carriage return; a line still being written is left out), without its line
// ending, as valid UTF-8 of at most bash.MaxProgressLine bytes (the start of a longer line is
// cut off). It returns "" when the stream holds no such line in memory.
func (c *Collector) LastLine() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf := c.tail[c.tailOff:]
	if c.tailStart() == int64(len(c.head)) && len(c.head) > 0 {
		// Nothing was dropped between head and tail: the last line may start in the head.
		buf = append(slices.Clip(c.head), buf...)
	}
	line := lastLine(buf)
	if len(line) > bash.MaxProgressLine {
		line = line[len(line)-bash.MaxProgressLine:]
		line = line[leadingContinuation(line):]
	}
	return validUTF8(line)
}

// lastLine returns the last whole non-empty line of b (ended by "\n" or "\r") without its line
// ending, or nil.
func lastLine(b []byte) []byte {
	end := bytes.LastIndexAny(b, "\r\n")
	if end < 0 {
		return nil // no line ended yet
	}
	b = b[:end]
	for len(b) > 0 {
		b = bytes.TrimRight(b, "\r\n")
		i := bytes.LastIndexAny(b, "\r\n")
		if line := b[i+1:]; len(line) > 0 {
			return line
		}
		if i < 0 {
			return nil
		}
		b = b[:i]
	}
	return nil
}

// WatchProgress calls report with the progress of streams every interval (bash.ProgressInterval
// when interval is not positive) while the command runs, when the streams grew since the last
// report: the bytes of both streams and the last line of the one that grew last (stdout when both
// did). It returns stop, which ends the watch and returns once no report is running or will be
// made: a backend calls it before Run returns, so nothing is reported after. A nil report gives a
// stop that does nothing. Stop may be called more than once.
func WatchProgress(streams Streams, interval time.Duration, report func(bash.Progress)) (stop func()) {
	var out, errs int64
	return Watch(interval, func() (bash.Progress, bool) {
		o, e := streams.Stdout.Total(), streams.Stderr.Total()
		if o == out && e == errs {
			return bash.Progress{}, false
		}
		var line string
		if o != out {
			line = streams.Stdout.LastLine()
		} else {
			line = streams.Stderr.LastLine()
		}
		out, errs = o, e
		return bash.Progress{Bytes: o + e, LastLine: line}, true
	}, report)
}

// Watch calls sample every interval (bash.ProgressInterval when interval is not positive), from a
// goroutine of its own, and report with what it returns when it reports a change: the rules of
// Request.Progress for any source of output (WatchProgress is Watch over a command's streams).
// Reports are at least interval apart. It returns stop, which ends the watch and returns once no
// sample or report is running or will be made. A nil report gives a stop that does nothing. Stop
// may be called more than once.
func Watch(interval time.Duration, sample func() (bash.Progress, bool), report func(bash.Progress)) (stop func()) {
	if report == nil {
		return func() {}
	}
	if interval <= 0 {
		interval = bash.ProgressInterval
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A timer set again after each round, not a ticker: a late tick must not bring the next
		// report closer than interval to this one.
		tick := time.NewTimer(interval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			p, changed := sample()
			if changed {
				select {
				case <-quit: // stop was called while sampling: report nothing more
					return
				default:
				}
				report(p)
			}
			tick.Reset(interval)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
