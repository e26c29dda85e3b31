// Package bashlocal is the local backend of the executor seam: every command runs as bash -c in a
// new session and process group on this machine, bounded in time and in memory, with a scrubbed
// environment, and nothing it starts outlives the executor.
//
// Create one with New and use it through bash.Executor. See the module README for the full
// contract and the choices behind it.
package bashlocal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-local/internal/proc"
	"github.com/dsh-go/dsh/bash/backend"
	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/proclimit"
	"github.com/dsh-go/dsh/internal/proctree"
	"github.com/dsh-go/dsh/internal/sandbox"
)

// errTimeout is the cause recorded when a foreground run's own deadline fires.
var errTimeout = errors.New("bash timeout")

// errProcessLimit is the cause recorded when a tree is stopped for holding the process limit.
var errProcessLimit = errors.New("process limit reached")

// limitPoll is how often the executor checks whether its user's tasks are at the commands'
// process limit while any command runs.
const limitPoll = 250 * time.Millisecond

// Executor is the local implementation of bash.Executor. Create it with New; its methods are safe
// for concurrent use. Close it when done: it owns processes, goroutines and a spill directory.
//
//catalog:service bash/local-executor
type Executor struct {
	cfg      Config
	scrub    envpolicy.Policy
	bashPath string
	bashErr  error
	tag      string             // per-executor prefix of the tree tag every command carries
	release  func() (last bool) // ends the executor's proctree.Hold; last: Close may sweep orphans
	spills   backend.SpillDir
	tmp      backend.SpillDir // the sandbox's private TMPDIR, created on the first confined call
	sb       *sandbox.Sandbox
	wg       sync.WaitGroup // every goroutine the executor starts
	listen   backend.Listeners

	// spawnMu is held shared while a process is being started and exclusively by Close while it
	// sets closed, so that Close never misses a process that is being born.
	spawnMu sync.RWMutex

	tasks backend.TaskTable // background tasks; added under mu so that Close never misses one

	nproc    int           // the RLIMIT_NPROC of every command (proclimit.Cap)
	uid      int           // the real user whose tasks the limit counts
	stopPoll chan struct{} // closed by Close: the process-limit watch ends

	mu     sync.Mutex // guards what follows
	closed bool
	seq    uint64
	// live holds the processes that may still have a live tree, each with a channel closed when
	// the tree is stopped for holding the process limit.
	live map[*proc.Process]chan struct{}

	closeOnce sync.Once
	closeErr  error
}

var (
	_ bash.Executor      = (*Executor)(nil)
	_ bash.UnreadCounter = (*Executor)(nil)
	_ bash.Interactive   = (*Executor)(nil)
)

// New returns an executor for cfg, or an error naming the first invalid field of cfg. It looks up
// bash once; a missing bash is reported by each Run and Start rather than by New.
func New(cfg Config) (*Executor, error) {
	cfg, scrub, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// An escapee whose parent dies is re-parented here rather than to init: Close finds it by
	// that even when it hides its tag (proctree.Tree.Orphans).
	proctree.CloseOnExecInherited() // a command gets its streams, never what dsh's parent left open
	if err := proctree.BecomeSubreaper(); err != nil {
		return nil, fmt.Errorf("bashlocal: become the child subreaper of the commands: %w", err)
	}
	nproc, err := proclimit.Cap(cfg.MaxProcesses)
	if err != nil {
		return nil, fmt.Errorf("bashlocal: %w", err)
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("bashlocal: %w", err)
	}
	e := &Executor{
		cfg:   cfg,
		scrub: scrub,
		tag:   strconv.Itoa(os.Getpid()) + "." + hex.EncodeToString(rnd[:]),
		live:  make(map[*proc.Process]chan struct{}),
		nproc: nproc, uid: os.Getuid(), stopPoll: make(chan struct{}),
		release: proctree.Hold(),
	}
	e.spills.Parent = cfg.SpillDir
	e.tmp.Prefix = "dsh-tmp-"
	e.sb = sandbox.New(sandbox.Options{ABI: cfg.landlockABI})
	e.listen.Logger = cfg.Logger
	e.bashPath = cfg.BashPath
	if e.bashPath == "" {
		e.bashPath, e.bashErr = exec.LookPath("bash")
	}
	e.wg.Go(e.watchLimit)
	return e, nil
}

