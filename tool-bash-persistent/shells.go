package persistentbash

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/proctree"

	"github.com/dsh-go/dsh/tool-bash-persistent/internal/ptyshell"
	"github.com/dsh-go/dsh/tools"
)

// ToolName is the name the model calls.
const ToolName = "bash"

// ToolTitle is the tool's title in user interfaces and tool lists.
const ToolTitle = "Run a command in a persistent bash shell"

// PromptHint is a line a harness may add to its system prompt (or send as its MCP server
// instructions) when the tool is registered: check every result's status, and rely on the
// shell's state carrying over.
const PromptHint = "Check the [exit code: N] marker on every bash result; investigate failures before moving on. " +
	"The bash shell keeps its state (working directory, variables) between calls of this session."

// Args are the model's arguments to the bash tool.
type Args struct {
	Command string `json:"command" jsonschema:"The bash command to run. Relative path is preferred in the command."`
}

// Errors a call can fail with (the model reads "Error: " + the message).
var (
	ErrNoOwner      = errors.New("bash requires an owning agent session")
	ErrEmptyCommand = errors.New("command must be a non-empty string")
	ErrClosed       = errors.New("tool-bash-persistent is closed")
	errTimedOut     = errors.New("persistent bash command timed out")
	errDisposed     = errors.New("tool-bash-persistent was closed during the call")
	errReleased     = errors.New("the agent session's shell was released")
)

// Shells is the persistent bash tool: one interactive shell per owning agent, started on the
// owner's first call in the owner's directory and kept until it exits, a call times out or is
// cancelled, the owner is released or the tool is closed. It is a [tools.Provider]; it owns its
// shells and every process they start.
//
// Calls of one owner run one at a time in arrival order; a call that is cancelled while queued
// leaves the queue and never starts a shell. Calls of different owners run in parallel. All
// methods are safe for concurrent use.
type Shells struct {
	cfg     Config
	tool    *tools.Tool
	env     []string
	confine *confinement       // nil: no sandbox
	prefix  string             // of every shell's tag: the Close sweep finds all of them by it
	release func() (last bool) // ends the proctree.Hold; last: the Close sweep may take orphans

	life   context.Context // cancelled by Close, so pending starts and runs end
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	owners map[string]*owner
	closed bool
	calls  sync.WaitGroup // calls between admission and return

	closeOnce sync.Once
	closeErr  error
}

var _ tools.Provider = (*Shells)(nil)

// owner is one agent's shell slot. Holding turn (a send on it) is the right to run; shell is
// read and written under Shells.mu so Release and Close can reach a running shell.
type owner struct {
	turn   chan struct{}
	queued atomic.Int32 // calls waiting for turn
	shell  *ptyshell.Shell
	dir    string // where shell started
	reset  string // why the last shell was reset, until a result has said so ("": it was not)
	gone   bool
}

// New returns the persistent bash tool configured by cfg (see [Config] for defaults), or an
// error naming the first invalid field. No shell starts before the first call.
func New(cfg Config) (*Shells, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	scrub, err := envpolicy.New(cfg.ScrubPatterns, cfg.ScrubPrefixes, cfg.KeepEnv)
	if err != nil {
		return nil, fmt.Errorf("persistentbash: %w", err)
	}
	confine, err := newConfinement(cfg)
	if err != nil {
		return nil, err
	}
	s := &Shells{
		cfg:     cfg,
		env:     scrub.Environ(os.Environ(), cfg.Env),
		confine: confine,
		prefix:  strconv.Itoa(os.Getpid()) + "." + newID(),
		owners:  map[string]*owner{},
		release: proctree.Hold(),
	}
	s.life, s.cancel = context.WithCancelCause(context.Background())
	s.tool, err = tools.New(ToolName, cfg.Description+confine.description(), s.call,
		tools.WithTitle[Args](ToolTitle),
		// A command can do anything the user can, including reach the network.
		tools.WithAnnotations[Args](tools.Annotations{DestructiveHint: true, OpenWorldHint: true}),
		tools.WithOutput[Args, Facts](),
		tools.WithCallView(func(a Args) (tools.CallView, bool) {
			return tools.CallView{Terminal: &tools.TerminalCall{Command: a.Command}}, true
		}),
		tools.WithResultView(presentResult))
	if err != nil {
		confine.close()
		s.release()
		return nil, fmt.Errorf("persistentbash: %w", err)
	}
	return s, nil
}

