package bash_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/backend"
	"github.com/dsh-go/dsh/bash/bashtest"
)

// fakeExecutor is an in-memory bash.Executor that simulates exactly the commands of the conformance
// kit (bashtest's Cmd* constants and command builders) with goroutines instead of processes. Its
// "processes" obey SIGTERM and SIGKILL, honour a grace period and write into head+tail collectors
// like a real backend. With fault set it breaks one promise on purpose, to show that the kit
// notices.
type fakeExecutor struct {
	cfg   fakeConfig
	fault fault

	listeners backend.Listeners
	// raw mirrors the registered listeners for the faults that bypass backend.Listeners.
	rawMu sync.Mutex
	raw   []*bash.TaskListener

	mu      sync.Mutex
	closed  bool
	closing chan struct{} // closed when Close begins
	nextID  int
	tasks   []*fakeTask
	byID    map[bash.TaskID]*fakeTask
	procs   map[*fakeProc]bool // every live simulated process
	wg      sync.WaitGroup     // simulated processes and task settlers

	closeOnce sync.Once
	closeErr  error
	spillSeq  int
}

type fakeConfig struct {
	workdir        string
	defaultTimeout time.Duration
	maxTimeout     time.Duration
	grace          time.Duration
	maxOutput      int
}

// fault names a deliberate misbehaviour of the fake; "" is none.
type fault string

func newFakeExecutor(cfg fakeConfig, f fault) *fakeExecutor {
	e := &fakeExecutor{
		cfg:     cfg,
		fault:   f,
		closing: make(chan struct{}),
		byID:    map[bash.TaskID]*fakeTask{},
		procs:   map[*fakeProc]bool{},
	}
	e.listeners.Logger = slog.New(slog.DiscardHandler)
	return e
}

type fakeTask struct {
	task  *bash.Task
	ctl   *bash.TaskControl
	proc  *fakeProc // nil when the spawn failed
	owner bash.OwnerToken

	readMu sync.Mutex
	note   string // the spawn-failure note, delivered once
}

func (e *fakeExecutor) Resolve(req bash.Request) (bash.Request, error) {
	switch {
	case strings.TrimSpace(req.Command) == "":
		return bash.Request{}, errors.New("fake: request.Command is empty")
	case req.Timeout < 0:
		return bash.Request{}, fmt.Errorf("fake: request.Timeout is %v, want > 0", req.Timeout)
	case req.StdoutMaxBytes < 0:
		return bash.Request{}, fmt.Errorf("fake: request.StdoutMaxBytes is %d, want > 0", req.StdoutMaxBytes)
	}
	if req.Workdir == "" {
		req.Workdir = e.cfg.workdir
	}
	if req.Timeout == 0 {
		req.Timeout = e.cfg.defaultTimeout
	}
	if e.fault != "resolve-no-cap" {
		req.Timeout = min(req.Timeout, e.cfg.maxTimeout)
	}
	if req.StdoutMaxBytes == 0 {
		req.StdoutMaxBytes = e.cfg.maxOutput
	}
	if e.fault == "resolve-drops-empty-stdin" && len(req.Stdin) == 0 {
		req.Stdin = nil
	}
	return req, nil
}

// resolveForRun resolves what Run and Start receive, as the contract says; with the fault
// "no-self-resolve" a zero timeout is taken as is.
func (e *fakeExecutor) resolveForRun(req bash.Request) (bash.Request, error) {
	if e.fault == "no-self-resolve" {
		if strings.TrimSpace(req.Command) == "" || req.Timeout < 0 || req.StdoutMaxBytes < 0 {
			return bash.Request{}, errors.New("fake: invalid request")
		}
		return req, nil
	}
	return e.Resolve(req)
}

