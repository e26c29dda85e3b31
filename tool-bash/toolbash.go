// Package toolbash provides the model-facing one-shot bash tools over any executor of the seam
// in github.com/dsh-go/dsh/bash: `bash` runs a command in a fresh shell (in the foreground, or
// as a background task), `bash_output` reads a background task's new output and status, and
// `bash_kill` stops one.
//
// The tools are built with github.com/dsh-go/dsh/tools, so their arguments are validated
// against the published schemas before anything runs, and keys the schemas do not declare (an
// `env` or `stdin` smuggled in by a model) never reach the executor. Result texts are fixed
// formats a model learns once; see the package README for each of them.
//
// Background tasks belong to the session that started them: the caller's owner token is stored
// on the task by the executor, and reading or killing a task owned by another session is
// refused. When an owned task ends, a notice is injected into its session.
//
// A [Set] is a github.com/dsh-go/dsh/tools Provider: [Set.Release] kills one session's tasks
// when it ends, [Set.Close] stops everything the tools run. The executor stays the caller's.
package toolbash

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

// PromptHint is a line a harness may add to its system prompt when the bash tools are
// registered, so the model checks every result's status.
const PromptHint = "Check the [exit code: N] marker on every bash result; investigate failures before moving on."

// NoticeSource is the [tools.Notice] source of the completion notices this package injects.
const NoticeSource = "tool-bash"

// Config configures a [Set]. Logger receives a line when a completion notice could not be
// injected for a reason other than the agent being gone; nil means slog.Default(). Agents, when
// non-nil, finds the live agent session for an owner token when a background task ends (the
// harness's agent registry); when nil, the Set uses the most recent [tools.Agent] it saw calling
// with that token.
//
// NoBackground turns background execution off entirely: `run_in_background` disappears from the
// bash schema and its description, and bash_output, bash_kill and bash_tasks are not provided.
type Config struct {
	Logger       *slog.Logger
	Agents       func(owner string) (*tools.Agent, bool)
	NoBackground bool
	// ApproveUnsandboxed decides a bash call that asks to run outside the sandbox
	// (`sandbox: "off"`); nil refuses every such call. The permission stages plug in here: an
	// "ask" stage that puts the question to a person.
	ApproveUnsandboxed ApproveFunc
}

// ErrClosed is the error of a call made after [Set.Close] (the model reads "Error: " + its
// message).
var ErrClosed = errors.New("the bash tools are closed")

// Set is the three bash tools bound to one executor, plus the listener that turns background
// task completions into notices. It is a [tools.Provider]. Create it with [New]; its methods are
// safe for concurrent use.
//
// Ownership: the executor stays the caller's and the Set never closes it. The Set serves every
// task of its executor (bash_output and bash_kill reach any of them, ownership permitting), so
// [Set.Release] and [Set.Close] stop the executor's tasks whichever Set started them.
// Processes a foreground command left behind (`sleep 100 &`) belong to no task: only the
// executor's Close stops them.
type Set struct {
	ex     bash.Executor
	cfg    Config
	bash   *tools.Tool
	output *tools.Tool
	kill   *tools.Tool
	tasks  *tools.Tool

	life   context.Context // cancelled by Close: calls in flight derive from it
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	agents map[string]*tools.Agent // owner token → last agent seen with it
	// descriptions are the descriptions of the tasks this Set started, for bash_tasks.
	descriptions map[bash.TaskID]string
	// told holds the tasks whose final status a bash_output or bash_kill result has shown: their
	// completion notices are stale.
	told   map[bash.TaskID]bool
	stop   func()
	closed bool
	calls  sync.WaitGroup // calls between admission and return

	closeOnce sync.Once
	closeErr  error
}

var _ tools.Provider = (*Set)(nil)