// Resolve implements bash.Executor.Resolve: it returns req with this executor's defaults and
// caps applied (an empty Workdir becomes the configured one, or the process's), or an error naming
// the invalid field of req.
func (e *Executor) Resolve(req bash.Request) (bash.Request, error) {
	workdir := e.cfg.Workdir
	if workdir == "" && req.Workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return bash.Request{}, fmt.Errorf("bashlocal: working directory: %w", err)
		}
		workdir = wd
	}
	if req.Sandbox.Mode == "" {
		req.Sandbox = e.cfg.Sandbox
	}
	return backend.Resolve(req, e.cfg.Limits, workdir)
}

// createSpill opens a spill file for stream in the private spill directory.
func (e *Executor) createSpill(stream string) (backend.SpillFile, error) {
	return e.spills.Create(stream)
}

// spawn starts spec's command writing to streams, confined by conf when it is not nil, and
// registers the process as live. The channel it returns is closed when the tree is stopped for
// holding the process limit.
func (e *Executor) spawn(spec bash.Request, conf *confinement, streams backend.Streams) (*proc.Process, <-chan struct{}, error) {
	if e.bashErr != nil {
		return nil, nil, fmt.Errorf("spawn bash: %w", e.bashErr)
	}
	e.spawnMu.RLock()
	defer e.spawnMu.RUnlock()
	e.mu.Lock()
	closed := e.closed
	e.seq++
	tag := e.tag + "-" + strconv.FormatUint(e.seq, 10)
	e.mu.Unlock()
	if closed {
		return nil, nil, bash.ErrClosed
	}
	opts := proc.Options{
		Path:         e.bashPath,
		Args:         []string{"bash", "-c", spec.Command},
		Dir:          spec.Workdir,
		Env:          e.scrub.Environ(os.Environ(), conf.environ(spec.Env)),
		Stdin:        spec.Stdin,
		OpenStdin:    spec.OpenStdin,
		TTY:          ttySize(spec.TTY),
		Stdout:       streams.Stdout,
		Stderr:       streams.Stderr,
		Grace:        e.cfg.Grace,
		Tag:          tag,
		ProcessLimit: e.nproc,
	}
	if conf != nil {
		opts.Confine = conf.prepared.Start
	}
	p, err := proc.Start(opts, &e.wg)
	if err != nil {
		return nil, nil, fmt.Errorf("spawn bash in %q: %w", spec.Workdir, err)
	}
	limited := make(chan struct{})
	e.mu.Lock()
	e.live[p] = limited
	e.mu.Unlock()
	return p, limited, nil
}

// retire forgets a settled process whose group is empty; one that left survivors in its group
// stays live so that Close stops them. Survivors that left the group are found by Close's sweep.
func (e *Executor) retire(p *proc.Process) {
	if p.GroupAlive() {
		return
	}
	e.mu.Lock()
	delete(e.live, p)
	e.mu.Unlock()
}

// Run implements bash.Executor.Run: it runs req, resolved, in the foreground until it exits, its
// timeout passes or ctx is done, and returns the RunResult, or an error when nothing could be
// started.
func (e *Executor) Run(ctx context.Context, req bash.Request) (bash.RunResult, error) {
	spec, err := e.Resolve(req)
	if err != nil {
		return bash.RunResult{}, err
	}
	if ctx.Err() != nil {
		return bash.RunResult{}, fmt.Errorf("%w: %v", bash.ErrAbortedBeforeSpawn, context.Cause(ctx))
	}
	spec.TTY, spec.OpenStdin = nil, false // background tasks only
	conf, err := e.confine(spec)
	if err != nil {
		return bash.RunResult{}, err
	}
	streams := backend.NewStreams(e.cfg.Limits, spec.StdoutMaxBytes, e.createSpill)
	p, limited, err := e.spawn(spec, conf, streams)
	if err != nil {
		return bash.RunResult{}, err
	}
	stopProgress := backend.WatchProgress(streams, 0, spec.Progress)
	defer stopProgress() // on every path, before Run returns: no report after it
	timer := time.NewTimer(spec.Timeout)
	defer timer.Stop()
	var cause error
	select {
	case <-p.Exited():
	case <-timer.C:
		cause = errTimeout
	case <-ctx.Done():
		cause = context.Cause(ctx)
	case <-limited:
		cause = errProcessLimit
	}
	if cause != nil {
		p.Terminate()
	}
	<-p.Settled()
	if e.settleLimit(p, limited) && cause == nil {
		cause = errProcessLimit
	}
	stopProgress()
	streams.Seal()
	e.retire(p)
	exit := p.Exit()
	stdout, stderr := streams.Output()
	return bash.RunResult{
		ExitCode:     exit.Code,
		Signal:       exit.Signal,
		TimedOut:     cause == errTimeout,
		Aborted:      cause != nil && cause != errTimeout && cause != errProcessLimit,
		ProcessLimit: cause == errProcessLimit,
		Timeout:      spec.Timeout,
		Stdout:       stdout,
		Stderr:       stderr,
		Sandbox:      conf.report(cause == nil && failed(exit), stderr.Text()),
	}, nil
}

