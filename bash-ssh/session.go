package bashssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/dsh-go/dsh/bash/backend"
)

// SpawnError reports a command that could not be started on the remote host: a working directory
// that does not exist, a missing bash, a server that refused to run it.
type SpawnError struct {
	Host   string // user@host:port
	Reason string
	// Err is the kind of failure, for errors.Is: fs.ErrNotExist for a missing workdir,
	// fs.ErrPermission for one that cannot be entered, syscall.ENOTDIR for one that is not a
	// directory, exec.ErrNotFound for a missing bash; nil otherwise.
	Err error
}

// Error returns "bashssh: start on HOST: REASON".
func (e *SpawnError) Error() string { return fmt.Sprintf("bashssh: start on %s: %s", e.Host, e.Reason) }

// Unwrap returns the kind of failure.
func (e *SpawnError) Unwrap() error { return e.Err }

// launchFailure turns the launcher's "err" control line into a SpawnError.
func (e *Executor) launchFailure(line string) *SpawnError {
	what, rest, _ := strings.Cut(line, " ")
	switch what {
	case "workdir":
		kind, msg, _ := strings.Cut(rest, " ")
		err := map[string]error{"notexist": fs.ErrNotExist, "notdir": syscall.ENOTDIR, "permission": fs.ErrPermission}[kind]
		return &SpawnError{Host: e.host, Reason: "workdir " + msg, Err: err}
	case "bash":
		return &SpawnError{Host: e.host, Reason: rest, Err: exec.ErrNotFound}
	}
	return &SpawnError{Host: e.host, Reason: line}
}

// errNotStarted is the cause recorded when a command was stopped before its session ran it.
var errNotStarted = errors.New("stopped before it started")

// maxNoise bounds what a login shell may print before the launcher's control lines.
const maxNoise = 64 << 10

// exitFacts is how the command's shell ended, as the server reported it.
type exitFacts struct {
	code   *int
	signal string
}

// header is what the launcher's first stdout line said.
type header struct {
	pgid   int
	reason string // "err" line: why the command was not started
	err    error  // the stream ended (or failed) before a control line
}

// remoteProc is one command running in one session: its start, its output, its exit facts and its
// stopping. Its goroutines are counted in the executor's WaitGroup and end when the session's
// channel closes (by the server, or with its connection).
type remoteProc struct {
	e      *Executor
	tag    string
	line   string
	stdin  []byte
	stdout *backend.Collector
	stderr *backend.Collector

	ctx    context.Context // bounds the start; cancelled by a stop that comes first
	cancel context.CancelCauseFunc

	sent     chan struct{} // the command was handed to the server, or the start failed before
	started  chan struct{} // the process group is known, or the start failed
	exited   chan struct{} // the exit facts are known, or the session ended without them
	settled  chan struct{} // output collection has ended
	chClosed chan struct{} // the server closed the session (or the connection went)

	mu         sync.Mutex
	conn       *conn
	ch         ssh.Channel
	execSent   bool
	pgid       int
	exit       exitFacts
	gotExit    bool
	failure    error // why the command did not start, or lost its connection
	notStarted bool  // failure came before the command could have run
	lost       bool  // failure is a lost connection
	stopping   bool
	forced     bool
	stop       *stopHandle
	noise      []byte // what stderr carried before the launcher's control line

	sentOnce  sync.Once
	exitOnce  sync.Once
	startOnce sync.Once
}

// launch starts line in a new session and returns at once; the returned process reports its
// progress through its channels. The start is bounded by the executor's lifetime.
func (e *Executor) launch(line string, stdin []byte, tag string, stdout, stderr *backend.Collector) *remoteProc {
	ctx, cancel := context.WithCancelCause(e.ctx)
	p := &remoteProc{
		e: e, tag: tag, line: line, stdin: stdin, stdout: stdout, stderr: stderr,
		ctx: ctx, cancel: cancel,
		sent: make(chan struct{}), started: make(chan struct{}), exited: make(chan struct{}), settled: make(chan struct{}),
		chClosed: make(chan struct{}),
	}
	e.wg.Add(1)
	go p.run()
	return p
}

func (p *remoteProc) markSent()    { p.sentOnce.Do(func() { close(p.sent) }) }
func (p *remoteProc) markStarted() { p.markSent(); p.startOnce.Do(func() { close(p.started) }) }
func (p *remoteProc) markExited()  { p.exitOnce.Do(func() { close(p.exited) }) }

// fail records why the command did not start or did not finish; the first reason wins.
func (p *remoteProc) fail(err error, notStarted, lost bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failure == nil {
		p.failure, p.notStarted, p.lost = err, notStarted, lost
	}
}

