package bashssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/launcher"
)

// reapInterval is how often the executor checks, in one session, whether the process groups of
// finished commands still have members (a command may leave processes behind), forgetting those
// that are gone so that their ids are never signalled later.
var reapInterval = 5 * time.Second

// maxBatch bounds the process groups one controller session handles.
const maxBatch = 4000

// target is a process group to stop (pgid 0 when it never became known), the start time of its
// leader as the launcher reported it ("" when unknown) and the tag its processes carry.
type target struct {
	pgid  int
	start string
	tag   string
}

// stopHandle is one controller session stopping process groups.
type stopHandle struct {
	done chan struct{}

	mu     sync.Mutex
	ch     ssh.Channel
	forced bool
	err    error
}

func newStopHandle(forced bool) *stopHandle {
	return &stopHandle{done: make(chan struct{}), forced: forced}
}

// forceKill asks for SIGKILL now instead of after the grace period.
func (h *stopHandle) forceKill() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.forced {
		return
	}
	h.forced = true
	if h.ch != nil {
		_, _ = h.ch.Write([]byte("kill\n"))
	}
}

func (h *stopHandle) error() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// stopGroups starts stopping targets, and every process whose tag matches sweep, on a goroutine of
// the executor, and returns the handle at once. When the host cannot be reached the targets are
// remembered as orphans, to be stopped once a connection is made again.
func (e *Executor) stopGroups(targets []target, sweep string, forced bool) *stopHandle {
	h := newStopHandle(forced)
	e.startStop(h, targets, sweep, "", true)
	return h
}

// startStop runs h over targets. With remember set, targets a failed stop could not reach become
// orphans. since is passed to runStop.
func (e *Executor) startStop(h *stopHandle, targets []target, sweep, since string, remember bool) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(h.done)
		err := e.runStop(h, targets, sweep, since)
		h.mu.Lock()
		h.err = err
		h.mu.Unlock()
		if remember && unreachable(err) {
			e.mu.Lock()
			if !e.closed {
				e.orphans = append(e.orphans, targets...)
			}
			e.mu.Unlock()
		}
	}()
}

// errNoConnection is the cause of a cleanup put off until a connection is up.
var errNoConnection = errors.New("no connection")

// unreachable reports whether err means the host could not be reached, so that the work is worth
// trying again later.
func unreachable(err error) bool {
	var ce *ConnectError
	return errors.Is(err, ErrConnectionLost) || errors.Is(err, errNoConnection) || errors.As(err, &ce)
}

// runStop runs one controller session that stops targets and the sweep, and waits for it. With
// since set (the start time of the executor's first command), it also returns an error naming the
// processes of the remote user started since then that the controller could not inspect.
func (e *Executor) runStop(h *stopHandle, targets []target, sweep, since string) error {
	var pgids []int
	for _, t := range targets {
		if t.pgid > 0 {
			pgids = append(pgids, t.pgid)
		}
	}
	if len(pgids) == 0 && sweep == "" {
		return nil
	}
	c, ch, reqs, err := e.openSession(e.stopCtx, true)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.ch = ch
	grace := e.cfg.Grace
	if h.forced {
		grace = 0
	}
	h.mu.Unlock()
	out, err := e.runControl(c, ch, reqs, controlCommand(e.cfg.RemoteBash, e.marker, "stop", grace, ownPattern(e.tag), sweep, since, targets), false)
	if err != nil {
		return err
	}
	unread, err := launcher.ParseStop(out)
	if err != nil {
		return fmt.Errorf("bashssh: stop process groups %v on %s: %s", pgids, e.host, out)
	}
	if len(unread) > 0 {
		procs := make([]string, 0, len(unread))
		for _, u := range unread {
			procs = append(procs, u.PID+" ("+u.Name+")")
		}
		return fmt.Errorf("%d process(es) of user %s started since the first command were left running: their environment is unreadable (non-dumpable), so whether they are this executor's cannot be told: %s",
			len(procs), e.cfg.User, strings.Join(procs, ", "))
	}
	return nil
}

// runControl runs a controller command line in the open session ch and returns its report: the
// rest of the line that starts with the marker. With closeInput set, the controller's stdin is
// closed at once.
func (e *Executor) runControl(c *conn, ch ssh.Channel, reqs <-chan *ssh.Request, line string, closeInput bool) (string, error) {
	status := make(chan *int, 1)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		var code *int
		for req := range reqs {
			if req.Type == "exit-status" {
				var m struct{ Status uint32 }
				if ssh.Unmarshal(req.Payload, &m) == nil {
					n := int(m.Status)
					code = &n
				}
			}
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
		e.pool.release(c)
		status <- code
	}()
	ok, err := ch.SendRequest("exec", true, ssh.Marshal(struct{ Command string }{line}))
	if err != nil || !ok {
		ch.Close()
		<-status
		if err != nil {
			return "", e.lostError(c, err)
		}
		return "", fmt.Errorf("bashssh: %s refused to run the controller (exec request denied)", e.host)
	}
	if closeInput {
		_ = ch.CloseWrite()
	}
	var stderr bytes.Buffer
	errDone := make(chan struct{})
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(errDone)
		_, _ = io.Copy(&stderr, io.LimitReader(ch.Stderr(), 64<<10))
		_, _ = io.Copy(io.Discard, ch.Stderr())
	}()
	out, _ := io.ReadAll(io.LimitReader(ch, 1<<20))
	_, _ = io.Copy(io.Discard, ch)
	<-errDone
	code := <-status
	switch {
	case code == nil && !c.alive():
		return "", e.lostError(c, nil)
	case code == nil:
		return "", fmt.Errorf("bashssh: controller on %s ended without an exit status: %s", e.host, strings.TrimSpace(stderr.String()))
	}
	report, ok := launcher.Report(out, e.marker)
	if !ok {
		return "", fmt.Errorf("bashssh: controller on %s failed (exit status %d): %s", e.host, *code, strings.TrimSpace(stderr.String()))
	}
	return report, nil
}