// Start implements bash.Executor.Start: it starts req, resolved, as a background task and returns
// the task's handle at once, or an error for an invalid request or a closed executor.
func (e *Executor) Start(req bash.Request) (*bash.Task, error) {
	spec, err := e.Resolve(req)
	if err != nil {
		return nil, err
	}
	streams := backend.NewStreams(e.cfg.Limits, e.cfg.MaxOutputBytes, e.createSpill)
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, bash.ErrClosed
	}
	t := e.tasks.Add(spec.Command, spec.Owner, streams.Stdout, streams.Stderr)
	e.mu.Unlock()

	conf, err := e.confine(spec)
	var p *proc.Process
	var limited <-chan struct{}
	if err == nil {
		p, limited, err = e.spawn(spec, conf, streams)
	}
	if err != nil {
		t.FailSpawn(err, e.listen.Notify, &e.wg)
		return t.Task, nil
	}
	t.SetStop(func() { p.Stop() })
	attachIO(t, p)
	e.wg.Go(func() {
		<-p.Settled()
		limit := e.settleLimit(p, limited)
		t.CloseInputOnEnd()
		e.retire(p)
		exit := p.Exit()
		note := conf.note(!limit && failed(exit) && t.Task.Status() != bash.TaskKilled, streams.Stderr.Output().Text())
		if limit {
			note = strings.TrimPrefix(note+"\n"+bash.ProcessLimitMarker, "\n")
		}
		if note != "" {
			t.SetNote(note)
		}
		t.Settle(exit.Code, exit.Signal, e.listen.Notify)
	})
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

// SpillDir returns the executor's private spill directory, or "" while nothing has spilled (it is
// created on the first spill) and after Close removed it. With Config.KeepSpills the directory
// and its files stay after Close: the caller that set it owns them then.
func (e *Executor) SpillDir() string { return e.spills.Existing() }

// Close implements bash.Executor.Close: it kills every task and every process a run left behind,
// waits for all of them (ctx bounds the grace period) and removes the spill directory unless
// Config.KeepSpills is set. It returns ctx's error when the wait was cut short.
func (e *Executor) Close(ctx context.Context) error {
	// sync.Once makes a second call wait for the first: no extra channel is needed.
	e.closeOnce.Do(func() { e.closeErr = e.close(ctx) })
	return e.closeErr
}

func (e *Executor) close(ctx context.Context) error {
	e.listen.Close()
	e.spawnMu.Lock()
	e.mu.Lock()
	e.closed = true
	e.spawnMu.Unlock()
	tasks := e.tasks.Clear()
	live := make([]*proc.Process, 0, len(e.live))
	for p := range e.live {
		live = append(live, p)
	}
	e.live = map[*proc.Process]chan struct{}{}
	e.mu.Unlock()
	close(e.stopPoll)

	for _, p := range live {
		p.Terminate()
	}
	// The orphans that hide their tag may be another executor's while one is open.
	sweep := proc.NewSweep(e.tag+"-", e.release(), e.cfg.Grace, &e.wg)
	sweep.Terminate()

	var err error
	wait := func(ch <-chan struct{}) {
		select {
		case <-ch:
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("bashlocal: close: %w", context.Cause(ctx))
				for _, p := range live {
					p.ForceKill()
				}
				sweep.ForceKill()
			}
			<-ch
		}
	}
	for _, p := range live {
		wait(p.Stopped())
	}
	wait(sweep.Stopped())
	for _, t := range tasks {
		wait(t.Task.Done())
	}
	e.wg.Wait()
	e.sb.Close()
	if err := e.tmp.Remove(); err != nil {
		e.cfg.Logger.Warn("bashlocal: close", slog.Any("err", err))
	}
	if !e.cfg.KeepSpills {
		if rmErr := e.spills.Remove(); rmErr != nil {
			e.cfg.Logger.Warn("bashlocal: close", slog.Any("err", rmErr))
		}
	}
	return err
}
