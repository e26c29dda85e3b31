package backend

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-go/dsh/bash"
)

func collector(t *testing.T, maxBytes int) *Collector {
	t.Helper()
	c, err := NewCollector(CollectorConfig{MaxBytes: maxBytes, HeadBytes: maxBytes / 4})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func add(t *testing.T, tb *TaskTable, command string, owner bash.OwnerToken) *TaskEntry {
	t.Helper()
	return tb.Add(command, owner, collector(t, 1<<16), collector(t, 1<<16))
}

func TestIDsOrderAndLookup(t *testing.T) {
	var tb TaskTable
	commands := []string{"sleep 1", "echo hi", "true"}
	var entries []*TaskEntry
	for i, c := range commands {
		e := add(t, &tb, c, "")
		if want := bash.TaskID("bash-" + strconv.Itoa(i+1)); e.Task.ID() != want {
			t.Errorf("entry %d has id %q, want %q", i, e.Task.ID(), want)
		}
		if e.Task.Command() != c || e.Task.Status() != bash.TaskRunning {
			t.Errorf("entry %d: command %q status %s, want %q running", i, e.Task.Command(), e.Task.Status(), c)
		}
		entries = append(entries, e)
	}
	list := tb.List()
	if len(list) != len(entries) {
		t.Fatalf("List has %d tasks, want %d", len(list), len(entries))
	}
	for i, task := range list {
		if task != entries[i].Task {
			t.Errorf("List[%d] is %s, want %s (start order)", i, task.ID(), entries[i].Task.ID())
		}
		got, ok := tb.Get(task.ID())
		if !ok || got != task {
			t.Errorf("Get(%s) = %v, %v; want the same handle", task.ID(), got, ok)
		}
		e, err := tb.Lookup(task.ID())
		if err != nil || e != entries[i] {
			t.Errorf("Lookup(%s) = %p, %v; want entry %p", task.ID(), e, err, entries[i])
		}
	}
	list[0] = nil
	if tb.List()[0] == nil {
		t.Error("List returned the table's own slice")
	}

	for _, id := range []bash.TaskID{"bash-0", "bash-4", "bash-", "", "BASH-1", "bash-01"} {
		if task, ok := tb.Get(id); ok || task != nil {
			t.Errorf("Get(%q) = %v, %v; want nil, false", id, task, ok)
		}
		_, err := tb.Lookup(id)
		var unknown *bash.UnknownTaskError
		if !errors.As(err, &unknown) || unknown.ID != id || !errors.Is(err, bash.ErrUnknownTask) {
			t.Errorf("Lookup(%q) error %v; want *bash.UnknownTaskError naming it", id, err)
		}
		if _, err := tb.Read(id); !errors.Is(err, bash.ErrUnknownTask) {
			t.Errorf("Read(%q) error %v; want bash.ErrUnknownTask", id, err)
		}
		if ok, err := tb.Kill(id); ok || !errors.Is(err, bash.ErrUnknownTask) {
			t.Errorf("Kill(%q) = %v, %v; want false, bash.ErrUnknownTask", id, ok, err)
		}
		if _, ok := tb.OwnerOf(id); ok {
			t.Errorf("OwnerOf(%q) reported an owner", id)
		}
	}
}

func TestOwnerOf(t *testing.T) {
	tests := []struct {
		name  string
		owner bash.OwnerToken
		want  bash.OwnerToken
		ok    bool
	}{
		{"no owner", "", "", false},
		{"token", "agent-7", "agent-7", true},
	}
	var tb TaskTable
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := add(t, &tb, "true", tt.owner)
			got, ok := tb.OwnerOf(e.Task.ID())
			if got != tt.want || ok != tt.ok {
				t.Errorf("OwnerOf = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestReadNote(t *testing.T) {
	tests := []struct {
		name   string
		stdout string
		stderr string
		note   string
		// settleFirst settles the task before the first read.
		settleFirst bool
		first       string // delta of the first read
		second      string // delta of the read after settling (when settleFirst is false)
	}{
		{name: "no note", stdout: "out\n", first: "out\n", second: ""},
		// A listener runs before Done closes: a reader it woke must get the note already.
		{name: "note before done", stderr: "warn\n", note: "connection lost: eof", first: "[stderr]\nwarn\nconnection lost: eof\n", second: ""},
		{name: "note at once when done", note: "spawn failed: no such dir", settleFirst: true, first: "[stderr]\nspawn failed: no such dir\n"},
		{name: "note on its own line", stdout: "a", stderr: "partial", note: "connection lost: reset", settleFirst: true, first: "a\n[stderr]\npartial\nconnection lost: reset\n"},
		{name: "empty note clears", note: "", settleFirst: true, first: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tb TaskTable
			e := add(t, &tb, "cmd", "")
			e.Stdout.Write([]byte(tt.stdout))
			e.Stderr.Write([]byte(tt.stderr))
			e.SetNote("replaced before delivery")
			e.SetNote(tt.note)
			e.Stdout.Write([]byte("after the note: dropped\n"))
			e.Stderr.Write([]byte("after the note: dropped\n"))
			if tt.settleFirst {
				e.Control.Settle(nil, "", nil)
			}
			r, err := tb.Read(e.Task.ID())
			if err != nil {
				t.Fatal(err)
			}
			if r.Task != e.Task || r.Delta != tt.first {
				t.Errorf("first read: task %v delta %q; want %s %q", r.Task.ID(), r.Delta, e.Task.ID(), tt.first)
			}
			if !tt.settleFirst {
				e.Control.Settle(nil, "", nil)
				if r, _ = tb.Read(e.Task.ID()); r.Delta != tt.second {
					t.Errorf("read after done: delta %q; want %q", r.Delta, tt.second)
				}
			}
			for i := range 2 {
				if r, _ = tb.Read(e.Task.ID()); r.Delta != "" {
					t.Errorf("read %d after delivery gave %q; want nothing (the note is delivered once)", i, r.Delta)
				}
			}
		})
	}
}

func TestReadLossy(t *testing.T) {
	var tb TaskTable
	e := tb.Add("cmd", "", collector(t, 64), collector(t, 64))
	e.Stdout.Write([]byte(strings.Repeat("x", 1000)))
	r, err := tb.Read(e.Task.ID())
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("x", 16) + "\n" + bash.DroppedMarker(1000-64) + strings.Repeat("x", 48); !r.Lossy || r.OmittedBytes != 1000-64 || r.Delta != want {
		t.Errorf("read: lossy %v omitted %d delta %q; want lossy, %d omitted, %q", r.Lossy, r.OmittedBytes, r.Delta, 1000-64, want)
	}
}

func TestKill(t *testing.T) {
	var tb TaskTable
	running := add(t, &tb, "sleep 9", "")
	stops := 0
	running.SetStop(func() { stops++ })
	if ok, err := tb.Kill(running.Task.ID()); !ok || err != nil || stops != 1 || running.Task.Status() != bash.TaskKilled {
		t.Errorf("Kill of a running task = %v, %v (stop called %d times, status %s); want true, nil, 1, killed", ok, err, stops, running.Task.Status())
	}
	if ok, err := tb.Kill(running.Task.ID()); ok || err != nil || stops != 1 {
		t.Errorf("second Kill = %v, %v (stop called %d times); want false, nil, still 1", ok, err, stops)
	}

	ended := add(t, &tb, "true", "")
	ended.SetStop(func() { t.Error("stop called for a task that had ended") })
	code := 0
	ended.Control.Settle(&code, "", nil)
	if ok, err := tb.Kill(ended.Task.ID()); ok || err != nil || ended.Task.Status() != bash.TaskCompleted {
		t.Errorf("Kill of an ended task = %v, %v (status %s); want false, nil, completed", ok, err, ended.Task.Status())
	}

	noStop := add(t, &tb, "sleep 9", "")
	if ok, err := tb.Kill(noStop.Task.ID()); !ok || err != nil || noStop.Task.Status() != bash.TaskKilled {
		t.Errorf("Kill of a task with no stop function = %v, %v (status %s); want true, nil, killed", ok, err, noStop.Task.Status())
	}
}

func TestClear(t *testing.T) {
	var tb TaskTable
	a := add(t, &tb, "a", "")
	a.SetStop(func() { t.Error("Clear called a stop function") })
	b := add(t, &tb, "b", "")
	code := 0
	b.Control.Settle(&code, "", nil)
	cleared := tb.Clear()
	if len(cleared) != 2 || cleared[0] != a || cleared[1] != b {
		t.Fatalf("Clear returned %v; want the two entries in start order", cleared)
	}
	if a.Task.Status() != bash.TaskKilled || b.Task.Status() != bash.TaskCompleted {
		t.Errorf("after Clear: statuses %s, %s; want killed, completed", a.Task.Status(), b.Task.Status())
	}
	if len(tb.List()) != 0 {
		t.Errorf("List after Clear has %d tasks", len(tb.List()))
	}
	if _, ok := tb.Get(a.Task.ID()); ok {
		t.Error("Get found a cleared task")
	}
	if c := add(t, &tb, "c", ""); c.Task.ID() != "bash-3" {
		t.Errorf("id after Clear %q; want bash-3 (ids are never reused)", c.Task.ID())
	}
}

// TestConcurrentReads checks, under -race, that readers racing a writer and each other receive
// every byte exactly once, and the note exactly once.
func TestConcurrentReads(t *testing.T) {
	var tb TaskTable
	e := add(t, &tb, "cmd", "")
	const lines = 2000
	const readers = 4
	var (
		mu    sync.Mutex
		got   strings.Builder
		notes int
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	read := func() {
		r, err := tb.Read(e.Task.ID())
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		text, note, _ := strings.Cut(r.Delta, "[stderr]\n")
		got.WriteString(text)
		if note != "" {
			if note != "the end\n" {
				t.Errorf("stderr section %q; want the note", note)
			}
			notes++
		}
	}
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					read()
				}
			}
		}()
	}
	var want strings.Builder
	for i := range lines {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		e.Stdout.Write([]byte(line))
	}
	e.SetNote("the end")
	e.Stdout.Seal()
	e.Stderr.Seal()
	e.Control.Settle(nil, "", nil)
	close(stop)
	wg.Wait()
	read()
	// Readers record their deltas in whatever order they take mu, so compare line counts: every
	// line must arrive exactly once, and whole (a delta never splits a line here, as each Write
	// is one line).
	seen := map[string]int{}
	for _, line := range strings.SplitAfter(got.String(), "\n") {
		if line != "" {
			seen[line]++
		}
	}
	for _, line := range strings.SplitAfter(want.String(), "\n") {
		if line != "" && seen[line] != 1 {
			t.Errorf("line %q was received %d times; want once", line, seen[line])
		}
	}
	if got.Len() != want.Len() {
		t.Errorf("readers got %d bytes, want the %d written", got.Len(), want.Len())
	}
	if notes != 1 {
		t.Errorf("the note was delivered %d times; want once", notes)
	}
}

func TestUnread(t *testing.T) {
	var tb TaskTable
	e := add(t, &tb, "cmd", "")
	if n, err := tb.Unread(e.Task.ID()); err != nil || n != 0 {
		t.Fatalf("Unread of a silent task = %d, %v; want 0", n, err)
	}
	e.Stdout.Write([]byte("abc"))
	e.Stderr.Write([]byte("de"))
	if n, _ := tb.Unread(e.Task.ID()); n != 5 {
		t.Errorf("Unread = %d, want 5", n)
	}
	tb.Read(e.Task.ID())
	e.Stdout.Write([]byte("f"))
	if n, _ := tb.Unread(e.Task.ID()); n != 1 {
		t.Errorf("Unread after a read and one more byte = %d, want 1", n)
	}
	if _, err := tb.Unread("bash-99"); !errors.Is(err, bash.ErrUnknownTask) {
		t.Errorf("Unread of an unknown id: %v", err)
	}
}