func (p *remoteProc) run() {
	defer p.e.wg.Done()
	defer close(p.settled)
	defer p.cancel(nil)
	c, ch, reqs, err := p.e.openSession(p.ctx, false)
	if err != nil {
		if p.ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", errNotStarted, context.Cause(p.ctx))
		}
		p.fail(err, true, false)
		p.markStarted()
		p.markExited()
		return
	}
	p.mu.Lock()
	p.conn, p.ch = c, ch
	if p.ctx.Err() != nil {
		p.mu.Unlock()
		p.fail(fmt.Errorf("%w: %w", errNotStarted, context.Cause(p.ctx)), true, false)
		ch.Close()
		p.e.wg.Add(1)
		go p.handleRequests(c, reqs)
		p.markStarted()
		p.markExited()
		return
	}
	p.execSent = true
	p.mu.Unlock()
	p.markSent()

	headers := make(chan header, 1)
	var readers sync.WaitGroup
	readers.Add(2)
	p.e.wg.Add(3)
	go p.handleRequests(c, reqs)
	go func() {
		defer p.e.wg.Done()
		defer readers.Done()
		p.readStdout(ch, headers)
	}()
	go func() {
		defer p.e.wg.Done()
		defer readers.Done()
		p.readStderr(ch.Stderr())
	}()
	readersDone := make(chan struct{})
	p.e.wg.Add(1)
	go func() {
		defer p.e.wg.Done()
		readers.Wait()
		close(readersDone)
	}()

	ok, err := ch.SendRequest("exec", true, ssh.Marshal(struct{ Command string }{p.line}))
	switch {
	case err != nil:
		p.fail(p.e.lostError(c, err), false, true)
	case !ok:
		p.fail(&SpawnError{Host: p.e.host, Reason: "the server refused to run a command (exec request denied)"}, true, false)
		ch.Close()
	default:
		p.e.wg.Add(1)
		go func() {
			defer p.e.wg.Done()
			if p.stdin != nil {
				_, _ = ch.Write(p.stdin) // fails when the command exits without reading: expected
			}
			_ = ch.CloseWrite()
		}()
	}

	h := <-headers
	switch {
	case h.pgid > 0:
		p.e.mu.Lock()
		p.e.ran = true
		p.e.mu.Unlock()
		p.mu.Lock()
		p.pgid = h.pgid
		if p.stopping && p.stop == nil {
			p.stop = p.e.stopGroups([]target{{pgid: p.pgid, tag: p.tag}}, tagsPattern([]string{p.tag}), p.forced)
		}
		p.mu.Unlock()
	case h.reason != "":
		p.fail(p.e.launchFailure(h.reason), true, false)
	default:
		// No control line: the login shell could not run the launcher (no bash), or the session
		// broke. Wait for the session's end to tell which, and for stderr to explain it.
		<-p.exited
		wait(readersDone, p.e.cfg.Grace)
		p.mu.Lock()
		failed := p.failure != nil
		p.mu.Unlock()
		if !failed {
			p.fail(p.noStart(h.err), true, false)
		}
	}
	p.markStarted()

	<-p.exited
	wait(readersDone, p.e.cfg.Grace)
	ch.Close()
}

