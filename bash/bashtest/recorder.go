package bashtest

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// listenCall is what a recording listener saw when it was called.
type listenCall struct {
	listener   string
	task       *bash.Task
	facts      facts
	doneClosed bool
	afterClose bool
}

// recorder records the calls of its listeners and checks, inside each call, the promises that can
// only be seen from there: the call does not come from inside Start, and the task is in the table.
type recorder struct {
	c *kc

	// closing is set by the case just before it calls Close.
	closing atomic.Bool

	mu    sync.Mutex
	calls []listenCall
	// gate is closed once the Start call in progress has returned.
	gate chan struct{}
}

func newRecorder(c *kc) *recorder { return &recorder{c: c} }

// listener returns a listener, named name in reports, that records its calls.
func (r *recorder) listener(name string) bash.TaskListener {
	return func(task *bash.Task) {
		call := listenCall{listener: name, task: task, doneClosed: isClosed(task.Done()), afterClose: r.closing.Load()}
		if task != nil {
			call.facts = factsOf(task)
		}
		r.mu.Lock()
		r.calls = append(r.calls, call)
		gate := r.gate
		r.mu.Unlock()
		if task == nil {
			r.c.errorf("listener %s was called with a nil task", name)
			return
		}
		if call.afterClose {
			return // reported by the case; Get answers nothing after Close
		}
		if gate != nil {
			select {
			case <-gate:
			case <-time.After(r.c.quick()):
				r.c.errorf("listener %s was called for task %s before Start returned (Start had not returned %v later): listeners never run inside Start", name, task.ID(), r.c.quick())
				return
			}
		}
		var got *bash.Task
		var ok bool
		if err := r.c.try("Get called from a listener", r.c.quick(), func() { got, ok = r.c.ex.Get(task.ID()) }); err != nil {
			r.c.errorf("%v: a listener may call the executor", err)
			return
		}
		if !ok || got != task {
			r.c.errorf("inside listener %s, Get(%q) = %p, %v; want the task it was called with (%p): a task is in the table before its listeners run", name, task.ID(), got, ok, task)
		}
	}
}

// start starts spec, letting listeners that run meanwhile wait until Start has returned, and ends
// the case unless Start returned a task.
func (r *recorder) start(spec bash.Request) *bash.Task {
	task, err := r.startErr(spec)
	if err != nil {
		r.c.fatalf("Start(%q) returned %v, want a task", spec.Command, err)
	}
	if task == nil {
		r.c.fatalf("Start(%q) returned a nil task and no error", spec.Command)
	}
	return task
}

// startErr is start that returns Start's error.
func (r *recorder) startErr(spec bash.Request) (*bash.Task, error) {
	gate := make(chan struct{})
	r.mu.Lock()
	r.gate = gate
	r.mu.Unlock()
	defer close(gate)
	// A listener called inside Start waits for the gate for r.c.quick(), so Start gets longer.
	return r.c.startErr(spec, 3*r.c.quick())
}

// callsFor returns the recorded calls for task, in call order.
func (r *recorder) callsFor(task *bash.Task) []listenCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var calls []listenCall
	for _, call := range r.calls {
		if call.task != nil && call.task.ID() == task.ID() {
			calls = append(calls, call)
		}
	}
	return calls
}

// names returns the listener names of the recorded calls for task, in call order.
func (r *recorder) names(task *bash.Task) []string {
	var names []string
	for _, call := range r.callsFor(task) {
		names = append(names, call.listener)
	}
	return names
}

// expectOnce checks that each listener in names was called exactly once for task, which is done,
// and that each call saw the task as the contract promises.
func (r *recorder) expectOnce(task *bash.Task, why string, names ...string) {
	c := r.c
	calls := r.callsFor(task)
	final := factsOf(task)
	for _, name := range names {
		n := 0
		for _, call := range calls {
			if call.listener == name {
				n++
			}
		}
		switch {
		case n == 0:
			c.errorf("listener %s was not called for task %s (%q, %s) by the time its Done channel closed: listeners run once for every task, before Done closes", name, task.ID(), task.Command(), why)
		case n > 1:
			c.errorf("listener %s was called %d times for task %s (%q, %s), want exactly once", name, n, task.ID(), task.Command(), why)
		}
	}
	for _, call := range calls {
		if !slices.Contains(names, call.listener) {
			continue
		}
		if call.task != task {
			c.errorf("listener %s got a different *Task for %s than Start returned: the same handle is passed to listeners", call.listener, task.ID())
		}
		if call.facts.status == bash.TaskRunning {
			c.errorf("listener %s saw task %s (%q) still running: exit facts are final before listeners run", call.listener, task.ID(), task.Command())
		} else if call.facts != final {
			c.errorf("listener %s saw task %s (%q) with %v, but after Done it has %v: exit facts are final before listeners run", call.listener, task.ID(), task.Command(), call.facts, final)
		}
		if call.doneClosed {
			c.errorf("listener %s ran for task %s (%q) after its Done channel was closed: listeners run before Done closes", call.listener, task.ID(), task.Command())
		}
	}
}

// afterClose returns the calls made after the case set closing.
func (r *recorder) afterClose() []listenCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var calls []listenCall
	for _, call := range r.calls {
		if call.afterClose {
			calls = append(calls, call)
		}
	}
	return calls
}
