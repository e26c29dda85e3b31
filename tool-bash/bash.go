package toolbash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtext"
	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/termtext"
	"github.com/dsh-go/dsh/tools"
)

// bashDescription is what the model reads about the bash tool; without background execution
// the sentence about run_in_background is left out.
const bashDescription = bashDescriptionBase + backgroundSentence + markersSentence

const bashDescriptionBase = "Execute a bash command (`bash -c`) and return its stdout/stderr. " +
	"Each call runs in a fresh shell: no state (cwd, variables, functions) persists between calls — pass `workdir` instead of using `cd`. " +
	"Non-zero exits are reported as `[exit code: N]`, a command stopped at its timeout as `[timed out after Nms]`, one ended by a signal as `[killed by signal: SIG]`. " +
	"Long output keeps its beginning and its end, with a line between them saying how many bytes were omitted and which file holds the full output when one is available. "

const backgroundSentence = "Set `run_in_background: true` for long-running commands: the call returns a task id immediately; poll it with `bash_output`, stop it with `bash_kill`, list this session's tasks with `bash_tasks`. "

const markersSentence = "Only the markers on the last lines of a result come from the tool; a command can print text that looks like one."

// BashArgs are the arguments of the bash tool. Fields are in the order the schema lists them.
type BashArgs struct {
	Command     string `json:"command" jsonschema:"The bash command to execute."`
	Description string `json:"description" jsonschema:"Clear, concise description of what this command does in active voice, 5-10 words (shown in the UI). Examples: \"ls\" → \"List files in current directory\"; \"git status\" → \"Show working tree status\"; \"npm install\" → \"Install package dependencies\"."`
	// TimeoutMs is a pointer so that an explicit 0 is refused rather than taken as "default".
	TimeoutMs       *float64 `json:"timeoutMs,omitempty" jsonschema:"Timeout in milliseconds. The executor applies its configured default and cap, and kills the command on expiry."`
	Workdir         string   `json:"workdir,omitempty" jsonschema:"Working directory for this command. Defaults to the session workspace; a relative path is resolved against it."`
	RunInBackground bool     `json:"run_in_background,omitempty" jsonschema:"Run in the background and return a task id immediately. No timeout applies."`
	Sandbox         string   `json:"sandbox,omitempty" jsonschema:"Set to \"off\" to ask to run this command outside the sandbox; a person must approve it. Give the reason in justification."`
	Justification   string   `json:"justification,omitempty" jsonschema:"Why the command cannot run in the sandbox (required with sandbox: \"off\")."`
}

func (s *Set) newBashTool() (*tools.Tool, error) {
	description := bashDescription
	var opts []tools.Option[BashArgs]
	if s.cfg.NoBackground {
		description = bashDescriptionBase + markersSentence
		schema, err := tools.InferSchema[BashArgs]()
		if err != nil {
			return nil, err
		}
		// Without the property the validator drops a run_in_background the model sends anyway,
		// as it drops every undeclared key: the command then runs in the foreground.
		delete(schema.Properties, "run_in_background")
		schema.PropertyOrder = slices.DeleteFunc(schema.PropertyOrder, func(p string) bool { return p == "run_in_background" })
		opts = append(opts, tools.WithSchema[BashArgs](schema))
	}
	return tools.New("bash", description+sandboxDescription(s.ex), guard(s, s.runBash), append(opts,
		tools.WithTitle[BashArgs]("Run a bash command"),
		// A command can do anything the user can, including reach the network.
		tools.WithAnnotations[BashArgs](tools.Annotations{DestructiveHint: true, OpenWorldHint: true}),
		tools.WithOutput[BashArgs, RunFacts](),
		tools.WithCallView(presentBashCall),
		tools.WithResultView(presentBashResult))...)
}

