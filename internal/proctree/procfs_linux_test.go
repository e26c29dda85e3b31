//go:build linux

package proctree

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	rest := " 1 2 3 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0"
	for _, tc := range []struct {
		line string
		ok   bool
		want Stat
	}{
		{"42 (bash)" + " S" + rest, true, Stat{PID: 42, State: 'S', PPID: 1, PGRP: 2, Session: 3, Threads: 1, StartTime: 12345}},
		{"42 (bash) S 1 2 3 34816" + rest[8:], true, Stat{PID: 42, State: 'S', PPID: 1, PGRP: 2, Session: 3, TTY: 34816, Threads: 1, StartTime: 12345}},
		{"42 (my (odd) cmd) name)" + " Z" + rest, true, Stat{PID: 42, State: 'Z', PPID: 1, PGRP: 2, Session: 3, Threads: 1, StartTime: 12345}},
		{"42 (lt) Z 1 2 3 0 -1 4227084 97 0 0 0 0 0 0 0 20 0 2 0 12345 0 0", true, Stat{PID: 42, State: 'Z', PPID: 1, PGRP: 2, Session: 3, Threads: 2, StartTime: 12345}},
		{"42 (x) S 1 2 3 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 many 0 12345 0 0", false, Stat{}},
		{"42 (x) S 1 2", false, Stat{}},
		{"(x) S" + rest, false, Stat{}},
		{"abc (x) S" + rest, false, Stat{}},
		{"42 x S" + rest, false, Stat{}},
		{"", false, Stat{}},
	} {
		got, ok := ParseStat(tc.line)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseStat(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDead checks that a zombie is dead and a process whose leader thread alone exited is not.
func TestDead(t *testing.T) {
	for _, tc := range []struct {
		st   Stat
		dead bool
	}{
		{Stat{State: 'S', Threads: 1}, false},
		{Stat{State: 'R', Threads: 4}, false},
		{Stat{State: 'Z', Threads: 1}, true},
		{Stat{State: 'Z', Threads: 0}, true},
		{Stat{State: 'X', Threads: 1}, true},
		{Stat{State: 'Z', Threads: 2}, false}, // pthread_exit in main, a thread still running
	} {
		if got := tc.st.Dead(); got != tc.dead {
			t.Errorf("%+v.Dead() = %v, want %v", tc.st, got, tc.dead)
		}
	}
}

func TestReadStatSelf(t *testing.T) {
	self, ok := ReadStat(os.Getpid())
	if !ok || self.PID != os.Getpid() || self.PPID != os.Getppid() || self.StartTime == 0 || self.Dead() {
		t.Fatalf("own stat: %+v %v", self, ok)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add("42 (bash) S 1 2 3 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0")
	f.Add("1 ()) R 0 0 0")
	f.Fuzz(func(t *testing.T, line string) {
		st, ok := ParseStat(line)
		if ok && st.PID <= 0 {
			t.Fatalf("accepted a non-positive pid: %+v", st)
		}
	})
}

// TestZombieOnlyGroupIsGone checks that a group whose only member is an unreaped zombie counts
// as gone, so waits do not hang on it.
func TestZombieOnlyGroupIsGone(t *testing.T) {
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait()
	// Wait until the child is a zombie without reaping it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, ok := readStat(pid)
		if ok && st.Dead() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("child did not exit")
		}
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	s := NewStopper(Tree{Group: pid}, StopOptions{Grace: time.Hour, WG: &wg})
	if members := s.Members(); len(members) > 0 {
		t.Errorf("a group of zombies has live members: %v", members)
	}
	s.Terminate()
	select {
	case <-s.Stopped():
	case <-time.After(5 * time.Second):
		t.Fatal("stopping a zombie-only group did not finish")
	}
	wg.Wait()
}