// New returns the bash tools over executor ex, configured by cfg, and subscribes to ex's task
// completions for the notices. It returns an error when ex is nil. Call [Set.Close] to stop
// the tools' work, or [Set.Detach] to hand the tasks to another Set; the Set never closes ex,
// which stays the caller's.
func New(ex bash.Executor, cfg Config) (*Set, error) {
	if ex == nil {
		return nil, errors.New("toolbash: nil executor")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Set{ex: ex, cfg: cfg, agents: map[string]*tools.Agent{}, descriptions: map[bash.TaskID]string{}, told: map[bash.TaskID]bool{}}
	s.life, s.cancel = context.WithCancelCause(context.Background())
	var err error
	if s.bash, err = s.newBashTool(); err != nil {
		return nil, fmt.Errorf("toolbash: %w", err)
	}
	if !cfg.NoBackground {
		if s.output, err = s.newOutputTool(); err != nil {
			return nil, fmt.Errorf("toolbash: %w", err)
		}
		if s.kill, err = s.newKillTool(); err != nil {
			return nil, fmt.Errorf("toolbash: %w", err)
		}
		if s.tasks, err = s.newTasksTool(); err != nil {
			return nil, fmt.Errorf("toolbash: %w", err)
		}
	}
	s.stop = ex.OnTaskDone(s.taskDone)
	return s, nil
}

// Tools returns the tools in registration order: bash, bash_output, bash_kill, bash_tasks (only
// bash with Config.NoBackground). The tools are shared; the caller must not modify them.
func (s *Set) Tools() []*tools.Tool {
	if s.cfg.NoBackground {
		return []*tools.Tool{s.bash}
	}
	return []*tools.Tool{s.bash, s.output, s.kill, s.tasks}
}

// Register adds the tools to r in order and returns a function that removes them. It
// registers all of them or none: on an error (a name already taken) the ones added are removed
// again.
func (s *Set) Register(r *tools.Registry) (unregister func(), err error) {
	var undo []func()
	unregister = func() {
		for _, u := range undo {
			u()
		}
	}
	for _, t := range s.Tools() {
		u, err := r.Register(t)
		if err != nil {
			unregister()
			return nil, fmt.Errorf("toolbash: %w", err)
		}
		undo = append(undo, u)
	}
	return unregister, nil
}

// Release kills every running background task of the executor that owner started and waits
// until they have ended (the executor sends SIGTERM, then SIGKILL after its grace period), and
// forgets the agent last seen with owner, so the kills bring it no notice. Tasks started
// without an owner, and the empty owner, are never released. A foreground call of owner still
// running is not stopped (cancel its context), and a task it starts after Release has listed
// the tasks is not killed. It returns the kill errors, joined.
func (s *Set) Release(owner string) error {
	if owner == "" {
		return nil
	}
	s.mu.Lock()
	delete(s.agents, owner)
	s.mu.Unlock()
	killed, err := s.killTasks(func(id bash.TaskID) bool {
		o, ok := s.ex.OwnerOf(id)
		return ok && string(o) == owner
	})
	for _, t := range killed {
		<-t.Done()
	}
	if err != nil {
		return fmt.Errorf("toolbash: release %q: %w", owner, err)
	}
	return nil
}

// Close stops the tools' work: it stops the completion notices, refuses later calls
// ([ErrClosed]), cancels the calls in flight (a foreground command is stopped), kills every
// running background task of the executor, and waits until the calls have returned and the
// tasks have ended, or until ctx is done (then it returns ctx's error; the executor still
// finishes the kills). It does not close the executor. It returns the kill errors, joined. Close
// is idempotent: a second call waits for the first and returns what it returned.
func (s *Set) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closeErr = s.close(ctx) })
	return s.closeErr
}

func (s *Set) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	clear(s.agents)
	s.mu.Unlock()
	s.Detach()
	s.cancel(ErrClosed)
	// The calls go first, so a background task started by a call in flight is killed too.
	calls := make(chan struct{})
	go func() {
		s.calls.Wait()
		close(calls)
	}()
	waitErr := waitAll(ctx, calls)
	killed, err := s.killTasks(func(bash.TaskID) bool { return true })
	if err != nil {
		err = fmt.Errorf("toolbash: close: %w", err)
	}
	if waitErr == nil {
		done := make([]<-chan struct{}, len(killed))
		for i, t := range killed {
			done[i] = t.Done()
		}
		waitErr = waitAll(ctx, done...)
	}
	return errors.Join(err, waitErr)
}

