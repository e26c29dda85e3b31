//go:build linux

package ptyshell

import (
	"slices"
	"testing"
)

// TestLadder checks the answers given to processes blocked reading the terminal: end-of-file
// three times each, then SIGINT once, then the last resort, each process counted by pid and
// start time, and no more than sixteen end-of-files in one command.
func TestLadder(t *testing.T) {
	checkLeaks(t)
	a := waiter{pid: 10, tid: 10, start: 1}
	aThread := waiter{pid: 10, tid: 11, start: 1, switches: 7} // another thread of a
	aReused := waiter{pid: 10, tid: 10, start: 2}              // a new process with a's pid
	b := waiter{pid: 20, tid: 20, start: 1}
	E, I, K := rungEOF, rungInterrupt, rungKill
	many := make([]waiter, 18)
	for i := range many {
		many[i] = waiter{pid: 100 + i/3, start: 1} // six processes, three reads each
	}
	cases := []struct {
		name  string
		reads []waiter
		want  []rung
	}{
		{"one reader", []waiter{a, a, a, a, a, a}, []rung{E, E, E, I, K, K}},
		{"threads of one process share its answers", []waiter{a, aThread, a, aThread, a}, []rung{E, E, E, I, K}},
		{"a reused pid is a new process", []waiter{a, a, a, aReused, a}, []rung{E, E, E, E, I}},
		{"two readers", []waiter{a, b, a, b, a, b, a, b}, []rung{E, E, E, E, E, E, I, I}},
		{"end-of-files are bounded per command", many, append(slices.Repeat([]rung{E}, 16), I, K)}, // the sixth gets one, then SIGINT, then the last resort
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var l ladder
			var got []rung
			for _, w := range c.reads {
				got = append(got, l.next(w))
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}
