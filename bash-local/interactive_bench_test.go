package bashlocal

import (
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// BenchmarkInteractive measures a line's round trip through a background cat: Write, a Wait
// that wakes on the echo (no polling), ReadOutput. "pipe" and "tty" are its two kinds of input;
// BenchmarkRun/true in the same run is the baseline of a whole command.
func BenchmarkInteractive(b *testing.B) {
	for _, tty := range []bool{false, true} {
		name := "pipe"
		if tty {
			name = "tty"
		}
		b.Run(name, func(b *testing.B) {
			ex := benchExecutor(b)
			req := bash.Request{Command: "cat", OpenStdin: !tty}
			if tty {
				req.TTY = &bash.TTY{}
			}
			task, err := ex.Start(req)
			if err != nil {
				b.Fatal(err)
			}
			defer ex.Kill(task.ID())
			for b.Loop() {
				if _, err := ex.Write(b.Context(), task.ID(), []byte("x\n")); err != nil {
					b.Fatal(err)
				}
				got := ""
				for !strings.Contains(got, "x") {
					ev, err := ex.Wait(b.Context(), task.ID(), bash.WaitFor{Output: true}, time.Now().Add(5*time.Second))
					if err != nil || ev.TimedOut || ev.Done {
						b.Fatalf("Wait = %+v, %v", ev, err)
					}
					r, _ := ex.ReadOutput(task.ID())
					got += r.Delta
				}
			}
		})
	}
}
