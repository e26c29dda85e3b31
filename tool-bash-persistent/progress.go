package persistentbash

import (
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tool-bash-persistent/internal/ptyshell"
	"github.com/dsh-go/dsh/tools"
)

// watchProgress reports the command sh is running to report, from a goroutine of its own (never
// the terminal's reader): every bash.ProgressInterval at most, and only when the output grew,
// the bytes of sanitized output so far and its last line (at most bash.MaxProgressLine bytes,
// the start cut off). It returns stop, which ends the watch and returns once no report runs or
// will be made. A nil report gives a stop that does nothing.
func watchProgress(sh *ptyshell.Shell, report tools.ProgressReporter) (stop func()) {
	if report == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		// A timer set again after each round, not a ticker: a late tick must not bring the next
		// report closer than the interval to this one.
		tick := time.NewTimer(bash.ProgressInterval)
		defer tick.Stop()
		var seen int64
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			if n, line, ok := sh.Progress(); ok && n > seen {
				seen = n
				report(tools.Progress{Bytes: n, Message: lastBytes(line, bash.MaxProgressLine)})
			}
			tick.Reset(bash.ProgressInterval)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

// lastBytes returns the end of s in at most max bytes, starting on a whole rune.
func lastBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[len(s)-max:]
	for i := range min(len(s), utf8.UTFMax) {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return s
}
