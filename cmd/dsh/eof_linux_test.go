//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStdinEOFCancels checks, against a real dsh mcp process, that the end of stdin ends the
// session at once: a foreground call still running is cancelled and its command killed, the
// session's background task (one-shot) or shell and its job (persistent) are killed, the
// cancelled call still gets its response, and dsh exits 0, all long before the commands' own
// end (300 s). Nothing signals dsh: a client whose wrapper (go run, say) forwards no signal
// only closes the pipe.
func TestStdinEOFCancels(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			d := startDsh(t, dir, mode.args...)
			var owned []string // pid files of what the session runs besides the call
			if mode.name == "persistent" {
				d.bash(`echo $$ > shell.pid; sleep 300 & echo $! > bg.pid`)
				owned = []string{"shell.pid", "bg.pid"}
			} else {
				d.await(d.startCall(`{"command":"echo $$ > bg.pid; exec sleep 300","description":"Sleep","run_in_background":true}`))
				owned = []string{"bg.pid"}
			}
			id := d.startCall(`{"command":"sh -c 'echo $$ > fg.pid; exec sleep 300'","description":"Sleep"}`)
			fg := readPID(t, filepath.Join(dir, "fg.pid"))
			pids := map[string]int{"the foreground command": fg}
			for _, f := range owned {
				pids[f] = readPID(t, filepath.Join(dir, f))
			}
			for what, pid := range pids {
				if !alive(pid) {
					t.Fatalf("%s (pid %d) is not running before the end of stdin: the test proves nothing", what, pid)
				}
			}

			start := time.Now()
			if err := d.in.Close(); err != nil {
				t.Fatal(err)
			}
			for what, pid := range pids {
				if !waitGone(pid) {
					t.Fatalf("%s (pid %d) still runs 10s after the end of stdin", what, pid)
				}
			}
			t.Logf("everything gone %v after the end of stdin", time.Since(start))
			if resp := d.await(id); !strings.Contains(resp, `"result"`) {
				t.Errorf("the cancelled call's response is not a result: %s", resp)
			}
			d.close()
			t.Logf("dsh exited %v after the end of stdin", time.Since(start))
		})
	}
}
