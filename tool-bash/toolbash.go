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
package toolbash

import (
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
type Config struct {
	Logger *slog.Logger
	Agents func(owner string) (*tools.Agent, bool)
}

// Set is the three bash tools bound to one executor, plus the listener that turns background
// task completions into notices. Create it with [New]; its methods are safe for concurrent use.
type Set struct {
	ex     bash.Executor
	cfg    Config
	bash   *tools.Tool
	output *tools.Tool
	kill   *tools.Tool

	mu     sync.Mutex
	agents map[string]*tools.Agent // owner token → last agent seen with it
	stop   func()
}

// New returns the bash tools over executor ex, configured by cfg, and subscribes to ex's task
// completions for the notices. It returns an error when ex is nil. Call [Set.Close] to
// unsubscribe; the Set never closes ex, which stays the caller's.
func New(ex bash.Executor, cfg Config) (*Set, error) {
	if ex == nil {
		return nil, errors.New("toolbash: nil executor")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Set{ex: ex, cfg: cfg, agents: map[string]*tools.Agent{}}
	var err error
	if s.bash, err = s.newBashTool(); err != nil {
		return nil, err
	}
	if s.output, err = s.newOutputTool(); err != nil {
		return nil, err
	}
	if s.kill, err = s.newKillTool(); err != nil {
		return nil, err
	}
	s.stop = ex.OnTaskDone(s.taskDone)
	return s, nil
}

// Tools returns the tools in registration order: bash, bash_output, bash_kill. The tools are
// shared; the caller must not modify them.
func (s *Set) Tools() []*tools.Tool { return []*tools.Tool{s.bash, s.output, s.kill} }

// Register adds the three tools to r in order and returns a function that removes them. It
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

// Close stops the completion notices. It does not stop running tasks or close the executor.
// It is idempotent.
func (s *Set) Close() {
	s.mu.Lock()
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
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
	err := agent.Inject(tools.Notice{Source: NoticeSource, Text: completionNotice(task.ID(), factsOf(task))})
	switch {
	case err == nil:
	case errors.Is(err, tools.ErrAgentGone):
		s.mu.Lock()
		if s.agents[string(owner)] == agent {
			delete(s.agents, string(owner))
		}
		s.mu.Unlock()
	default:
		s.cfg.Logger.Warn("tool-bash: completion notice not delivered", "task", string(task.ID()), "owner", string(owner), "error", err)
	}
}

// ownerOf returns the caller's owner token, or "" (no owner) for a call without an owning agent.
func ownerOf(call tools.Call) bash.OwnerToken {
	if call.Agent == nil {
		return ""
	}
	return bash.OwnerToken(call.Agent.Owner)
}