func (e *fakeExecutor) Run(ctx context.Context, spec bash.Request) (bash.RunResult, error) {
	spec, err := e.resolveForRun(spec)
	if err != nil {
		return bash.RunResult{}, err
	}
	if e.isClosed() {
		return bash.RunResult{}, bash.ErrClosed
	}
	if ctx.Err() != nil && e.fault != "pre-cancel-spawns" {
		return bash.RunResult{}, fmt.Errorf("%w: %v", bash.ErrAbortedBeforeSpawn, context.Cause(ctx))
	}
	if e.fault == "run-hangs" {
		<-e.closing
		return bash.RunResult{}, bash.ErrClosed
	}
	p, err := e.spawn(spec, spec.StdoutMaxBytes)
	if err != nil {
		return bash.RunResult{}, err
	}
	timer := time.NewTimer(spec.Timeout)
	defer timer.Stop()
	var timedOut, aborted bool
	select {
	case <-p.exited:
	case <-timer.C:
		timedOut = true
		p.terminate(e)
	case <-ctx.Done():
		aborted = true
		p.terminate(e)
	}
	<-p.exited
	switch e.fault {
	case "timeout-as-abort":
		timedOut, aborted = aborted, timedOut
	case "both-causes":
		timedOut = timedOut || aborted
		aborted = timedOut
	}
	return bash.RunResult{
		ExitCode: p.code,
		Signal:   p.signal,
		TimedOut: timedOut,
		Aborted:  aborted,
		Timeout:  spec.Timeout,
		Stdout:   p.stdout.output(),
		Stderr:   p.stderr.output(),
	}, nil
}

func (e *fakeExecutor) Start(spec bash.Request) (*bash.Task, error) {
	spec, err := e.resolveForRun(spec)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.closed && e.fault != "start-after-close" {
		e.mu.Unlock()
		return nil, bash.ErrClosed
	}
	e.nextID++
	task, ctl := bash.NewTask(bash.TaskID("fake-"+strconv.Itoa(e.nextID)), spec.Command)
	ft := &fakeTask{task: task, ctl: ctl, owner: spec.Owner}
	e.tasks = append(e.tasks, ft)
	e.byID[task.ID()] = ft
	e.wg.Add(1) // the settler below
	e.mu.Unlock()

	p, err := e.spawn(spec, e.cfg.maxOutput)
	if err != nil {
		if e.fault == "spawn-failure-errors" {
			e.wg.Done()
			return nil, err
		}
		ft.note = "spawn failed: " + err.Error()
		ctl.MarkKilled()
		if e.fault == "notify-inside-start" {
			e.settle(ft, nil, "")
			e.wg.Done()
			return task, nil
		}
		go func() {
			defer e.wg.Done()
			e.settle(ft, nil, "")
		}()
		return task, nil
	}
	ft.proc = p
	go func() {
		defer e.wg.Done()
		<-p.exited
		e.settle(ft, p.code, p.signal)
	}()
	if e.fault == "start-blocks" {
		<-p.exited
	}
	return task, nil
}

// settle records ft's exit facts and notifies the listeners, as a backend does.
func (e *fakeExecutor) settle(ft *fakeTask, code *int, signal string) {
	notify := e.listeners.Notify
	switch e.fault {
	case "self-signal-completed":
		if signal == "SIGTERM" && ft.task.Status() == bash.TaskRunning {
			signal = ""
		}
	case "notify-twice":
		notify = func(t *bash.Task) { e.listeners.Notify(t); e.listeners.Notify(t) }
	case "notify-before-facts":
		e.listeners.Notify(ft.task)
		ft.ctl.Settle(code, signal, nil)
		return
	case "notify-after-done":
		ft.ctl.Settle(code, signal, nil)
		e.listeners.Notify(ft.task)
		return
	case "panic-stops-listeners", "notify-after-close":
		notify = e.notifyRaw
	}
	ft.ctl.Settle(code, signal, notify)
}

// notifyRaw calls the raw listeners the way a careless backend would: one recover for all of them,
// and no check for Close.
func (e *fakeExecutor) notifyRaw(t *bash.Task) {
	e.rawMu.Lock()
	raw := slices.Clone(e.raw)
	e.rawMu.Unlock()
	defer func() { _ = recover() }()
	for _, l := range raw {
		(*l)(t)
	}
}

func (e *fakeExecutor) lookup(id bash.TaskID) (*fakeTask, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ft, ok := e.byID[id]; ok {
		return ft, nil
	}
	if e.fault == "unknown-message" {
		return nil, fmt.Errorf("no task %s", id)
	}
	return nil, &bash.UnknownTaskError{ID: id}
}

func (e *fakeExecutor) Get(id bash.TaskID) (*bash.Task, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ft, ok := e.byID[id]
	if !ok {
		return nil, false
	}
	if e.fault == "get-copies" {
		copied, _ := bash.NewTask(ft.task.ID(), ft.task.Command())
		return copied, true
	}
	return ft.task, true
}

