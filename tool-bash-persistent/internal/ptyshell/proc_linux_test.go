//go:build linux

package ptyshell

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	checkLeaks(t)
	cases := []struct {
		name string
		in   string
		want procStat
		ok   bool
	}{
		{"plain", "42 (bash) S 1 42 42 34816 42 4194560 1 2 3 4 5 6 7 8 20 0 1 0 987 10 11", procStat{pid: 42, state: 'S', ppid: 1, pgrp: 42, session: 42, ttyNr: 34816, start: 987}, true},
		{"name with spaces and parens", "7 (a (b) c) Z 3 4 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0", procStat{pid: 7, state: 'Z', ppid: 3, pgrp: 4, session: 5, start: 55}, true},
		{"truncated", "7 (x) S 1 2", procStat{}, false},
		{"garbage", "not a stat line", procStat{}, false},
		{"empty", "", procStat{}, false},
		{"no pid", " (x) S 1 2 3 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", procStat{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := parseStat(c.in)
			if ok != c.ok || got != c.want {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, c.want, c.ok)
			}
		})
	}
	self, ok := readStat(os.Getpid())
	if !ok || self.pid != os.Getpid() || self.ppid != os.Getppid() || self.start == 0 {
		t.Fatalf("own stat: %+v %v", self, ok)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add("42 (bash) S 1 42 42 34816 42 4194560 1 2 3 4 5 6 7 8 20 0 1 0 987 10 11")
	f.Add("1 ()) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseStat(s) // must not panic
	})
}

func TestReadsTTYIgnoresRunningAndUnknownCalls(t *testing.T) {
	checkLeaks(t)
	self, _ := readStat(os.Getpid())
	for _, line := range []string{"running", "-1 0x7ffd 0x7f00", "", "61 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8", "zz 0x0 0x0 0x0 0x0 0x0 0x0 0 0"} {
		if readsTTY(self, line, 1) {
			t.Errorf("%q read as a terminal wait", line)
		}
	}
}