// newID returns 8 random bytes in hex.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Tool returns the model-facing bash tool, to register in a [tools.Registry].
func (s *Shells) Tool() *tools.Tool { return s.tool }

// Tools returns the one tool, bash, as a list (the [tools.Provider] form of [Shells.Tool]).
func (s *Shells) Tools() []*tools.Tool { return []*tools.Tool{s.tool} }

func (s *Shells) call(ctx context.Context, call tools.Call, args Args) (tools.Result, error) {
	if call.Agent == nil || call.Agent.Owner == "" {
		return tools.Result{}, ErrNoOwner
	}
	if strings.TrimSpace(args.Command) == "" {
		return tools.Result{}, ErrEmptyCommand
	}
	if i := strings.IndexByte(args.Command, 0); i >= 0 {
		return tools.Result{}, fmt.Errorf("command contains a NUL byte at offset %d; bash cannot receive it", i)
	}
	o, err := s.admit(ctx, call.Agent.Owner)
	if err != nil {
		return tools.Result{}, err
	}
	defer s.calls.Done()
	o.queued.Add(1)
	select {
	case o.turn <- struct{}{}:
		o.queued.Add(-1)
	case <-ctx.Done():
		o.queued.Add(-1)
		return tools.Result{}, context.Cause(ctx)
	case <-s.life.Done():
		o.queued.Add(-1)
		return tools.Result{}, ErrClosed
	}
	defer func() { <-o.turn }()
	if err := context.Cause(ctx); err != nil {
		return tools.Result{}, err // cancelled while queued: nothing is started
	}

	base, cancelBase := context.WithCancelCause(ctx)
	defer cancelBase(nil)
	stop := context.AfterFunc(s.life, func() { cancelBase(errDisposed) })
	defer stop()
	runCtx, cancelRun := context.WithTimeoutCause(base, s.cfg.Timeout, errTimedOut)
	defer cancelRun()

	sh, dir, err := s.shellFor(runCtx, o, call.Agent)
	if err != nil {
		return tools.Result{}, err
	}
	stopProgress := watchProgress(sh, tools.ProgressFrom(ctx))
	res, err := sh.Run(runCtx, args.Command)
	stopProgress() // before the result: nothing is reported after the handler returns
	if err != nil {
		s.drop(o, sh)
		return s.failedRun(ctx, runCtx, o, dir, res, err)
	}
	text, reset := render(res)
	if reset != "" {
		s.drop(o, sh)
	}
	prior := s.noteReset(o, reset)
	output := outputText(res.Output)
	failed := res.Outcome == ptyshell.Completed && res.ExitCode != 0 || res.Outcome == ptyshell.ShellExited
	text = joinLines(text, s.confine.notes(failed, output, dir))
	facts := runFacts(res, reset != "", output, text)
	facts.Sandbox = s.sandboxName()
	return withResetNotice(prior, dir, text, facts)
}