func (e *fakeExecutor) List() []*bash.Task {
	e.mu.Lock()
	defer e.mu.Unlock()
	tasks := make([]*bash.Task, 0, len(e.tasks))
	for _, ft := range e.tasks {
		tasks = append(tasks, ft.task)
	}
	if e.fault == "list-reversed" {
		slices.Reverse(tasks)
	}
	return tasks
}

func (e *fakeExecutor) OwnerOf(id bash.TaskID) (bash.OwnerToken, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ft, ok := e.byID[id]
	if !ok {
		return "", false
	}
	if ft.owner == "" && e.fault != "owner-empty-reported" {
		return "", false
	}
	return ft.owner, true
}

func (e *fakeExecutor) ReadOutput(id bash.TaskID) (bash.TaskRead, error) {
	ft, err := e.lookup(id)
	if err != nil {
		return bash.TaskRead{}, err
	}
	ft.readMu.Lock()
	defer ft.readMu.Unlock()
	r := bash.TaskRead{Task: ft.task}
	var out, errText string
	if p := ft.proc; p != nil {
		consume := e.fault != "read-repeats"
		var outOmitted, errOmitted int64
		out, outOmitted = p.stdout.read(consume)
		errText, errOmitted = p.stderr.read(consume)
		r.OmittedBytes = outOmitted + errOmitted
		r.Lossy = r.OmittedBytes > 0 && e.fault != "never-lossy"
		r.StdoutSpill = p.stdout.spill()
		r.StderrSpill = p.stderr.spill()
	}
	if ft.note != "" {
		errText += ft.note + "\n"
		ft.note = ""
	}
	r.Delta = out
	if errText != "" {
		if out != "" && !strings.HasSuffix(out, "\n") && e.fault != "merge-no-separator" {
			r.Delta += "\n"
		}
		r.Delta += "[stderr]\n" + errText
	}
	return r, nil
}

func (e *fakeExecutor) Kill(id bash.TaskID) (bool, error) {
	ft, err := e.lookup(id)
	if err != nil {
		return false, err
	}
	var marked bool
	if e.fault == "kill-no-mark" {
		marked = ft.task.Status() == bash.TaskRunning
	} else {
		marked = ft.ctl.MarkKilled()
	}
	if marked && ft.proc != nil {
		ft.proc.terminate(e)
	}
	return marked || e.fault == "kill-always-true", nil
}

func (e *fakeExecutor) OnTaskDone(listener bash.TaskListener) func() {
	remove := e.listeners.Add(listener)
	entry := &listener
	e.rawMu.Lock()
	e.raw = append(e.raw, entry)
	e.rawMu.Unlock()
	if e.fault == "unsubscribe-noop" {
		return func() {}
	}
	return func() {
		remove()
		e.rawMu.Lock()
		defer e.rawMu.Unlock()
		if i := slices.Index(e.raw, entry); i >= 0 {
			e.raw = slices.Delete(e.raw, i, i+1)
		}
	}
}

func (e *fakeExecutor) Close(ctx context.Context) error {
	e.closeOnce.Do(func() {
		if e.fault != "notify-after-close" {
			e.listeners.Close()
		}
		e.mu.Lock()
		e.closed = true
		close(e.closing)
		tasks := e.tasks
		e.tasks, e.byID = nil, map[bash.TaskID]*fakeTask{}
		procs := make([]*fakeProc, 0, len(e.procs))
		for p := range e.procs {
			procs = append(procs, p)
		}
		e.mu.Unlock()
		for _, ft := range tasks {
			ft.ctl.MarkKilled()
		}
		for _, p := range procs {
			p.terminate(e)
		}
		if e.fault == "close-no-wait" {
			return
		}
		waited := make(chan struct{})
		go func() { e.wg.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-ctx.Done():
			for _, p := range procs {
				p.send("SIGKILL")
			}
			<-waited
			e.closeErr = ctx.Err()
		}
	})
	return e.closeErr
}

