package bash

import (
	"sync"
	"time"
)

// Task is the live handle of a background task. The same *Task is returned by Start, Get and List
// and passed to listeners. Its methods are safe for concurrent use; the facts they report change
// once, when the task ends (Status may change earlier, when it is killed).
//
// Only a backend creates tasks, with [NewTask]; it keeps the [TaskControl] that settles them.
type Task struct {
	id      TaskID
	command string
	started time.Time
	done    chan struct{}

	mu       sync.Mutex
	status   TaskStatus
	exitCode *int
	signal   string
}

// ID returns the task's id.
func (t *Task) ID() TaskID { return t.id }

// Command returns the command the task runs.
func (t *Task) Command() string { return t.command }

// Started returns when the backend created the task (just before it started the command).
func (t *Task) Started() time.Time { return t.started }

// Status returns the task's current status.
func (t *Task) Status() TaskStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// ExitCode returns the task's exit status, the shape of RunResult.ExitCode: nil while the task
// runs or when it was killed by a signal (or never started). The pointer is the caller's copy.
func (t *Task) ExitCode() *int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exitCode == nil {
		return nil
	}
	code := *t.exitCode
	return &code
}

// Signal returns the name of the signal that killed the task ("SIGKILL"), or "" while it runs or
// when it exited normally.
func (t *Task) Signal() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.signal
}

// Done returns a channel that is closed once the task has ended, its exit facts are final, its
// output is complete (a ReadOutput from then on returns everything not yet read, a spawn failure
// note included) and its listeners have run. It is closed exactly once and never fails.
func (t *Task) Done() <-chan struct{} { return t.done }

// TaskControl is a backend's side of a [Task]: the methods that change it. Keep it private to the
// backend; consumers only ever see the *Task.
type TaskControl struct {
	task   *Task
	settle sync.Once
}

// NewTask returns a running task with the given id and command, and the control that settles it.
// The backend must call Settle exactly once, eventually, for every task it creates.
func NewTask(id TaskID, command string) (*Task, *TaskControl) {
	t := &Task{id: id, command: command, started: time.Now(), status: TaskRunning, done: make(chan struct{})}
	return t, &TaskControl{task: t}
}

// MarkKilled sets the task's status to TaskKilled if it is still running, and reports whether it
// changed. Exit facts recorded later by Settle do not change the status again.
func (c *TaskControl) MarkKilled() bool {
	t := c.task
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != TaskRunning {
		return false
	}
	t.status = TaskKilled
	return true
}

// Settle records the task's exit facts, runs notify (when it is not nil) with the task, then closes
// the task's Done channel, in that order. exitCode is nil when the process was killed by a signal
// or never started, and signal names the signal or is empty. A task still running at this point
// ends TaskKilled when signal is set and TaskCompleted otherwise. Only the first call has an effect.
func (c *TaskControl) Settle(exitCode *int, signal string, notify func(*Task)) {
	c.settle.Do(func() {
		t := c.task
		t.mu.Lock()
		if exitCode != nil {
			code := *exitCode
			t.exitCode = &code
		}
		t.signal = signal
		if t.status == TaskRunning {
			if signal != "" {
				t.status = TaskKilled
			} else {
				t.status = TaskCompleted
			}
		}
		t.mu.Unlock()
		if notify != nil {
			notify(t)
		}
		close(t.done)
	})
}
