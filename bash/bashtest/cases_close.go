package bashtest

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/dsh-go/dsh/bash"
)

func listenersOnce(c *kc) {
	rec := newRecorder(c)
	c.onTaskDone(rec.listener("L"))
	natural := rec.start(c.spec(CmdTrue, nil))
	exit3 := rec.start(c.spec(CmdExit3, nil))
	self := rec.start(c.spec(CmdSelfTerm, nil))
	killed := rec.start(c.spec(CmdSleep, nil))
	dir := c.missingDir()
	failed := rec.start(c.spec(CmdTrue, func(r *bash.Request) { r.Workdir = dir }))
	c.mustKill(killed.ID())
	tests := []struct {
		task *bash.Task
		why  string
	}{
		{natural, "a natural exit"},
		{exit3, "a non-zero exit"},
		{self, "a self-signal"},
		{killed, "a Kill"},
		{failed, "a spawn failure"},
	}
	for _, tt := range tests {
		c.mustDone(tt.task, c.killLimit(), "after "+tt.why)
	}
	for _, tt := range tests {
		rec.expectOnce(tt.task, tt.why, "L")
	}
}

func listenersOrderUnsubscribe(c *kc) {
	rec := newRecorder(c)
	unA := c.onTaskDone(rec.listener("A"))
	unB := c.onTaskDone(rec.listener("B"))
	unC := c.onTaskDone(rec.listener("C"))
	first := rec.start(c.spec(CmdTrue, nil))
	c.mustDone(first, c.quick(), "for a command that ends by itself")
	if got := rec.names(first); !slices.Equal(got, []string{"A", "B", "C"}) {
		c.errorf("listeners ran in the order %v for task %s, want registration order [A B C], each once", got, first.ID())
	}
	unB()
	unB() // harmless
	second := rec.start(c.spec(CmdTrue, nil))
	c.mustDone(second, c.quick(), "for a command that ends by itself")
	if got := rec.names(second); !slices.Equal(got, []string{"A", "C"}) {
		c.errorf("after B unsubscribed, listeners ran %v for task %s, want [A C]: unsubscribe removes a listener", got, second.ID())
	}
	unA()
	unC()
	third := rec.start(c.spec(CmdTrue, nil))
	c.mustDone(third, c.quick(), "for a command that ends by itself")
	if got := rec.names(third); len(got) != 0 {
		c.errorf("after every listener unsubscribed, listeners %v ran for task %s, want none", got, third.ID())
	}
}

func listenersPanic(c *kc) {
	rec := newRecorder(c)
	c.onTaskDone(func(*bash.Task) { panic("bashtest: a deliberately panicking listener") })
	c.onTaskDone(rec.listener("next"))
	for range 2 {
		task := rec.start(c.spec(CmdTrue, nil))
		c.mustDone(task, c.quick(), "although a listener panicked")
		if got := rec.names(task); !slices.Equal(got, []string{"next"}) {
			c.errorf("the listener registered after a panicking one ran %d times for task %s, want once: a panicking listener does not stop the others", len(got), task.ID())
		}
	}
}