func (e *fakeExecutor) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// spawn starts the simulated process for spec, or fails as a real spawn would: for a workdir
// that is not a directory, or a command the fake does not know.
func (e *fakeExecutor) spawn(spec bash.Request, stdoutCap int) (*fakeProc, error) {
	if fi, err := os.Stat(spec.Workdir); err != nil {
		return nil, fmt.Errorf("chdir %s: %w", spec.Workdir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("chdir %s: not a directory", spec.Workdir)
	}
	prog, err := programFor(spec)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.closed && e.fault != "start-after-close" {
		e.mu.Unlock()
		return nil, bash.ErrClosed
	}
	e.spillSeq++
	seq := e.spillSeq
	p := &fakeProc{
		sigs:   make(chan string, 8),
		exited: make(chan struct{}),
		stdout: newFakeStream(stdoutCap, fmt.Sprintf("/fake-spill/%d-stdout.log", seq), e.fault == "lossy-no-marker"),
		stderr: newFakeStream(e.cfg.maxOutput, fmt.Sprintf("/fake-spill/%d-stderr.log", seq), e.fault == "lossy-no-marker"),
	}
	e.procs[p] = true
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		code, signal := prog(p)
		p.mu.Lock()
		p.code, p.signal = code, signal
		if p.killTimer != nil {
			p.killTimer.Stop()
		}
		p.mu.Unlock()
		e.mu.Lock()
		delete(e.procs, p)
		e.mu.Unlock()
		close(p.exited)
	}()
	return p, nil
}

// fakeProc is a simulated process: a goroutine running a program, its two output streams and its
// pending signals.
type fakeProc struct {
	stdout, stderr *fakeStream
	sigs           chan string
	exited         chan struct{} // closed after code and signal are set

	mu         sync.Mutex
	terminated bool
	killTimer  *time.Timer
	code       *int
	signal     string
}

// terminate sends SIGTERM and, unless the process is gone by then, SIGKILL after the grace period.
// Only the first call has an effect.
func (p *fakeProc) terminate(e *fakeExecutor) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminated {
		return
	}
	p.terminated = true
	p.send("SIGTERM")
	switch e.fault {
	case "no-escalation":
	case "kill-no-grace":
		p.send("SIGKILL")
	default:
		p.killTimer = time.AfterFunc(e.cfg.grace, func() { p.send("SIGKILL") })
	}
}

func (p *fakeProc) send(signal string) {
	select {
	case p.sigs <- signal:
	default:
	}
}

// wait blocks until a signal the program does not ignore arrives, and returns it. It returns ""
// when gate is not empty and a file appears there.
func (p *fakeProc) wait(ignoreTerm bool, gate string) string {
	var tick <-chan time.Time
	if gate != "" {
		ticker := time.NewTicker(10 * time.Millisecond)
		defer ticker.Stop()
		tick = ticker.C
	}
	for {
		select {
		case sig := <-p.sigs:
			if sig == "SIGTERM" && ignoreTerm {
				continue
			}
			return sig
		case <-tick:
			if _, err := os.Stat(gate); err == nil {
				return ""
			}
		}
	}
}

// program is a simulated command: it writes to p's streams and returns its exit code, or nil and
// the signal it died of.
type program func(p *fakeProc) (code *int, signal string)

func exit(code int) (*int, string) { return &code, "" }

var (
	gateRE   = regexp.MustCompile(`^echo first; while \[ ! -e '([^']*)' \]; do sleep 0\.01; done; echo second$`)
	markerRE = regexp.MustCompile(`^echo spawned > '([^']*)'$`)
	linesRE  = regexp.MustCompile(`^seq -f 'line-%06g' 1 (\d+)( >&2)?$`)
)

// writes returns a program that writes stdout and stderr and exits with code.
func writes(stdout, stderr string, code int) program {
	return func(p *fakeProc) (*int, string) {
		p.stdout.write(stdout)
		p.stderr.write(stderr)
		return exit(code)
	}
}