// failedRun is the result of a Run that returned err (its shell, started in dir, already
// dropped), noting the reset for the owner o's next result: the timeout text with the partial
// output when runCtx timed out, otherwise the error of the call's context ctx, of the tool's
// disposal or of the shell.
func (s *Shells) failedRun(ctx, runCtx context.Context, o *owner, dir string, res ptyshell.Result, err error) (tools.Result, error) {
	switch cause := context.Cause(runCtx); {
	case errors.Is(cause, errTimedOut):
		prior := s.noteReset(o, timeoutCause(s.cfg.Timeout))
		output := outputText(res.Output)
		return withResetNotice(prior, dir, timeoutText(s.cfg.Timeout, output), Facts{Outcome: "timed-out", Output: output, Reset: true, OmittedChars: res.Output.OmittedChars,
			OmittedLines: res.Output.OmittedLines, Sandbox: s.sandboxName(), Trailer: 1})
	case errors.Is(cause, errDisposed):
		return tools.Result{}, errDisposed
	case ctx.Err() != nil:
		s.noteReset(o, CancelledCause)
		return tools.Result{}, context.Cause(ctx)
	}
	s.noteReset(o, "the shell failed: "+err.Error())
	return tools.Result{}, fmt.Errorf("persistent bash: %w", err)
}

// noteReset records why the owner's shell was just reset (cause, "" when it was not) for the
// owner's next result, and returns the reason recorded before, which the result being made
// reports: each reset is told once, by the first result after it.
func (s *Shells) noteReset(o *owner, cause string) (prior string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prior, o.reset = o.reset, cause
	return prior
}

// sandboxName is the sandbox policy the shells run in, for the facts ("" without one).
func (s *Shells) sandboxName() string {
	if s.confine == nil {
		return ""
	}
	return s.confine.resolved.String()
}

// admit returns the owner's slot, creating it, and counts the call; it fails once the tool is
// closed.
func (s *Shells) admit(ctx context.Context, name string) (*owner, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	o := s.owners[name]
	if o == nil {
		o = &owner{turn: make(chan struct{}, 1)}
		s.owners[name] = o
	}
	s.calls.Add(1)
	return o, nil
}

// shellFor returns the owner's shell, starting one in the agent's directory (resolved against
// Workdir) when it has none or its shell has exited, and the directory the shell started in.
// The caller holds the owner's turn.
func (s *Shells) shellFor(ctx context.Context, o *owner, agent *tools.Agent) (*ptyshell.Shell, string, error) {
	s.mu.Lock()
	sh, dir, closed, gone := o.shell, o.dir, s.closed, o.gone
	s.mu.Unlock()
	switch {
	case closed:
		return nil, "", ErrClosed
	case gone:
		return nil, "", errReleased
	}
	if sh != nil {
		e, exited := sh.ExitStatus()
		if !exited {
			return sh, dir, nil
		}
		// It died since the last call (a signal from outside, a background kill): the command
		// runs in a fresh shell, whose result says so.
		s.drop(o, sh)
		s.noteReset(o, exitCause(e)+" between calls")
	}
	switch dir = agent.Dir; {
	case dir == "":
		dir = s.cfg.Workdir
	case !filepath.IsAbs(dir):
		dir = filepath.Join(s.cfg.Workdir, dir)
	}
	cfg := ptyshell.Config{
		Bash:           s.cfg.Bash,
		Dir:            dir,
		Env:            append(slices.Clip(s.env), s.sessionEnv(agent, dir)...),
		MaxOutputChars: s.cfg.MaxOutputChars,
		KillGrace:      s.cfg.KillGrace,
		TagPrefix:      s.prefix,
	}
	if s.confine != nil {
		// The set-up file and long commands go in the private TMPDIR: a path the sandbox's rules
		// did not know when they were prepared may be unreadable (denying a path allows its
		// siblings only as they were then).
		cfg.Start, cfg.TempDir = s.confine.prepared.Start, s.confine.tmp
	}
	sh, err := ptyshell.Start(ctx, cfg)
	if err != nil {
		if errors.Is(context.Cause(ctx), errDisposed) {
			return nil, "", errDisposed
		}
		return nil, "", fmt.Errorf("persistent bash shell did not start: %w", err)
	}
	s.mu.Lock()
	closed, gone = s.closed, o.gone
	if !closed && !gone {
		o.shell, o.dir = sh, dir
	}
	s.mu.Unlock()
	if closed || gone {
		_ = sh.Close()
		if closed {
			return nil, "", ErrClosed
		}
		return nil, "", errReleased
	}
	return sh, dir, nil
}