func closeKillsAndWaits(c *kc) {
	rec := newRecorder(c)
	c.onTaskDone(rec.listener("L"))
	finished := rec.start(c.spec(CmdTrue, nil))
	c.mustDone(finished, c.quick(), "for a command that ends by itself")
	sleeping := rec.start(c.spec(CmdSleep, nil))
	trapped := rec.start(c.spec(CmdTrapTerm, nil))
	c.readUntil(trapped, "armed\n", c.quick())

	rec.closing.Store(true)
	begin := time.Now()
	if err := c.close(context.Background(), c.killLimit()); err != nil {
		c.errorf("Close returned %v, want nil", err)
	}
	took := time.Since(begin)
	for _, task := range []*bash.Task{sleeping, trapped} {
		if !isClosed(task.Done()) {
			c.errorf("Close returned before task %s (%q) ended: Close waits until every process is gone", task.ID(), task.Command())
		}
	}
	if took < c.opts.Grace {
		c.errorf("Close returned %v after it began, before the %v grace period: the task that ignores SIGTERM cannot be gone yet", took, c.opts.Grace)
	}
	c.wantFacts(finished, completed(0), ": Close leaves finished tasks as they are")
	c.wantFacts(sleeping, killedBy("SIGTERM"), ": Close kills running tasks")
	c.wantFacts(trapped, killedBy("SIGKILL"), ": Close kills a task that ignores SIGTERM after the grace period")
	for _, call := range rec.afterClose() {
		c.errorf("listener %s was called for task %s after Close began: listeners are silent once Close has begun", call.listener, call.task.ID())
	}
	if tasks := c.list(); len(tasks) != 0 {
		c.errorf("List after Close = %v, want empty", ids(tasks))
	}
	for _, task := range []*bash.Task{finished, sleeping, trapped} {
		if got, ok := c.get(task.ID()); ok || got != nil {
			c.errorf("Get(%q) after Close = %p, %v; want nil, false", task.ID(), got, ok)
		}
	}
	spec := c.spec(CmdTrue, nil)
	if _, _, err := c.run(c.ctx, spec, c.endLimit()); !errors.Is(err, bash.ErrClosed) {
		c.errorf("Run after Close returned %v, want bash.ErrClosed", err)
	}
	if task, err := c.startErr(spec, c.quick()); !errors.Is(err, bash.ErrClosed) {
		c.errorf("Start after Close returned %v, %v; want bash.ErrClosed", ids([]*bash.Task{task}), err)
	}
}

func closeExpiredContext(c *kc) {
	trapped := c.startCmd(CmdTrapTerm)
	c.readUntil(trapped, "armed\n", c.quick())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.close(ctx, c.killLimit())
	if !errors.Is(err, context.Canceled) {
		c.errorf("Close with a context that is already done returned %v, want the context's error", err)
	}
	if !isClosed(trapped.Done()) {
		c.errorf("Close with a context that is already done returned before task %s ended: it sends SIGKILL at once and still waits for the processes to be reaped", trapped.ID())
	}
	c.wantFacts(trapped, killedBy("SIGKILL"), ": Close with a done context sends SIGKILL at once")
}

func closeIdempotent(c *kc) {
	task := c.startCmd(CmdSleep)
	var errs [2]error
	var ended [2]bool
	c.parallel(2, func(i int) {
		errs[i] = c.close(context.Background(), c.killLimit())
		ended[i] = isClosed(task.Done())
	})
	for i := range 2 {
		if errs[i] != nil {
			c.errorf("one of two concurrent Close calls returned %v, want nil", errs[i])
		}
		if !ended[i] {
			c.errorf("one of two concurrent Close calls returned before the running task ended: a second Close waits for the first")
		}
	}
	if err := c.close(context.Background(), c.quick()); err != nil {
		c.errorf("Close after Close returned %v, want nil", err)
	}
}

func concurrentUse(c *kc) {
	const workers = 8
	started := make([]*bash.Task, workers)
	c.parallel(workers, func(i int) {
		task := c.startCmd(CmdEcho)
		started[i] = task
		res := c.mustRun(c.spec(CmdEcho, nil))
		if res.Stdout.Text() != "hi\n" {
			c.errorf("a concurrent Run(%q) printed %q, want %q", CmdEcho, res.Stdout.Text(), "hi\n")
		}
		c.list()
		c.ownerOf(task.ID())
		c.mustDone(task, c.quick(), "for a command that ends by itself")
		if r := c.read(task.ID()); r.Delta != "hi\n" {
			c.errorf("a concurrent read of task %s (%q) gave %q, want %q", task.ID(), CmdEcho, r.Delta, "hi\n")
		}
		c.mustKill(task.ID())
	})
	seen := map[bash.TaskID]bool{}
	for _, task := range started {
		if task == nil {
			continue
		}
		if seen[task.ID()] {
			c.errorf("concurrent Starts issued id %q twice", task.ID())
		}
		seen[task.ID()] = true
	}
	if tasks := c.list(); len(tasks) != len(seen) {
		c.errorf("after %d concurrent Starts List has %d tasks", len(seen), len(tasks))
	}
}