// runBash is the bash tool's body.
func (s *Set) runBash(ctx context.Context, call tools.Call, args BashArgs) (tools.Result, error) {
	if strings.TrimSpace(args.Command) == "" {
		return tools.Result{}, errors.New("invalid command: expected a non-empty string")
	}
	if i := strings.IndexByte(args.Command, 0); i >= 0 {
		// bash cannot receive a NUL in its argument list; say so instead of exec's EINVAL.
		return tools.Result{}, fmt.Errorf("invalid command: contains a NUL byte at offset %d; a command cannot carry NUL (write it with printf '\\0' instead)", i)
	}
	if strings.TrimSpace(args.Description) == "" {
		return tools.Result{}, errors.New("invalid description: expected a non-empty string")
	}
	var timeout time.Duration
	var err error
	if args.TimeoutMs != nil {
		ms := *args.TimeoutMs
		if !(ms > 0) || math.IsInf(ms, 0) {
			b, _ := json.Marshal(ms)
			return tools.Result{}, fmt.Errorf("invalid timeoutMs: expected a positive number, got %s", b)
		}
		timeout = millis(ms)
	}
	s.remember(call.Agent)
	// The request is built from named fields only: nothing else the model sent can reach the
	// executor (no Env, no Stdin, no StdoutMaxBytes).
	req := bash.Request{Command: args.Command, Workdir: resolveWorkdir(call.Agent, args.Workdir), Timeout: timeout, Env: sessionEnv(call.Agent)}
	if req.Sandbox, err = s.unsandboxed(ctx, call, args); err != nil {
		return tools.Result{}, err
	}
	if args.RunInBackground {
		req.Timeout = 0
		req.Owner = ownerOf(call)
		spec, err := s.ex.Resolve(req)
		if err != nil {
			return tools.Result{}, err
		}
		task, err := s.ex.Start(spec)
		if err != nil {
			return tools.Result{}, infraError(err)
		}
		s.setDescription(task.ID(), args.Description)
		return withFacts("started background task "+string(task.ID()), RunFacts{TaskID: string(task.ID())})
	}
	if report := tools.ProgressFrom(ctx); report != nil {
		// A foreground command's output so far, for a client that shows the call working; the
		// line is sanitized like the result.
		req.Progress = func(p bash.Progress) { report(tools.Progress{Bytes: p.Bytes, Message: termtext.String(p.LastLine)}) }
	}
	spec, err := s.ex.Resolve(req)
	if err != nil {
		return tools.Result{}, err
	}
	var res bash.RunResult
	res, err = s.ex.Run(ctx, spec)
	if err != nil {
		if errors.Is(err, bash.ErrAbortedBeforeSpawn) {
			return tools.Result{}, &tools.Error{Code: tools.CodeAbortedBeforeDispatch, Message: "tool call aborted before the command started", Err: err}
		}
		return tools.Result{}, infraError(err)
	}
	if res.Aborted {
		return tools.Result{}, &tools.Error{Code: tools.CodeAborted, Message: "tool call aborted", Err: context.Cause(ctx)}
	}
	facts := runFacts(res)
	return withFacts(renderRun(res, facts), facts)
}

// millis converts a positive number of milliseconds to a duration, rounding up to a whole
// millisecond (so a tiny positive value never becomes zero, the executor's "default") and
// saturating instead of overflowing (the executor caps it anyway).
func millis(ms float64) time.Duration {
	ms = math.Ceil(ms)
	if ms >= float64(math.MaxInt64/int64(time.Millisecond)) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ms) * time.Millisecond
}

// sessionEnv returns the session facts every command of agent sees (envpolicy.SessionFacts with
// DSH_SHELL=oneshot, the agent's session id and its directory as DSH_HOME).
func sessionEnv(agent *tools.Agent) map[string]string {
	if agent == nil {
		return envpolicy.SessionFacts("oneshot", "", "")
	}
	return envpolicy.SessionFacts("oneshot", agent.Session, agent.Dir)
}

// resolveWorkdir applies the session's working directory: an absolute workdir wins, a relative
// one is joined to the session's directory, none means the session's directory; without a
// session directory the workdir is passed as given (empty: the executor's default).
func resolveWorkdir(agent *tools.Agent, workdir string) string {
	dir := ""
	if agent != nil {
		dir = agent.Dir
	}
	switch {
	case workdir == "":
		return dir
	case filepath.IsAbs(workdir) || dir == "":
		return workdir
	}
	return filepath.Join(dir, workdir)
}

// infraError attaches an errno-style code to an executor failure the model should recognise
// (a missing workdir is ENOENT).
func infraError(err error) error {
	code := ""
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		code = "ENOTDIR"
	case errors.Is(err, fs.ErrNotExist):
		code = "ENOENT"
	case errors.Is(err, fs.ErrPermission):
		code = "EACCES"
	case errors.Is(err, bash.ErrClosed):
		code = "EXECUTOR_CLOSED"
	}
	if code == "" {
		return err
	}
	return &tools.Error{Code: code, Message: err.Error(), Err: err}
}

// presentBashCall shows a foreground call as a terminal card and a background call as an
// execute card titled with the description.
func presentBashCall(args BashArgs) (tools.CallView, bool) {
	if strings.TrimSpace(args.Command) == "" || strings.TrimSpace(args.Description) == "" {
		return tools.CallView{}, false
	}
	if args.RunInBackground {
		return tools.CallView{Title: args.Description, Kind: tools.KindExecute, RawInput: args.Command}, true
	}
	return tools.CallView{Terminal: &tools.TerminalCall{Command: args.Command, Description: args.Description, Cwd: args.Workdir}}, true
}

// presentBashResult shows a foreground result in the terminal card, with the exit status or
// signal taken from the result's facts (never from its text, which a command can forge), and any
// other result (background start, error) as a fenced console block. A result without facts or
// with more than one text block gets no presentation.
func presentBashResult(args BashArgs, res tools.Result) (tools.ResultView, bool) {
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		return tools.ResultView{}, false
	}
	text := res.Content[0].Text
	if args.RunInBackground || res.IsError {
		return tools.ResultView{Content: []tools.Content{tools.ConsoleBlock(text)}}, true
	}
	var facts RunFacts
	if !factsIn(res, &facts) {
		return tools.ResultView{}, false
	}
	return tools.ResultView{Terminal: &tools.TerminalResult{
		Output:   bashtext.ParseExitStatus(text).Body,
		ExitCode: facts.ExitCode,
		Signal:   facts.Signal,
		TimedOut: facts.TimedOut,
	}}, true
}
