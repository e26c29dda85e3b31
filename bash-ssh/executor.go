// Package bashssh is the remote backend of the executor seam: every command runs as bash -c on a
// remote host reached over SSH, in its own process group there, bounded in time and in memory,
// with the same defaults, caps and results as the local backend, and nothing it starts outlives the
// executor.
//
// Create one with New and use it through bash.Executor. Host keys are always verified against
// known_hosts; authentication is by key files or an SSH agent. See the module README for the full
// contract and where it differs from the local backend.
package bashssh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/backend"
	"github.com/dsh-go/dsh/internal/envpolicy"
)

// errTimeout is the cause recorded when a foreground run's own deadline fires; errStartTimeout when
// the command could not even be handed to the server in time.
var (
	errTimeout      = errors.New("bash timeout")
	errStartTimeout = errors.New("start timeout")
)

// Executor is the SSH implementation of bash.Executor. Create it with New; its methods are safe for
// concurrent use. Close it when done: it owns connections, remote processes, goroutines and a local
// spill directory.
//
//catalog:service bash/ssh-executor
type Executor struct {
	cfg    Config
	host   string // user@host:port, for messages
	dialer *dialer
	pool   *pool
	tag    string // prefix of the tag every command carries
	marker string // starts the launcher's control lines
	scrub  envpolicy.Rules
	spills backend.SpillDir
	listen backend.Listeners
	wg     sync.WaitGroup // every goroutine the executor starts

	// createSpill opens a spill file; tests replace it to simulate a full disk.
	createSpill func(stream string) (*os.File, error)

	ctx        context.Context // cancelled when Close begins: no new start
	cancel     context.CancelCauseFunc
	stopCtx    context.Context // cancelled when Close ends: no more control sessions
	stopCancel context.CancelFunc
	reapNow    chan struct{}
	reaperDone chan struct{}
	reaps      atomic.Uint64 // reaper rounds, for tests

	tasks backend.TaskTable // background tasks; added under mu so that Close never misses one

	mu         sync.Mutex
	closed     bool
	seq        uint64
	ran        bool                     // a command ever started on the remote side
	firstStart string                   // the earliest start time a launcher reported, in clock ticks since boot
	live       map[*remoteProc]struct{} // commands not yet settled
	watch      map[int]target           // process groups of settled commands that may have members
	orphans    []target                 // commands whose connection was lost while they ran

	closeOnce sync.Once
	closeErr  error
}

var _ bash.Executor = (*Executor)(nil)

// New returns an executor for cfg, or an error naming the first invalid field of cfg, an identity
// file that cannot be read or a known_hosts file that cannot be parsed. It does not connect: the
// first command does (Connect checks the connection eagerly).
func New(cfg Config) (*Executor, error) {
	cfg, scrub, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	d, err := newDialer(cfg)
	if err != nil {
		return nil, err
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("bashssh: %w", err)
	}
	e := &Executor{
		cfg:        cfg,
		host:       cfg.User + "@" + net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)),
		dialer:     d,
		tag:        hex.EncodeToString(rnd[:6]),
		marker:     "dsh-bash-ssh-" + hex.EncodeToString(rnd[6:]),
		live:       make(map[*remoteProc]struct{}),
		watch:      make(map[int]target),
		reapNow:    make(chan struct{}, 1),
		reaperDone: make(chan struct{}),
		scrub:      scrub.Rules(),
	}
	e.spills.Parent = cfg.SpillDir
	e.createSpill = e.spills.Create
	e.listen.Logger = cfg.Logger
	e.ctx, e.cancel = context.WithCancelCause(context.Background())
	e.stopCtx, e.stopCancel = context.WithCancel(context.Background())
	e.pool = newPool(cfg.MaxSessions, cfg.MaxConnections, cfg.KeepaliveInterval, d.dial, e.wakeReaper, &e.wg)
	go e.reap()
	return e, nil
}

// Host returns "user@host:port", the destination this executor runs commands on.
func (e *Executor) Host() string { return e.host }

// Connect makes sure a connection to the host is up, dialling one when none is, and returns the
// error that dialling gave (a *ConnectError naming the host and the cause: unreachable, host key
// refused, authentication refused). Commands connect by themselves; Connect is for checking a
// configuration early. It returns bash.ErrClosed after Close.
func (e *Executor) Connect(ctx context.Context) error {
	c, err := e.pool.acquire(ctx, true)
	var ce *ConnectError
	switch {
	case err == nil:
	case errors.Is(err, errPoolClosed):
		return bash.ErrClosed
	case errors.As(err, &ce):
		return err
	default:
		return fmt.Errorf("bashssh: connect %s: %w", e.host, err)
	}
	e.pool.release(c)
	return nil
}

