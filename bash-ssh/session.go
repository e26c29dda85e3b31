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
	if len(line) > maxReason {
		line = strings.ToValidUTF8(line[:maxReason/2], "") + fmt.Sprintf(" [… %d bytes …] ", len(line)-maxReason) + strings.ToValidUTF8(line[len(line)-maxReason/2:], "")
	}
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

// maxNoise bounds what a login shell may print before the launcher's control lines; maxControl
// bounds a control line itself, which may quote the workdir (up to a whole command line) twice.
const (
	maxNoise   = 64 << 10
	maxControl = 2*maxCommandLine + 4<<10
)

// maxReason bounds the message of a failed start that the remote side reported (a workdir error
// quotes the path, which may be long).
const maxReason = 4 << 10

// exitFacts is how the command's shell ended, as the server reported it.
type exitFacts struct {
	code   *int
	signal string
}

// known reports whether the server reported the exit.
func (f exitFacts) known() bool { return f.code != nil || f.signal != "" }

// header is what the launcher's first stdout line said.
type header struct {
	pgid   int
	start  string // the leader's start time, in clock ticks since boot ("" when unknown)
	reason string // "err" line: why the command was not started
	err    error  // the stream ended (or failed) before a control line
}

// phase is how far a command has come. It only moves forward, and each step closes the channels
// of the steps it passes, so that every channel is closed exactly once.
type phase int

const (
	connecting phase = iota // waiting for a session; a stop may still cancel the start
	launched                // the command was handed to the server (or the start failed before)
	exited                  // the exit facts are known, or the session ended without them
	settled                 // output collection has ended: the outcome is final
)

// stopLevel is what a stop of the command asked for so far.
type stopLevel int

const (
	noStop   stopLevel = iota
	termStop           // SIGTERM, SIGKILL after the grace period
	killStop           // SIGKILL at once
)

// failKind says where a command's failure came from.
type failKind int

const (
	failNone       failKind = iota
	failNotStarted          // before the command could have run
	failLost                // the connection broke while it ran
	failEnded               // the session ended without an exit status
)

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

	// Closed as the phase reaches launched, exited and settled.
	sent, exitedC, settledC chan struct{}

	mu        sync.Mutex
	phase     phase
	pgid      int    // the command's process group, 0 until the launcher reports it
	start     string // the start time of the group's leader, "" when unknown
	exit      exitFacts
	failure   error // why the command did not start, or did not finish; the first reason wins
	kind      failKind
	stopAsked stopLevel
	stop      *stopHandle
	dialGrace *time.Timer // cancels a start still connecting after a stop
	noise     []byte      // what stderr carried before the launcher's control line
}

// launch starts line in a new session and returns at once; the returned process reports its
// progress through its channels. The start is bounded by the executor's lifetime.
func (e *Executor) launch(line string, stdin []byte, tag string, stdout, stderr *backend.Collector) *remoteProc {
	ctx, cancel := context.WithCancelCause(e.ctx)
	p := &remoteProc{
		e: e, tag: tag, line: line, stdin: stdin, stdout: stdout, stderr: stderr,
		ctx: ctx, cancel: cancel,
		sent: make(chan struct{}), exitedC: make(chan struct{}), settledC: make(chan struct{}),
	}
	e.wg.Add(1)
	go p.run()
	return p
}

// advanceLocked moves p to phase to (never back) and closes the channels of the phases it passes.
// Call with mu held.
func (p *remoteProc) advanceLocked(to phase) {
	for p.phase < to {
		p.phase++
		switch p.phase {
		case launched:
			close(p.sent)
		case exited:
			close(p.exitedC)
		case settled:
			close(p.settledC)
		}
	}
}

func (p *remoteProc) advance(to phase) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceLocked(to)
}

// fail records why the command did not start or did not finish; the first reason wins.
func (p *remoteProc) fail(err error, kind failKind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failure == nil {
		p.failure, p.kind = err, kind
	}
}