// programFor returns the simulation of spec's command.
func programFor(spec bash.Request) (program, error) {
	switch spec.Command {
	case bashtest.CmdTrue:
		return writes("", "", 0), nil
	case bashtest.CmdEcho:
		return writes("hi\n", "", 0), nil
	case bashtest.CmdExit3:
		return writes("", "", 3), nil
	case bashtest.CmdStreams:
		return writes("out", "err\n", 3), nil
	case bashtest.CmdOutErr:
		return writes("out\n", "err\n", 0), nil
	case bashtest.CmdErr:
		return writes("", "err\n", 0), nil
	case bashtest.CmdPrintfOutErr:
		return writes("out", "err\n", 0), nil
	case bashtest.CmdOut:
		return writes("out\n", "", 0), nil
	case bashtest.CmdPrintfOut:
		return writes("out", "", 0), nil
	case bashtest.CmdLeaveChild:
		return writes("done\n", "", 0), nil
	case bashtest.CmdSelfTerm:
		return func(*fakeProc) (*int, string) { return nil, "SIGTERM" }, nil
	case bashtest.CmdPwd:
		dir, err := filepath.EvalSymlinks(spec.Workdir)
		if err != nil {
			return nil, err
		}
		return writes(dir+"\n", "", 0), nil
	case bashtest.CmdStdinEnv:
		return writes(string(spec.Stdin)+"["+spec.Env[bashtest.EnvVar]+"]", "", 0), nil
	case bashtest.CmdSleep:
		return func(p *fakeProc) (*int, string) { return nil, p.wait(false, "") }, nil
	case bashtest.CmdTrapTerm:
		return func(p *fakeProc) (*int, string) {
			p.stdout.write("armed\n")
			return nil, p.wait(true, "")
		}, nil
	case bashtest.CmdTrapExit:
		return func(p *fakeProc) (*int, string) {
			p.stdout.write("armed\n")
			if sig := p.wait(false, ""); sig != "SIGTERM" {
				return nil, sig
			}
			return exit(0)
		}, nil
	}
	if m := gateRE.FindStringSubmatch(spec.Command); m != nil {
		return func(p *fakeProc) (*int, string) {
			p.stdout.write("first\n")
			if sig := p.wait(false, m[1]); sig != "" {
				return nil, sig
			}
			p.stdout.write("second\n")
			return exit(0)
		}, nil
	}
	if m := markerRE.FindStringSubmatch(spec.Command); m != nil {
		return func(*fakeProc) (*int, string) {
			if err := os.WriteFile(m[1], []byte("spawned\n"), 0o600); err != nil {
				return exit(1)
			}
			return exit(0)
		}, nil
	}
	if m := linesRE.FindStringSubmatch(spec.Command); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, err
		}
		if m[2] != "" {
			return writes("", bashtest.Lines(n), 0), nil
		}
		return writes(bashtest.Lines(n), "", 0), nil
	}
	return nil, fmt.Errorf("fake: command not simulated: %q", spec.Command)
}

// fakeStream collects one output stream the way a real backend does: it keeps the first quarter
// of its cap and a tail of the rest, drops what lies between, and names a spill file once it has
// dropped something. It keeps the whole stream in memory only to make the simulation simple.
type fakeStream struct {
	mu        sync.Mutex
	data      []byte
	cap, head int
	cursor    int
	spillPath string
	noMarker  bool // the fault "lossy-no-marker"
}

func newFakeStream(capacity int, spillPath string, noMarker bool) *fakeStream {
	return &fakeStream{cap: capacity, head: capacity / 4, spillPath: spillPath, noMarker: noMarker}
}

func (s *fakeStream) write(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = append(s.data, text...)
}

// gap returns the dropped range [from, to) of the stream as it is now; from == to when nothing
// was dropped.
func (s *fakeStream) gap() (from, to int) {
	total := len(s.data)
	if total <= s.cap {
		return total, total
	}
	return s.head, total - (s.cap - s.head)
}

// read returns what lies after the cursor that is still kept, and how many bytes after the cursor
// were dropped; consume advances the cursor.
func (s *fakeStream) read(consume bool) (string, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	from, to := s.gap()
	c := s.cursor
	var out []byte
	var omitted int
	if c < from {
		out = append(out, s.data[c:from]...)
		c = from
	}
	if c < to {
		// As the contract says: a marker line where bytes were dropped, and the kept bytes after
		// it from their first line start.
		skip := 0
		if i := strings.IndexByte(string(s.data[to:]), '\n'); i >= 0 && !s.noMarker {
			skip = i + 1
		}
		omitted = to - c + skip
		c = to + skip
		if !s.noMarker {
			if len(out) > 0 && out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			out = append(out, bash.DroppedMarker(int64(omitted))...)
		}
	}
	out = append(out, s.data[c:]...)
	if consume {
		s.cursor = len(s.data)
	}
	return string(out), int64(omitted)
}

func (s *fakeStream) spill() bash.Spill {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.data) > s.cap {
		return bash.Spill{Path: s.spillPath}
	}
	return bash.Spill{}
}

func (s *fakeStream) output() bash.Output {
	s.mu.Lock()
	defer s.mu.Unlock()
	from, to := s.gap()
	o := bash.Output{
		Head:         string(s.data[:from]),
		Tail:         string(s.data[to:]),
		OmittedBytes: int64(to - from),
		TotalBytes:   int64(len(s.data)),
	}
	if o.OmittedBytes > 0 {
		o.Spill.Path = s.spillPath
	}
	return o
}