// waitAll waits until every channel in done is closed and returns nil, or returns ctx's error
// when ctx is done first.
func waitAll(ctx context.Context, done ...<-chan struct{}) error {
	for _, d := range done {
		select {
		case <-d:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Detach stops the completion notices and nothing else: the tools keep working and the tasks
// keep running. It is for a harness that hands the executor's tasks to a new Set (ownership is
// stored on the tasks, so it carries over); Close still stops everything. It is idempotent.
func (s *Set) Detach() {
	s.mu.Lock()
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// killTasks kills the executor's running tasks whose id match selects, all at once (each Kill
// waits for its tree), and returns the tasks it killed, in start order, with the kill errors
// joined. A task that ends or disappears meanwhile is no error.
func (s *Set) killTasks(match func(bash.TaskID) bool) ([]*bash.Task, error) {
	var running []*bash.Task
	for _, task := range s.ex.List() {
		if task.Status() == bash.TaskRunning && match(task.ID()) {
			running = append(running, task)
		}
	}
	ok := make([]bool, len(running))
	errs := make([]error, len(running))
	var wg sync.WaitGroup
	for i, task := range running {
		wg.Go(func() {
			ok[i], errs[i] = s.ex.Kill(task.ID())
			if errors.Is(errs[i], bash.ErrUnknownTask) {
				errs[i] = nil
			} else if errs[i] != nil {
				errs[i] = fmt.Errorf("kill %s: %w", task.ID(), errs[i])
			}
		})
	}
	wg.Wait()
	var killed []*bash.Task
	for i, task := range running {
		if ok[i] {
			killed = append(killed, task)
		}
	}
	return killed, errors.Join(errs...)
}

// guard wraps a tool's body so that it runs only while the Set is open, with a context that
// Close cancels, and is counted until it returns.
func guard[In any](s *Set, body tools.Handler[In]) tools.Handler[In] {
	return func(ctx context.Context, call tools.Call, args In) (tools.Result, error) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return tools.Result{}, ErrClosed
		}
		s.calls.Add(1)
		s.mu.Unlock()
		defer s.calls.Done()
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		stop := context.AfterFunc(s.life, func() { cancel(ErrClosed) })
		defer stop()
		return body(ctx, call, args)
	}
}

// remember records agent as the live session for its owner token.
func (s *Set) remember(agent *tools.Agent) {
	if agent == nil || agent.Owner == "" {
		return
	}
	s.mu.Lock()
	s.agents[agent.Owner] = agent
	s.mu.Unlock()
}

func (s *Set) agentFor(owner string) (*tools.Agent, bool) {
	if s.cfg.Agents != nil {
		return s.cfg.Agents(owner)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[owner]
	return a, ok
}

// taskDone is the executor listener: it injects the completion notice into the task's owner.
// Ownerless tasks, owners with no live agent and agents that are gone get no notice.
func (s *Set) taskDone(task *bash.Task) {
	owner, ok := s.ex.OwnerOf(task.ID())
	if !ok || owner == "" {
		return
	}
	agent, ok := s.agentFor(string(owner))
	if !ok || agent == nil || agent.Inject == nil {
		return
	}
	id := task.ID()
	err := agent.Inject(tools.Notice{Source: NoticeSource, Text: completionNotice(id, factsOf(task)), Stale: func() bool { return s.wasTold(id) }})
	switch {
	case err == nil:
	case errors.Is(err, tools.ErrAgentGone):
		s.mu.Lock()
		if s.agents[string(owner)] == agent {
			delete(s.agents, string(owner))
		}
		s.mu.Unlock()
	default:
		s.cfg.Logger.Warn("toolbash: completion notice not delivered", "task", string(task.ID()), "owner", string(owner), "error", err)
	}
}

// tell records that a result shows task id's status, which has ended unless it is running or
// empty (unknown), so its completion notice, queued or still to come, is stale.
func (s *Set) tell(id bash.TaskID, status string) {
	if status == "" || status == string(bash.TaskRunning) {
		return
	}
	s.mu.Lock()
	s.told[id] = true
	s.mu.Unlock()
}

func (s *Set) wasTold(id bash.TaskID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.told[id]
}

// ownerOf returns the caller's owner token, or "" (no owner) for a call without an owning agent.
func ownerOf(call tools.Call) bash.OwnerToken {
	if call.Agent == nil {
		return ""
	}
	return bash.OwnerToken(call.Agent.Owner)
}