// Resolve implements bash.Executor.Resolve: it returns req with this executor's defaults and
// caps applied, or an error naming the invalid field of req. Nothing is sent to the host.
func (e *Executor) Resolve(req bash.Request) (bash.Request, error) {
	if req.Sandbox.Enabled() {
		// Landlock and seccomp would have to be applied on the remote host, by a program there:
		// this backend only has sshd's shell. It refuses rather than run the command unconfined.
		return bash.Request{}, fmt.Errorf("bashssh: %w: the SSH backend cannot confine a command on the remote host; only sandbox off is supported, got %s",
			bash.ErrSandboxUnavailable, req.Sandbox.Mode)
	}
	spec, err := backend.Resolve(req, e.cfg.Limits, e.cfg.Workdir)
	if err != nil {
		return bash.Request{}, fmt.Errorf("bashssh: %w", err)
	}
	return spec, nil
}

// openSpill creates a local spill file whose write errors are logged with the host they came from:
// the collector then abandons the file, and the log says why the full output is unavailable.
func (e *Executor) openSpill(stream string) (backend.SpillFile, error) {
	f, err := e.createSpill(stream)
	if err != nil {
		e.cfg.Logger.Warn("bashssh: cannot create a local spill file; the full output of the command is not kept (head and tail are)",
			"host", e.host, "stream", stream, "err", err)
		return nil, err
	}
	return &spillFile{File: f, e: e, stream: stream}, nil
}

// spillFile is a local spill file that reports its first failure.
type spillFile struct {
	*os.File
	e      *Executor
	stream string
	once   sync.Once
}

func (f *spillFile) report(op string, err error) {
	f.once.Do(func() {
		f.e.cfg.Logger.Warn("bashssh: local spill file failed; the full output of the command is not kept (head and tail are)",
			"host", f.e.host, "stream", f.stream, "file", f.Name(), "op", op, "err", err)
	})
}

// Write writes p, reporting a failure (a full disk) once.
func (f *spillFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err != nil {
		f.report("write", err)
	}
	return n, err
}

// Close closes the file, reporting a failure once.
func (f *spillFile) Close() error {
	err := f.File.Close()
	if err != nil {
		f.report("close", err)
	}
	return err
}

// prepare builds the command line for spec and registers its process as live. It returns
// bash.ErrClosed after Close, and an error naming what cannot be sent (a NUL byte, a variable name,
// a command too long).
func (e *Executor) prepare(spec bash.Request, streams backend.Streams) (*remoteProc, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, bash.ErrClosed
	}
	e.seq++
	tag := e.tag + "-" + strconv.FormatUint(e.seq, 10)
	e.mu.Unlock()
	env, err := envEntries(spec.Env, tag)
	if err != nil {
		return nil, fmt.Errorf("bashssh: %w", err)
	}
	line, err := launchArgs{
		marker:  e.marker,
		workdir: spec.Workdir,
		stdin:   spec.Stdin != nil,
		bash:    e.cfg.RemoteBash,
		scrub:   e.scrub,
		env:     env,
		command: spec.Command,
	}.build()
	if err != nil {
		return nil, fmt.Errorf("bashssh: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, bash.ErrClosed
	}
	p := e.launch(line, spec.Stdin, tag, streams.Stdout, streams.Stderr)
	e.live[p] = struct{}{}
	return p, nil
}

// retire forgets a settled process, whose outcome is out. Its process group is watched until it is
// seen empty (a command may leave processes behind); a command whose connection was lost becomes
// an orphan, stopped once the host is reachable again.
func (e *Executor) retire(p *remoteProc, out outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.live, p)
	if e.closed {
		return
	}
	switch {
	case out.lost:
		e.orphans = append(e.orphans, out.target)
	case out.target.pgid > 0:
		e.watch[out.target.pgid] = out.target
	}
}

