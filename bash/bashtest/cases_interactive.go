package bashtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// interactiveCases check bash.Interactive. They run only against an executor that has it; one
// without it is reported as lacking it (an error with Options.Interactive, a skip otherwise).
var interactiveCases = []testCase{
	{name: "interactive/echo", interactive: true, check: interactiveEcho},
	{name: "interactive/eof-ends-cat", interactive: true, check: interactiveEOF},
	{name: "interactive/repl", interactive: true, check: interactiveREPL},
	{name: "interactive/password", interactive: true, check: interactivePassword},
	{name: "interactive/sigint-trap", interactive: true, check: interactiveSigint},
	{name: "interactive/wait-wakes", interactive: true, check: interactiveWaitWakes},
	{name: "interactive/wait-timeout", interactive: true, check: interactiveWaitTimeout},
	{name: "interactive/finished", interactive: true, check: interactiveFinished},
	{name: "interactive/large-input", interactive: true, check: interactiveLarge},
}

func init() { cases = append(cases, interactiveCases...) }

// in returns the executor's Interactive ability; the kit runs these cases only when it has one.
func (c *kc) in() bash.Interactive { return c.ex.(bash.Interactive) }

func (c *kc) startInput(command string, tty bool) *bash.Task {
	return c.start(c.spec(command, func(r *bash.Request) {
		if tty {
			r.TTY = &bash.TTY{}
		} else {
			r.OpenStdin = true
		}
	}))
}

func (c *kc) write(task *bash.Task, s string) {
	var err error
	var n int
	c.call(fmt.Sprintf("Write(%q)", task.ID()), c.quick(), func() { n, err = c.in().Write(c.ctx, task.ID(), []byte(s)) })
	if err != nil || n != len(s) {
		c.fatalf("Write(%q, %q) = %d, %v; want %d, nil", task.ID(), s, n, err, len(s))
	}
}

// waitOutput waits (with Wait, never a poll) until the output read from task contains want, and
// returns everything read.
func (c *kc) waitOutput(task *bash.Task, want string) string {
	deadline := time.Now().Add(c.opts.Slack)
	var got string
	for {
		got += c.read(task.ID()).Delta
		if strings.Contains(got, want) {
			return got
		}
		var ev bash.TaskEvent
		var err error
		c.call(fmt.Sprintf("Wait(%q)", task.ID()), c.opts.Slack*2, func() {
			ev, err = c.in().Wait(c.ctx, task.ID(), bash.WaitFor{Output: true}, deadline)
		})
		if err != nil {
			c.fatalf("Wait(%q) returned %v", task.ID(), err)
		}
		if ev.TimedOut || (ev.Done && !ev.Output) {
			got += c.read(task.ID()).Delta
			if strings.Contains(got, want) {
				return got
			}
			c.fatalf("task %s (%q): output %q, want it to contain %q (event %+v)", task.ID(), task.Command(), got, want, ev)
		}
	}
}

func interactiveEcho(c *kc) {
	task := c.startInput("cat", false)
	c.write(task, "ping\n")
	c.waitOutput(task, "ping\n")
	c.mustKill(task.ID())
}

func interactiveEOF(c *kc) {
	for _, tty := range []bool{false, true} {
		task := c.startInput("cat; echo after-eof", tty)
		c.write(task, "line\n")
		c.waitOutput(task, "line")
		if err := c.in().CloseInput(task.ID()); err != nil {
			c.fatalf("CloseInput(%q) (tty %v) = %v, want nil", task.ID(), tty, err)
		}
		c.mustDone(task, c.quick(), "after CloseInput: cat reads end-of-file")
		c.wantFacts(task, completed(0), "")
		if err := c.in().CloseInput(task.ID()); !errors.Is(err, bash.ErrInputClosed) {
			c.errorf("second CloseInput(%q) = %v, want ErrInputClosed", task.ID(), err)
		}
	}
}

func interactiveREPL(c *kc) {
	task := c.startInput(`while read -r l; do [ "$l" = quit ] && exit 0; echo "re:$l"; done`, true)
	for _, line := range []string{"one", "two", "three"} {
		c.write(task, line+"\n")
		c.waitOutput(task, "re:"+line)
	}
	c.write(task, "quit\r")
	c.mustDone(task, c.quick(), "after quit")
	c.wantFacts(task, completed(0), "")
}

func interactivePassword(c *kc) {
	task := c.startInput(`read -r -s -p 'Password: ' pw; echo; echo "len=${#pw}"`, true)
	got := c.waitOutput(task, "Password: ")
	c.write(task, "hunter22\n")
	got += c.waitOutput(task, "len=8")
	c.mustDone(task, c.quick(), "after the password")
	if strings.Contains(got, "hunter22") {
		c.errorf("the password typed at read -s appeared in the output %q: the terminal must not echo it", got)
	}
}

func interactiveSigint(c *kc) {
	task := c.startInput(`trap 'echo got-int; exit 0' INT; echo armed; while :; do sleep 0.05; done`, false)
	c.waitOutput(task, "armed")
	ok, err := c.in().Signal(task.ID(), bash.SIGINT)
	if !ok || err != nil {
		c.fatalf("Signal(%q, SIGINT) = %v, %v; want true, nil", task.ID(), ok, err)
	}
	c.mustDone(task, c.killLimit(), "after SIGINT to a trap that exits")
	c.wantFacts(task, completed(0), ": a trapped signal is no kill")
	if ok, err := c.in().Signal(task.ID(), bash.SIGINT); ok || err != nil {
		c.errorf("Signal of a finished task = %v, %v; want false, nil", ok, err)
	}
	if _, err := c.in().Signal(task.ID(), "SIGBOGUS"); err == nil {
		c.errorf("Signal with SIGBOGUS returned no error")
	}
}

