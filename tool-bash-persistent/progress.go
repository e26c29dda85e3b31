package persistentbash

import (
	"unicode/utf8"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/backend"
	"github.com/dsh-go/dsh/tool-bash-persistent/internal/ptyshell"
	"github.com/dsh-go/dsh/tools"
)

// watchProgress reports the command sh is running to report through backend.Watch (a goroutine
// of its own, never the terminal's reader; at most every bash.ProgressInterval, only when the
// output grew): the bytes of sanitized output so far and its last line (at most
// bash.MaxProgressLine bytes, the start cut off). It returns stop, which ends the watch and
// returns once no report runs or will be made. A nil report gives a stop that does nothing.
func watchProgress(sh *ptyshell.Shell, report tools.ProgressReporter) (stop func()) {
	if report == nil {
		return func() {}
	}
	var seen int64
	return backend.Watch(0, func() (bash.Progress, bool) {
		n, line, ok := sh.Progress()
		if !ok || n <= seen {
			return bash.Progress{}, false
		}
		seen = n
		return bash.Progress{Bytes: n, LastLine: lastBytes(line, bash.MaxProgressLine)}, true
	}, func(p bash.Progress) { report(tools.Progress{Bytes: p.Bytes, Message: p.LastLine}) })
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