// Run implements bash.Executor.Run for req, resolved, on the remote host, cancelled by ctx.
// Besides the errors of the contract, it returns a *ConnectError when the host cannot be reached,
// a *SpawnError when the remote side cannot start the command (a workdir that does not exist, no
// bash), and an error matching ErrConnectionLost when the connection broke while the command ran;
// the partial result is returned with it. The timeout runs from the moment the server has the
// command; connecting and waiting for a free session are bounded by the longer of the timeout and
// Config.DialTimeout.
func (e *Executor) Run(ctx context.Context, req bash.Request) (bash.RunResult, error) {
	spec, err := e.Resolve(req)
	if err != nil {
		return bash.RunResult{}, err
	}
	if ctx.Err() != nil {
		return bash.RunResult{}, fmt.Errorf("%w: %v", bash.ErrAbortedBeforeSpawn, context.Cause(ctx))
	}
	streams := backend.NewStreams(e.cfg.Limits, spec.StdoutMaxBytes, e.openSpill)
	p, err := e.prepare(spec, streams)
	if err != nil {
		return bash.RunResult{}, err
	}
	stopProgress := backend.WatchProgress(streams, 0, spec.Progress)
	defer stopProgress() // on every path, before Run returns: no report after it
	// The command's timeout runs from the moment the server has it. Connecting and waiting for a
	// free session are bounded apart: by the longer of the timeout and DialTimeout.
	var cause error
	startBound := time.NewTimer(max(spec.Timeout, e.cfg.DialTimeout))
	select {
	case <-p.sent:
	case <-startBound.C:
		cause = errStartTimeout
	case <-ctx.Done():
		cause = context.Cause(ctx)
	}
	startBound.Stop()
	timer := time.NewTimer(spec.Timeout)
	defer timer.Stop()
	if cause == nil {
		select {
		case <-p.exitedC:
		case <-timer.C:
			cause = errTimeout
		case <-ctx.Done():
			cause = context.Cause(ctx)
		}
	}
	if cause != nil {
		p.terminate(false, true)
	}
	out := p.result()
	stopProgress()
	exit, failure, notStarted := out.exit, out.failure, out.notStarted
	streams.Seal()
	e.retire(p, out)
	stdout, stderr := streams.Output()
	res := bash.RunResult{
		ExitCode: exit.code,
		Signal:   exit.signal,
		TimedOut: cause == errTimeout || cause == errStartTimeout,
		Aborted:  cause != nil && cause != errTimeout && cause != errStartTimeout,
		Timeout:  spec.Timeout,
		Stdout:   stdout,
		Stderr:   stderr,
	}
	switch {
	case failure == nil:
		return res, nil
	case notStarted && errors.Is(failure, errNotStarted) && cause == errStartTimeout:
		return bash.RunResult{}, fmt.Errorf("bashssh: %s: the command did not start within %v (connecting, or waiting for a free session)", e.host, max(spec.Timeout, e.cfg.DialTimeout))
	case notStarted && errors.Is(failure, errNotStarted) && cause != nil:
		return bash.RunResult{}, fmt.Errorf("%w: %v (while connecting to %s)", bash.ErrAbortedBeforeSpawn, cause, e.host)
	case notStarted && errors.Is(failure, errNotStarted):
		return bash.RunResult{}, bash.ErrClosed
	case notStarted:
		return bash.RunResult{}, failure
	}
	return res, failure
}

// Start implements bash.Executor.Start: it starts req, resolved, as a background task on the
// remote host and returns the task's handle, or an error for an invalid request or a closed
// executor. A task whose
// command cannot be started (host unreachable, host key or authentication refused, workdir
// missing, no bash) ends killed with "spawn failed: REASON" in its next read; a task whose
// connection breaks ends killed with "connection lost: …" there.
func (e *Executor) Start(req bash.Request) (*bash.Task, error) {
	spec, err := e.Resolve(req)
	if err != nil {
		return nil, err
	}
	streams := backend.NewStreams(e.cfg.Limits, e.cfg.MaxOutputBytes, e.openSpill)
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, bash.ErrClosed
	}
	t := e.tasks.Add(spec.Command, spec.Owner, streams.Stdout, streams.Stderr)
	e.mu.Unlock()

	p, err := e.prepare(spec, streams)
	if err != nil {
		t.FailSpawn(err, e.listen.Notify, &e.wg)
		return t.Task, nil
	}
	t.SetStop(p.stopAndWait)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		out := p.result()
		exit, failure, notStarted, lost := out.exit, out.failure, out.notStarted, out.lost
		streams.Seal()
		e.retire(p, out)
		if failure != nil && !errors.Is(failure, errNotStarted) {
			note := "spawn failed: " + failure.Error()
			if lost && !notStarted {
				note = "connection lost: " + failure.Error()
			}
			t.SetNote(note)
		}
		if failure != nil {
			t.Control.MarkKilled()
			t.Control.Settle(nil, "", e.listen.Notify)
			return
		}
		t.Control.Settle(exit.code, exit.signal, e.listen.Notify)
	}()
	return t.Task, nil
}

// Get implements bash.Executor.Get: it returns the handle of task id with true, or nil and false
// for an id this executor never issued.
func (e *Executor) Get(id bash.TaskID) (*bash.Task, bool) { return e.tasks.Get(id) }

// List implements bash.Executor.List: it returns every task started so far, in start order.
func (e *Executor) List() []*bash.Task { return e.tasks.List() }

// OwnerOf implements bash.Executor.OwnerOf: it returns the owner token recorded for task id with
// true, or false for an unknown or ownerless task.
func (e *Executor) OwnerOf(id bash.TaskID) (bash.OwnerToken, bool) { return e.tasks.OwnerOf(id) }