// wait waits until ch is closed, at most d.
func wait(ch <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// noStart explains a session that ended without the launcher's control line.
func (p *remoteProc) noStart(readErr error) *SpawnError {
	p.mu.Lock()
	defer p.mu.Unlock()
	status := "no exit status"
	switch {
	case p.exit.code != nil:
		status = "exit status " + strconv.Itoa(*p.exit.code)
	case p.exit.signal != "":
		status = "killed by " + p.exit.signal
	}
	msg := strings.TrimSpace(strings.ToValidUTF8(string(p.noise), "\uFFFD"))
	if msg == "" && readErr != nil && readErr != io.EOF {
		msg = readErr.Error()
	}
	if msg == "" {
		msg = "no message"
	}
	if p.exit.code != nil && *p.exit.code == 127 {
		return &SpawnError{Host: p.e.host, Err: exec.ErrNotFound,
			Reason: fmt.Sprintf("%s not found on the remote host (%s): %s", p.e.cfg.RemoteBash, status, msg)}
	}
	return &SpawnError{Host: p.e.host,
		Reason: fmt.Sprintf("the remote login shell could not start %s (%s): %s", p.e.cfg.RemoteBash, status, msg)}
}

// handleRequests records the exit facts the server sends and notices the session's end.
func (p *remoteProc) handleRequests(c *conn, reqs <-chan *ssh.Request) {
	defer p.e.wg.Done()
	for req := range reqs {
		switch req.Type {
		case "exit-status":
			var m struct{ Status uint32 }
			if ssh.Unmarshal(req.Payload, &m) == nil {
				code := int(m.Status)
				p.setExit(exitFacts{code: &code})
			}
		case "exit-signal":
			var m struct {
				Signal     string
				CoreDumped bool
				Error      string
				Lang       string
			}
			if ssh.Unmarshal(req.Payload, &m) == nil {
				p.setExit(exitFacts{signal: signalName(m.Signal)})
			}
		}
		if req.WantReply {
			_ = req.Reply(false, nil)
		}
	}
	close(p.chClosed)
	p.e.pool.release(c)
	p.mu.Lock()
	got := p.gotExit
	p.mu.Unlock()
	if !got {
		if !c.alive() {
			p.fail(p.e.lostError(c, nil), false, true)
		} else {
			p.fail(&SpawnError{Host: p.e.host, Reason: "the session ended without an exit status"}, false, false)
		}
	}
	p.markExited()
}

func (p *remoteProc) setExit(f exitFacts) {
	p.mu.Lock()
	if !p.gotExit {
		p.gotExit, p.exit = true, f
	}
	p.mu.Unlock()
	p.markExited()
}

// signalName turns an SSH signal name ("TERM") into the name the seam uses ("SIGTERM").
func signalName(s string) string {
	if s == "" || strings.Contains(s, "@") {
		return "SIGUNKNOWN"
	}
	return "SIG" + strings.TrimPrefix(s, "SIG")
}

// readStdout finds the launcher's control line, reports it on headers, and copies the rest of the
// stream to the stdout collector.
func (p *remoteProc) readStdout(r io.Reader, headers chan<- header) {
	marker := []byte(p.e.marker + " ")
	buf := make([]byte, 32<<10)
	var pre []byte
	for {
		n, err := r.Read(buf)
		pre = append(pre, buf[:n]...)
		if i := bytes.Index(pre, marker); i >= 0 {
			if nl := bytes.IndexByte(pre[i:], '\n'); nl >= 0 {
				line := string(pre[i+len(marker) : i+nl])
				rest := pre[i+nl+1:]
				if pid, ok := strings.CutPrefix(line, "ok "); ok {
					if n, perr := strconv.Atoi(pid); perr == nil && n > 1 {
						headers <- header{pgid: n}
						p.stdout.Write(rest)
						copyTo(p.stdout, r, buf)
						return
					}
				}
				reason, _ := strings.CutPrefix(line, "err ")
				headers <- header{reason: reason}
				copyTo(io.Discard, r, buf)
				return
			}
		}
		if len(pre) > maxNoise {
			headers <- header{reason: fmt.Sprintf("the remote login shell wrote more than %d bytes before the command started", maxNoise)}
			copyTo(io.Discard, r, buf)
			return
		}
		if err != nil {
			headers <- header{err: err}
			return
		}
	}
}

// readStderr drops what the login shell wrote before the launcher's control line (keeping it to
// explain a failed start) and copies the rest of the stream to the stderr collector.
func (p *remoteProc) readStderr(r io.Reader) {
	marker := []byte(p.e.marker + "\n")
	buf := make([]byte, 32<<10)
	var pre []byte
	for {
		n, err := r.Read(buf)
		pre = append(pre, buf[:n]...)
		if i := bytes.Index(pre, marker); i >= 0 {
			p.stderr.Write(pre[i+len(marker):])
			copyTo(p.stderr, r, buf)
			return
		}
		if err != nil || len(pre) > maxNoise {
			p.mu.Lock()
			p.noise = pre[:min(len(pre), 4<<10)]
			p.mu.Unlock()
			copyTo(io.Discard, r, buf)
			return
		}
	}
}

func copyTo(w io.Writer, r io.Reader, buf []byte) {
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// terminate starts stopping the command: SIGTERM to its process group, SIGKILL after the grace
// period, or SIGKILL at once when force is set. A command whose session has not run it yet is not
// started at all when cancelPending is set; otherwise it is stopped as soon as it has started, so
// that it ends as a started command does. It returns at once; calling it again only escalates to
// force.
func (p *remoteProc) terminate(force, cancelPending bool) {
	p.mu.Lock()
	if force {
		p.forced = true
	}
	if h := p.stop; h != nil {
		p.mu.Unlock()
		if force {
			h.forceKill()
		}
		return
	}
	if p.stopping {
		p.mu.Unlock()
		return
	}
	p.stopping = true
	switch {
	case !p.execSent && cancelPending:
		p.mu.Unlock()
		p.cancel(errNotStarted)
		return
	case p.pgid == 0:
		// The start is under way: run() starts the stop once it learns the process group.
	default:
		p.stop = p.e.stopGroups([]target{{pgid: p.pgid, tag: p.tag}}, tagsPattern([]string{p.tag}), p.forced)
	}
	p.mu.Unlock()
}

// adopt puts p under h, the executor's final stop, when p has no stop of its own yet: it returns
// p's process group to include in h, or 0 when p is not started yet or is stopped already.
func (p *remoteProc) adopt(h *stopHandle) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil || p.pgid == 0 {
		if p.stop == nil {
			p.stopping = true
			if !p.execSent {
				p.cancel(errNotStarted)
			}
		}
		return 0
	}
	p.stopping = true
	p.stop = h
	return p.pgid
}

// outcome is how a command ended, once its session has settled.
type outcome struct {
	exit       exitFacts
	failure    error // why it did not start or did not finish; nil when it ran to its end
	notStarted bool  // failure came before the command could have run
	lost       bool  // failure is a lost connection
}

// result waits until p has settled and returns its outcome.
func (p *remoteProc) result() outcome {
	<-p.settled
	p.mu.Lock()
	defer p.mu.Unlock()
	return outcome{exit: p.exit, failure: p.failure, notStarted: p.notStarted, lost: p.lost}
}

// group returns the process group, or 0 when it never became known.
func (p *remoteProc) group() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pgid
}

// wasSent reports whether the command may have run on the remote host.
func (p *remoteProc) wasSent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.execSent
}
