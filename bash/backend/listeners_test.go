package backend_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/backend"
)

// calls records listener calls by name, safe for concurrent use.
type calls struct {
	mu    sync.Mutex
	names []string
}

func (c *calls) listener(name string) bash.TaskListener {
	return func(*bash.Task) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.names = append(c.names, name)
	}
}

func (c *calls) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := c.names
	c.names = nil
	return names
}

func TestListenersOrderAndRemove(t *testing.T) {
	var l backend.Listeners
	var got calls
	task, _ := bash.NewTask("bash-1", "true")
	removeA := l.Add(got.listener("A"))
	removeB := l.Add(got.listener("B"))
	l.Add(got.listener("C"))
	l.Add(nil) // ignored
	l.Notify(task)
	if names := got.take(); !slices.Equal(names, []string{"A", "B", "C"}) {
		t.Errorf("Notify called %v, want registration order [A B C]", names)
	}
	removeB()
	removeB() // harmless
	l.Notify(task)
	if names := got.take(); !slices.Equal(names, []string{"A", "C"}) {
		t.Errorf("after removing B, Notify called %v, want [A C]", names)
	}
	removeA()
	l.Add(got.listener("D"))
	l.Notify(task)
	if names := got.take(); !slices.Equal(names, []string{"C", "D"}) {
		t.Errorf("after removing A and adding D, Notify called %v, want [C D]", names)
	}
}

func TestListenersPanicContained(t *testing.T) {
	var buf bytes.Buffer
	l := backend.Listeners{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	var got calls
	l.Add(func(*bash.Task) { panic("listener boom") })
	l.Add(got.listener("after"))
	task, _ := bash.NewTask("bash-42", "true")
	l.Notify(task)
	if names := got.take(); !slices.Equal(names, []string{"after"}) {
		t.Errorf("after a panicking listener, Notify called %v, want [after]", names)
	}
	log := buf.String()
	for _, want := range []string{"level=ERROR", "task listener panicked", "task=bash-42", "panic=\"listener boom\"", "stack="} {
		if !strings.Contains(log, want) {
			t.Errorf("the log of a contained panic lacks %q:\n%s", want, log)
		}
	}
}

func TestListenersDefaultLogger(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	var l backend.Listeners
	l.Add(func(*bash.Task) { panic("boom") })
	task, _ := bash.NewTask("bash-1", "true")
	l.Notify(task)
	if !strings.Contains(buf.String(), "task listener panicked") {
		t.Errorf("the zero Listeners did not log a contained panic to slog.Default; log: %q", buf.String())
	}
}

func TestListenersClose(t *testing.T) {
	var l backend.Listeners
	var got calls
	l.Add(got.listener("before"))
	l.Close()
	l.Close() // idempotent
	remove := l.Add(got.listener("after"))
	remove()
	task, _ := bash.NewTask("bash-1", "true")
	l.Notify(task)
	if names := got.take(); len(names) != 0 {
		t.Errorf("Notify after Close called %v, want nothing", names)
	}
}

// TestListenersConcurrent exercises Add, remove, Notify and Close at once (run it with -race).
func TestListenersConcurrent(t *testing.T) {
	var l backend.Listeners
	var got calls
	task, _ := bash.NewTask("bash-1", "true")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			remove := l.Add(got.listener("x"))
			l.Notify(task)
			if i%2 == 0 {
				remove()
			}
		})
	}
	wg.Wait()
	if len(got.take()) == 0 {
		t.Fatal("no listener ran")
	}
	l.Close()
	l.Notify(task)
	if names := got.take(); len(names) != 0 {
		t.Errorf("Notify after Close called %d listeners", len(names))
	}
}

// TestListenersCloseDuringNotify checks that a Close arriving while one listener runs stops the
// listeners after it: none is called once Close has begun.
func TestListenersCloseDuringNotify(t *testing.T) {
	var l backend.Listeners
	entered := make(chan struct{})
	release := make(chan struct{})
	var secondCalled atomic.Bool
	l.Add(func(*bash.Task) { close(entered); <-release })
	l.Add(func(*bash.Task) { secondCalled.Store(true) })
	task, ctl := bash.NewTask("bash-1", "true")
	done := make(chan struct{})
	go func() { ctl.Settle(nil, "", l.Notify); close(done) }()
	<-entered
	l.Close()
	close(release)
	<-done
	<-task.Done()
	if secondCalled.Load() {
		t.Error("a listener was called after Close")
	}
}