// sessionEnv returns the session facts a shell of agent sees (envpolicy.SessionFacts with
// DSH_SHELL=persistent, the agent's session id and dir, where the shell started, as DSH_HOME),
// then the sandbox's TMPDIR and cache directory.
func (s *Shells) sessionEnv(agent *tools.Agent, dir string) []string {
	var env []string
	for _, vars := range []map[string]string{envpolicy.SessionFacts("persistent", agent.Session, dir), s.confine.env()} {
		for k, v := range vars {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// drop forgets the owner's shell sh and closes it.
func (s *Shells) drop(o *owner, sh *ptyshell.Shell) {
	s.mu.Lock()
	if o.shell == sh {
		o.shell = nil
	}
	s.mu.Unlock()
	_ = sh.Close()
}

// Release closes the shell of owner (an agent session that went away) and every process it
// started, and returns once they are gone (at most about Config.KillGrace after SIGTERM); a
// call of that owner still running ends with the shell-exit result. A later call of the same
// owner starts a fresh shell. An owner without a shell has nothing to release. It returns an
// error when processes survived.
func (s *Shells) Release(owner string) error {
	s.mu.Lock()
	o := s.owners[owner]
	delete(s.owners, owner)
	var sh *ptyshell.Shell
	if o != nil {
		o.gone = true
		sh = o.shell
	}
	s.mu.Unlock()
	if sh == nil {
		return nil
	}
	if err := sh.Close(); err != nil {
		return fmt.Errorf("persistentbash: release %q: %w", owner, err)
	}
	return nil
}

// Close closes every shell and every process they started, ends pending calls (they fail with
// an error) and waits for all calls to return. Later calls fail with ErrClosed. The shells close
// in parallel, each within about Config.KillGrace after SIGTERM; when ctx ends first, what is
// left gets SIGKILL at once, Close still waits until it is gone, and returns ctx's error. It
// returns an error when processes survived. Close is idempotent: a second call waits for the
// first and returns what it returned.
func (s *Shells) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closeErr = s.close(ctx) })
	return s.closeErr
}

func (s *Shells) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	var shells []*ptyshell.Shell
	for _, o := range s.owners {
		o.gone = true
		if o.shell != nil {
			shells = append(shells, o.shell)
		}
	}
	s.owners = nil
	s.mu.Unlock()
	s.cancel(errDisposed)

	errs := make([]error, len(shells)+1)
	var wg sync.WaitGroup
	for i, sh := range shells {
		wg.Go(func() { errs[i] = sh.Close() })
	}
	closed := make(chan struct{})
	go func() {
		wg.Wait()
		s.calls.Wait()
		close(closed)
	}()
	select {
	case <-closed:
	case <-ctx.Done():
		errs[len(shells)] = context.Cause(ctx)
		for _, sh := range shells {
			sh.Kill()
		}
		<-closed
	}
	errs = append(errs, s.sweep(ctx))
	s.confine.close()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("persistentbash: close: %w", err)
	}
	return nil
}

// sweep stops what the closed shells left behind: every process carrying a tag of these shells,
// and the escapees that hide their tag (children of this process, a child subreaper, in another
// session, that nothing started and waits for), reaping them. ctx bounds the grace period; it
// returns ctx's error when it cut the wait short.
func (s *Shells) sweep(ctx context.Context) error {
	// The orphans that hide their tag may be another holder's while one is open (proctree.Hold).
	stop := proctree.NewStopper(proctree.Tree{Tag: ptyshell.TagVar + "=" + s.prefix, TagPrefix: true, Orphans: s.release()},
		proctree.StopOptions{Grace: s.cfg.KillGrace, Reap: true})
	stop.Terminate()
	select {
	case <-stop.Stopped():
		return nil
	case <-ctx.Done():
		stop.ForceKill()
		<-stop.Stopped()
		return context.Cause(ctx)
	}
}
