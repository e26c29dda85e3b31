package ptyshell

import (
	"context"
	"errors"
	"fmt"

	"github.com/dsh-go/dsh/internal/proctree"
	"golang.org/x/sys/unix"
)

// maxContRetries bounds the SIGINTs sent to a shell that stays at its continuation prompt.
const maxContRetries = 5

// runLine types line (which prints the markers of nonce) and follows it; s.runMu is held.
func (s *Shell) runLine(ctx context.Context, nonce, line string) (Result, error) {
	tr := newTracker(nonce, s.cfg.MaxOutputChars)
	s.mu.Lock()
	s.track = tr
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.track = nil
		s.mu.Unlock()
	}()

	if err := s.write(ctx, line+"\r"); err != nil {
		s.broken = true
		if cause := context.Cause(ctx); cause != nil {
			return Result{Output: s.outputOf(tr)}, cause
		}
		if s.Exited() {
			s.Close()
			return s.exitResult(tr), nil
		}
		return Result{}, fmt.Errorf("send command to the shell: %w", err)
	}
	c := &command{s: s, tr: tr, probe: newProbe(s)}
	defer c.probe.stop()
	return c.follow(ctx)
}

// command is one typed line being followed until it ends: the tracker of its output, the probe
// for readers of the terminal and the answers given to them. Its methods run on Run's goroutine
// with s.runMu held.
type command struct {
	s           *Shell
	tr          *tracker
	res         Result // the stdin answers so far
	probe       *probe
	answers     ladder
	contSent    bool // the continuation prompt was interrupted
	contRetries int  // SIGINTs sent again since
}

// end is what Run returns once a command is over.
type end struct {
	r   Result
	err error
}

// follow waits for the command to end: its end marker and the prompt, the prompt alone, the
// shell's exit, an answer that ends it, or ctx.
func (c *command) follow(ctx context.Context) (Result, error) {
	s := c.s
	for {
		s.mu.Lock()
		ph, cont, synced := c.tr.phase, c.tr.cont, s.synced
		s.mu.Unlock()
		if e := c.settled(ph); e != nil {
			return e.r, e.err
		}
		if cont && !c.contSent {
			c.contSent = true
			_ = s.Interrupt()
		}
		if w, fg, ok := c.probe.confirmed(ph, synced); ok {
			if e := c.answer(ctx, w, fg, ph); e != nil {
				return e.r, e.err
			}
			continue
		}
		select {
		case <-s.notify:
		case <-s.exited:
		case <-ctx.Done():
			s.broken = true
			return c.partial(), context.Cause(ctx)
		case <-c.probe.C():
			if s.stopped() {
				e := c.lose(LostStopped)
				return e.r, e.err
			}
			s.mu.Lock()
			ph = c.tr.phase
			s.mu.Unlock()
			c.probe.look(ph)
		}
	}
}

// settled returns the end of a command whose phase ph is final or whose shell has exited, and
// nil while it runs.
func (c *command) settled(ph phase) *end {
	switch ph {
	case phaseReady:
		return c.finish(Completed)
	case phasePrompt:
		if c.contSent {
			return c.finish(Continuation)
		}
		return c.finish(AtPrompt)
	}
	if !c.s.Exited() {
		return nil
	}
	c.s.Close() // stops what is left and drains the terminal
	r := c.s.exitResult(c.tr)
	r.StdinEOFs, r.Interrupted, r.Killed = c.res.StdinEOFs, c.res.Interrupted, c.res.Killed
	return &end{r: r}
}

// answer acts on w, a thread of the foreground group fg confirmed blocked reading the terminal
// in phase ph, and returns the command's end when that ends it.
func (c *command) answer(ctx context.Context, w waiter, fg int, ph phase) *end {
	s := c.s
	switch {
	case ph == phaseWaitStart && c.contSent:
		// Still no prompt after the interrupt of a continuation prompt, and the shell sits
		// reading the terminal since: the SIGINT was lost. Send another.
		if c.contRetries++; c.contRetries > maxContRetries {
			s.broken = true
			return &end{r: c.partial(), err: errors.New("the shell did not leave its continuation prompt after SIGINT")}
		}
		_ = s.Interrupt()
		return nil
	case ph == phaseEnded:
		// The end marker came but no prompt marker (PROMPT_COMMAND was changed): the shell
		// itself reading the terminal is its prompt.
		if w.pid == s.pid {
			return c.finish(Completed)
		}
		return nil
	}
	ours := w.pid == s.pid && !s.replaced()
	if ours && w.editor {
		// Our shell waits in its line editor. After its line (the start marker missing, or
		// PS1 displayed since it) that is its prompt, though neither the end marker nor the
		// prompt marker came: what prints them no longer reaches us. Otherwise the editor
		// reads a line for a command (read -e), which is answered like any program.
		s.mu.Lock()
		shown := c.tr.shown
		s.mu.Unlock()
		switch {
		case !writesTTY(s.pid, 1, s.tty):
			return c.lose(LostRedirected)
		case ph == phaseWaitStart || shown:
			return c.lose(LostPrompt)
		}
	}
	switch c.answers.next(w) {
	case rungEOF:
		c.res.StdinEOFs++
		c.probe.sentEOF(w)
		_ = s.write(ctx, string([]byte{s.eof()}))
	case rungInterrupt:
		c.res.Interrupted = true
		_ = unix.Kill(-fg, unix.SIGINT)
	case rungKill:
		if ours {
			return c.lose(LostReading)
		}
		c.res.Killed = true
		if fg == s.pid {
			// The reader runs in the shell's own group (a command substitution, or the
			// program the shell exec'd): kill it alone, never a shell we still follow.
			proctree.Signal(procStat{PID: w.pid, StartTime: w.start}, unix.SIGKILL)
		} else {
			_ = unix.Kill(-fg, unix.SIGKILL)
		}
	}
	return nil
}

// lose ends the command because the shell can no longer be followed (reason): it keeps the
// output so far, without a prompt the shell printed at its end, and closes the shell.
func (c *command) lose(reason LostReason) *end {
	r := c.partial()
	r.Outcome, r.Lost = Lost, reason
	r.Output = trimPrompt(r.Output)
	c.s.Close()
	return &end{r: r}
}

// finish ends the command with outcome o and what the tracker holds.
func (c *command) finish(o Outcome) *end {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	r := c.res
	r.Outcome = o
	r.ExitCode = c.tr.status
	r.Output = c.tr.output()
	return &end{r: r}
}

// partial returns the stdin answers and the output so far, for a command that did not end.
func (c *command) partial() Result {
	r := c.res
	r.Output = c.s.outputOf(c.tr)
	return r
}