// checkGroups asks, over the connection c already holds a slot on, which of pgids still have live
// members of this executor, and returns them.
func (e *Executor) checkGroups(c *conn, targets []target) (map[int]bool, error) {
	ch, reqs, err := c.client.OpenChannel("session", nil)
	if err != nil {
		e.pool.release(c)
		return nil, err
	}
	out, err := e.runControl(c, ch, reqs, controlCommand(e.cfg.RemoteBash, e.marker, "check", 0, ownPattern(e.tag), "", "", targets), true)
	if err != nil {
		return nil, err
	}
	alive, err := launcher.ParseCheck(out)
	if err != nil {
		return nil, fmt.Errorf("bashssh: controller on %s reported %q", e.host, out)
	}
	return alive, nil
}

// openSession opens a session on a pooled connection, dialling when needed. A control session may
// use the session every connection keeps free. When the server refuses a session, it is tried again
// after a short pause; a connection whose server keeps refusing (its MaxSessions is lower than
// ours) takes no more sessions, and another connection is used. When the connection turns out to
// have died unnoticed, a new one is dialled once.
func (e *Executor) openSession(ctx context.Context, control bool) (*conn, ssh.Channel, <-chan *ssh.Request, error) {
	const maxRefusals = 10
	refusals, redials := 0, 0
	for {
		c, err := e.pool.acquire(ctx, control)
		if err != nil {
			if errors.Is(err, errPoolClosed) {
				return nil, nil, nil, bash.ErrClosed
			}
			return nil, nil, nil, err
		}
		ch, reqs, err := c.client.OpenChannel("session", nil)
		if err == nil {
			e.pool.opened(c)
			return c, ch, reqs, nil
		}
		var refused *ssh.OpenChannelError
		if errors.As(err, &refused) {
			e.pool.refused(c)
			if refusals++; refusals >= maxRefusals {
				return nil, nil, nil, fmt.Errorf("bashssh: %s refused a new session %d times: %v (is the server's MaxSessions lower than Config.MaxSessions?)", e.host, refusals, err)
			}
			pause := time.NewTimer(time.Duration(refusals) * 5 * time.Millisecond)
			select {
			case <-pause.C:
			case <-ctx.Done():
				pause.Stop()
				return nil, nil, nil, context.Cause(ctx)
			}
			continue
		}
		e.pool.release(c)
		if redials++; redials == 1 && !c.alive() {
			continue
		}
		return nil, nil, nil, e.lostError(c, err)
	}
}

// lostError reports that c broke, with the reason the connection recorded; cause is used when it
// recorded none. A connection that failed a request is about to be marked dead: wait for that
// briefly, so that the reason is the real one.
func (e *Executor) lostError(c *conn, cause error) error {
	t := time.NewTimer(time.Second)
	select {
	case <-c.dead:
		cause = c.lostErr()
	case <-t.C:
		if cause == nil {
			cause = c.lostErr()
		}
	}
	t.Stop()
	return fmt.Errorf("bashssh: %s: %w: %v", e.host, ErrConnectionLost, cause)
}

// reap runs until Close begins: it stops orphans once a connection is up again, and forgets the
// process groups of finished commands once they are gone.
func (e *Executor) reap() {
	defer close(e.reaperDone)
	tick := time.NewTicker(reapInterval)
	defer tick.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-tick.C:
		case <-e.reapNow:
		}
		e.reapOnce()
		e.reaps.Add(1)
	}
}

// wakeReaper asks the reaper to run now (after a new connection is made).
func (e *Executor) wakeReaper() {
	select {
	case e.reapNow <- struct{}{}:
	default:
	}
}

func (e *Executor) reapOnce() {
	e.mu.Lock()
	orphans := e.orphans
	e.orphans = nil
	var watched []target
	for _, t := range e.watch {
		if len(watched) == maxBatch {
			break
		}
		watched = append(watched, t)
	}
	e.mu.Unlock()

	if len(orphans) > 0 {
		err := errNoConnection
		if e.pool.hasLive() {
			var tags []string
			for _, t := range orphans {
				tags = append(tags, t.tag)
			}
			err = e.runStop(newStopHandle(false), orphans, tagsPattern(tags), "")
			if err != nil {
				e.cfg.Logger.Warn("bashssh: stopping commands whose connection was lost", "host", e.host, "err", err)
			}
		}
		if unreachable(err) {
			e.mu.Lock()
			e.orphans = append(e.orphans, orphans...)
			e.mu.Unlock()
		}
	}
	if len(watched) == 0 {
		return
	}
	c := e.pool.existing()
	if c == nil {
		return
	}
	alive, err := e.checkGroups(c, watched)
	if err != nil {
		return
	}
	e.mu.Lock()
	for _, t := range watched {
		if !alive[t.pgid] {
			delete(e.watch, t.pgid)
		}
	}
	e.mu.Unlock()
}