func interactiveWaitWakes(c *kc) {
	task := c.startInput("cat", false)
	far := time.Now().Add(10 * c.opts.Slack)
	type result struct {
		ev  bash.TaskEvent
		err error
	}
	woke := make(chan result, 1)
	go func() {
		ev, err := c.in().Wait(c.ctx, task.ID(), bash.WaitFor{Output: true}, far)
		woke <- result{ev, err}
	}()
	select {
	case r := <-woke:
		c.fatalf("Wait returned %+v, %v before any output was written", r.ev, r.err)
	default:
	}
	c.write(task, "wake\n")
	timer := time.NewTimer(c.opts.Slack)
	defer timer.Stop()
	select {
	case r := <-woke:
		if r.err != nil || !r.ev.Output || r.ev.TimedOut {
			c.errorf("Wait after output = %+v, %v; want an Output event", r.ev, r.err)
		}
	case <-timer.C:
		c.fatalf("Wait did not wake within %v of the output (its deadline was %v away)", c.opts.Slack, 10*c.opts.Slack)
	}
	c.waitOutput(task, "wake")
	c.mustKill(task.ID())
}

func interactiveWaitTimeout(c *kc) {
	task := c.startInput("cat", false)
	const d = 100 * time.Millisecond
	start := time.Now()
	ev, err := c.in().Wait(c.ctx, task.ID(), bash.WaitFor{Output: true}, start.Add(d))
	if err != nil || !ev.TimedOut || ev.Output || ev.Done {
		c.errorf("Wait with no output = %+v, %v; want TimedOut", ev, err)
	}
	if el := time.Since(start); el < d {
		c.errorf("Wait timed out after %v, before its deadline %v", el, d)
	}
	ctx, cancel := context.WithCancel(c.ctx)
	cancel()
	if _, err := c.in().Wait(ctx, task.ID(), bash.WaitFor{Output: true}, time.Time{}); !errors.Is(err, context.Canceled) {
		c.errorf("Wait with a cancelled context = %v, want context.Canceled", err)
	}
	if task.Status() != bash.TaskRunning {
		c.errorf("task %s ended after waits: %v", task.ID(), factsOf(task))
	}
	c.mustKill(task.ID())
}

func interactiveFinished(c *kc) {
	task := c.startInput("true", false)
	c.mustDone(task, c.quick(), "for true")
	if _, err := c.in().Write(c.ctx, task.ID(), []byte("x\n")); !errors.Is(err, bash.ErrInputClosed) {
		c.errorf("Write to a finished task = %v, want ErrInputClosed", err)
	}
	plain := c.startCmd(CmdSleep)
	if _, err := c.in().Write(c.ctx, plain.ID(), []byte("x\n")); !errors.Is(err, bash.ErrInputClosed) {
		c.errorf("Write to a task started without input = %v, want ErrInputClosed", err)
	}
	if _, err := c.in().Write(c.ctx, "bashtest-never-issued", []byte("x")); !errors.Is(err, bash.ErrUnknownTask) {
		c.errorf("Write to an unknown id = %v, want ErrUnknownTask", err)
	}
	gone := c.startInput("exec 0<&-; echo closed; sleep 60", false)
	c.waitOutput(gone, "closed")
	if _, err := c.in().Write(c.ctx, gone.ID(), []byte("x\n")); !errors.Is(err, bash.ErrInputClosed) {
		c.errorf("Write to a program that closed its stdin = %v, want ErrInputClosed", err)
	}
	if gone.Status() != bash.TaskRunning {
		c.errorf("a failed Write changed the task: %v", factsOf(gone))
	}
	c.mustKill(gone.ID())
	c.mustKill(plain.ID())
}

func interactiveLarge(c *kc) {
	const size = 1 << 20 // far above a pipe's 64 KiB buffer
	task := c.startInput("wc -c", false)
	var n int
	var err error
	c.call("Write of 1 MiB", c.opts.Slack*2, func() { n, err = c.in().Write(c.ctx, task.ID(), make([]byte, size)) })
	if err != nil || n != size {
		c.fatalf("Write of %d bytes = %d, %v", size, n, err)
	}
	if err := c.in().CloseInput(task.ID()); err != nil {
		c.fatalf("CloseInput = %v", err)
	}
	c.mustDone(task, c.quick(), "after CloseInput")
	if got := strings.TrimSpace(c.read(task.ID()).Delta); got != fmt.Sprint(size) {
		c.errorf("wc -c counted %q, want %d", got, size)
	}
	stuck := c.startInput("sleep 60", false)
	ctx, cancel := context.WithTimeout(c.ctx, 100*time.Millisecond)
	defer cancel()
	c.call("Write to a program that never reads", c.opts.Slack, func() { n, err = c.in().Write(ctx, stuck.ID(), make([]byte, size)) })
	if !errors.Is(err, context.DeadlineExceeded) || n >= size {
		c.errorf("Write of %d bytes to a program that never reads = %d, %v; want fewer, context.DeadlineExceeded", size, n, err)
	}
	c.mustKill(stuck.ID())
}
