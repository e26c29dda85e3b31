package backend

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/dsh-go/dsh/bash"
)

// Listeners is a registry of task-completion listeners for backends: it gives [bash.Executor].OnTaskDone
// and the completion side of Close their contract (registration order, panics contained, silence
// after Close). The zero value is ready to use and logs contained panics with slog.Default; set
// Logger before first use to log elsewhere. It is safe for concurrent use.
type Listeners struct {
	Logger *slog.Logger

	mu      sync.Mutex
	closed  bool
	nextID  uint64
	entries []listenerEntry
}

type listenerEntry struct {
	id uint64
	fn bash.TaskListener
}

// Add registers listener and returns the function that removes it. A nil listener is ignored. After
// Close, Add registers nothing.
func (l *Listeners) Add(listener bash.TaskListener) (remove func()) {
	if listener == nil {
		return func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return func() {}
	}
	l.nextID++
	id := l.nextID
	l.entries = append(l.entries, listenerEntry{id: id, fn: listener})
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, e := range l.entries {
			if e.id == id {
				l.entries = append(l.entries[:i:i], l.entries[i+1:]...)
				return
			}
		}
	}
}

// Notify calls every registered listener with task, in registration order, on the calling
// goroutine. A listener that panics is recovered and logged; the next one still runs. Notify does
// nothing after Close.
func (l *Listeners) Notify(task *bash.Task) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	entries := append([]listenerEntry(nil), l.entries...)
	l.mu.Unlock()
	for _, e := range entries {
		// Close may come while an earlier listener runs: from then on, call no one.
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if closed {
			return
		}
		l.call(e.fn, task)
	}
}

func (l *Listeners) call(fn bash.TaskListener, task *bash.Task) {
	defer func() {
		if r := recover(); r != nil {
			logger := l.Logger
			if logger == nil {
				logger = slog.Default()
			}
			logger.Error("backend: task listener panicked", "task", string(task.ID()),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	fn(task)
}

// Close stops all later notifications and drops every listener. It is idempotent.
func (l *Listeners) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.entries = nil
}