// run opens the command's session, then awaits its end.
func (p *remoteProc) run() {
	defer p.e.wg.Done()
	defer p.advance(settled)
	defer p.cancel(nil)
	if c, ch, reqs := p.open(); ch != nil {
		p.await(c, ch, reqs)
	}
}

// open opens the session the command runs in and moves p to launched. It returns a nil channel
// when the start failed or was cancelled, with the failure recorded and p settled but for its
// closing.
func (p *remoteProc) open() (*conn, ssh.Channel, <-chan *ssh.Request) {
	c, ch, reqs, err := p.e.openSession(p.ctx, false)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dialGrace != nil {
		p.dialGrace.Stop()
	}
	if err == nil && p.ctx.Err() == nil {
		p.advanceLocked(launched)
		return c, ch, reqs
	}
	if p.ctx.Err() != nil {
		err = fmt.Errorf("%w: %w", errNotStarted, context.Cause(p.ctx))
	}
	if p.failure == nil {
		p.failure, p.kind = err, failNotStarted
	}
	if ch != nil {
		ch.Close()
		p.e.wg.Add(1)
		go p.handleRequests(c, reqs)
	}
	p.advanceLocked(exited)
	return nil, nil, nil
}

// await sends the command, starts its readers, learns its process group from the launcher's control
// line, and waits for the session's end and the readers' (at most the grace period after it).
func (p *remoteProc) await(c *conn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	headers := make(chan header, 1)
	readersDone := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(2)
	p.e.wg.Add(4)
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
	go func() {
		defer p.e.wg.Done()
		readers.Wait()
		close(readersDone)
	}()
	defer ch.Close()

	ok, err := ch.SendRequest("exec", true, ssh.Marshal(struct{ Command string }{p.line}))
	switch {
	case err != nil:
		p.fail(p.e.lostError(c, err), failLost)
	case !ok:
		p.fail(&SpawnError{Host: p.e.host, Reason: "the server refused to run a command (exec request denied)"}, failNotStarted)
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

	switch h := <-headers; {
	case h.pgid > 0:
		p.started(h)
	case h.reason != "":
		p.fail(p.e.launchFailure(h.reason), failNotStarted)
	default:
		// No control line: the login shell could not run the launcher (no bash), or the session
		// broke. Wait for the session's end to tell which, and for stderr to explain it.
		<-p.exitedC
		wait(readersDone, p.e.cfg.Grace)
		p.fail(p.noStart(h.err), failNotStarted)
	}
	<-p.exitedC
	wait(readersDone, p.e.cfg.Grace)
}

// started records the process group the launcher reported, and starts the stop a caller asked for
// while the command was starting.
func (p *remoteProc) started(h header) {
	p.e.mu.Lock()
	p.e.ran = true
	if h.start != "" && (p.e.firstStart == "" || startBefore(h.start, p.e.firstStart)) {
		p.e.firstStart = h.start
	}
	p.e.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pgid, p.start = h.pgid, h.start
	if p.stopAsked != noStop && p.stop == nil {
		p.stop = p.e.stopGroups([]target{p.targetLocked()}, tagsPattern([]string{p.tag}), p.stopAsked == killStop)
	}
}

// targetLocked returns the command's process group as a stop target. Call with mu held.
func (p *remoteProc) targetLocked() target {
	return target{pgid: p.pgid, start: p.start, tag: p.tag}
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
	p.e.pool.release(c)
	p.mu.Lock()
	got := p.exit.known()
	p.mu.Unlock()
	if !got {
		if !c.alive() {
			p.fail(p.e.lostError(c, nil), failLost)
		} else {
			p.fail(&SpawnError{Host: p.e.host, Reason: "the session ended without an exit status"}, failEnded)
		}
	}
	p.advance(exited)
}

// setExit records the exit facts the server reported; the first report wins.
func (p *remoteProc) setExit(f exitFacts) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.exit.known() {
		p.exit = f
	}
	p.advanceLocked(exited)
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
		i := bytes.Index(pre, marker)
		if i >= 0 {
			if nl := bytes.IndexByte(pre[i:], '\n'); nl >= 0 {
				line := string(pre[i+len(marker) : i+nl])
				rest := pre[i+nl+1:]
				if fields, ok := strings.CutPrefix(line, "ok "); ok {
					pid, start, _ := strings.Cut(fields, " ")
					if n, perr := strconv.Atoi(pid); perr == nil && n > 1 && validStart(start) {
						headers <- header{pgid: n, start: start}
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
		if i < 0 && len(pre) > maxNoise || i >= 0 && len(pre)-i > maxControl {
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

// startGrace is the least time a command that is still connecting when a caller stops it is given
// to start (so that it ends as a started command does) before its start is cancelled.
const startGrace = time.Second

// terminate starts stopping the command: SIGTERM to its process group, SIGKILL after the grace
// period, or SIGKILL at once when force is set. A command whose session has not run it yet is not
// started at all when cancelPending is set; otherwise it is stopped as soon as it has started, so
// that it ends as a started command does, and its start is cancelled when it has not come within
// the longer of the grace period and startGrace. It returns at once; calling it again only
// escalates to force.
func (p *remoteProc) terminate(force, cancelPending bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	level := termStop
	if force {
		level = killStop
	}
	if h := p.stop; h != nil {
		if force {
			h.forceKill()
		}
		return
	}
	first := p.stopAsked == noStop
	p.stopAsked = max(p.stopAsked, level)
	switch {
	case p.phase == connecting && (cancelPending || force):
		p.cancel(errNotStarted)
	case p.phase == connecting && first:
		p.dialGrace = time.AfterFunc(max(p.e.cfg.Grace, startGrace), func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.phase == connecting {
				p.cancel(errNotStarted)
			}
		})
	case p.pgid != 0:
		p.stop = p.e.stopGroups([]target{p.targetLocked()}, tagsPattern([]string{p.tag}), force)
	}
	// Otherwise the start is under way: started() starts the stop once it learns the process group.
}

// stopAndWait is terminate that waits: it returns once the stop of p's process group and tagged
// escapees has finished on the remote side (the controller saw them gone, SIGKILL after the grace
// period included), or once p has settled when it never had a process group to stop.
func (p *remoteProc) stopAndWait() {
	p.terminate(false, false)
	if p.stopping() == nil {
		<-p.settledC // a start under way: started() begins the stop when the group is known
	}
	if h := p.stopping(); h != nil {
		<-h.done
	}
}

// adopt puts p under h, the executor's final stop, when p has no stop of its own yet: it returns
// p's process group to include in h, or 0 when p is not started yet or is stopped already.
func (p *remoteProc) adopt(h *stopHandle) target {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		return target{}
	}
	p.stopAsked = max(p.stopAsked, termStop)
	if p.pgid == 0 {
		if p.phase == connecting {
			p.cancel(errNotStarted)
		}
		return target{}
	}
	p.stop = h
	return p.targetLocked()
}

// outcome is how a command ended, once its session has settled.
type outcome struct {
	exit       exitFacts
	failure    error  // why it did not start or did not finish; nil when it ran to its end
	notStarted bool   // failure came before the command could have run
	lost       bool   // failure is a lost connection
	target     target // the process group, pgid 0 when it never became known
}

// result waits until p has settled and returns its outcome.
func (p *remoteProc) result() outcome {
	<-p.settledC
	p.mu.Lock()
	defer p.mu.Unlock()
	return outcome{exit: p.exit, failure: p.failure, notStarted: p.kind == failNotStarted, lost: p.kind == failLost,
		target: p.targetLocked()}
}

// stopHandle returns the stop under way for p, or nil.
func (p *remoteProc) stopping() *stopHandle {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stop
}

// validStart reports whether s is a start time as the launcher reports it: decimal digits, or
// empty when the host has no /proc.
func validStart(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) <= 20
}

// startBefore reports whether start time a (decimal clock ticks) is earlier than b.
func startBefore(a, b string) bool {
	return len(a) < len(b) || len(a) == len(b) && a < b
}