// ReadOutput implements bash.Executor.ReadOutput: it returns the output task id wrote since the
// previous read, or an error matching bash.ErrUnknownTask.
func (e *Executor) ReadOutput(id bash.TaskID) (bash.TaskRead, error) { return e.tasks.Read(id) }

// Unread implements bash.UnreadCounter: it returns how many bytes task id wrote that no read has
// delivered yet, or an error matching bash.ErrUnknownTask.
func (e *Executor) Unread(id bash.TaskID) (int64, error) { return e.tasks.Unread(id) }

// Kill implements bash.Executor.Kill: it stops task id and returns true when it was running, or
// an error matching bash.ErrUnknownTask.
func (e *Executor) Kill(id bash.TaskID) (bool, error) { return e.tasks.Kill(id) }

// OnTaskDone implements bash.Executor.OnTaskDone: it registers listener for every task that ends
// and returns the function that unregisters it.
func (e *Executor) OnTaskDone(listener bash.TaskListener) func() {
	return e.listen.Add(listener)
}

// Close implements bash.Executor.Close: it stops every command still running and every process a
// finished command left behind (on a Linux remote also those that left their process group but
// carry the executor's tag) and every command whose connection was lost earlier, waits until the
// host reports them gone, then closes the connections. ctx bounds the grace period: once it is
// done, SIGKILL goes out at once and Close returns ctx's error. It also returns an error naming the
// host when the remote processes could not be reached or did not all end, and, for a non-root
// remote user, one naming every process of that user started since the first command whose
// environment it could not read (a non-dumpable process, such as ssh-agent): those are left
// running, since whether they are this executor's cannot be told.
func (e *Executor) Close(ctx context.Context) error {
	// sync.Once makes a second call wait for the first: no extra channel is needed.
	e.closeOnce.Do(func() { e.closeErr = e.close(ctx) })
	return e.closeErr
}

// closePoll bounds the interval at which close checks whether everything it stopped has ended.
const closePoll = 5 * time.Millisecond

// close stops everything and waits for it in one poll loop, as net/http's Server.Shutdown does:
// when ctx is done it forces SIGKILL, and when the host has not reported back hardStop after that,
// it cuts the connections, which ends every session and so every wait.
func (e *Executor) close(ctx context.Context) error {
	e.listen.Close()
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel(bash.ErrClosed)
	<-e.reaperDone

	e.mu.Lock()
	tasks := e.tasks.Clear()
	live := make([]*remoteProc, 0, len(e.live))
	for p := range e.live {
		live = append(live, p)
	}
	var targets []target
	for _, t := range e.watch {
		targets = append(targets, t)
	}
	targets = append(targets, e.orphans...)
	ran, since := e.ran, e.firstStart
	e.watch, e.orphans = map[int]target{}, nil
	e.mu.Unlock()

	batch := newStopHandle(false)
	for _, p := range live {
		if t := p.adopt(batch); t.pgid > 0 {
			targets = append(targets, t)
		}
	}
	if ran || len(targets) > 0 {
		e.startStop(batch, targets, ownPattern(e.tag), since, false)
	} else {
		close(batch.done)
	}

	// pending reports whether something close waits for has not ended yet.
	pending := func() bool {
		if !isClosed(batch.done) {
			return true
		}
		for _, p := range live {
			if !isClosed(p.settledC) {
				return true
			}
			if h := p.stopping(); h != nil && !isClosed(h.done) {
				return true
			}
		}
		for _, t := range tasks {
			if !isClosed(t.Task.Done()) {
				return true
			}
		}
		return false
	}
	var err error
	done := ctx.Done()
	var hardAt time.Time // when the connections are cut, once SIGKILL went out
	interval := time.Millisecond
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for pending() {
		if !hardAt.IsZero() && time.Now().After(hardAt) {
			// After SIGKILL the remote side had a bounded time to report back: a host that
			// stopped answering must not hang Close.
			e.stopCancel()
			e.pool.close()
			hardAt = time.Time{}
		}
		select {
		case <-done:
			done = nil
			err = fmt.Errorf("bashssh: close: %w", context.Cause(ctx))
			batch.forceKill()
			for _, p := range live {
				p.terminate(true, true)
			}
			hardAt = time.Now().Add(e.cfg.DialTimeout + 5*time.Second)
		case <-timer.C:
			interval = min(2*interval, closePoll)
			timer.Reset(interval)
		}
	}
	if berr := batch.error(); berr != nil && err == nil {
		err = fmt.Errorf("bashssh: close: remote processes may be left on %s: %w", e.host, berr)
	}
	e.stopCancel()
	e.pool.close()
	e.wg.Wait()
	if !e.cfg.KeepSpills {
		if rmErr := e.spills.Remove(); rmErr != nil {
			e.cfg.Logger.Warn("bashssh: close", slog.Any("err", rmErr))
		}
	}
	return err
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
