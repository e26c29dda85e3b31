package toolbash

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/termtext"
	"github.com/dsh-go/dsh/tools"
)

// outputDescription is what the model reads about the bash_output tool.
const outputDescription = "Read new output from a background bash task started with `bash` + `run_in_background`. " +
	"Returns only output produced since the previous bash_output call, plus the task status. " +
	"Tasks keep running while you do other work; poll again later for more output."

// killDescription is what the model reads about the bash_kill tool.
const killDescription = "Kill a running background bash task (SIGTERM, then SIGKILL) by task id. " +
	"With `signal` (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 or SIGKILL) send just that signal to the task's process group, " +
	"e.g. SIGINT to stop a dev server gracefully; the task is then not marked killed unless it ends."

// TaskArgs are the arguments of bash_output and bash_kill.
type TaskArgs struct {
	TaskID string `json:"task_id" jsonschema:"Task id returned by the bash tool."`
}

func (s *Set) newOutputTool() (*tools.Tool, error) {
	return tools.New("bash_output", outputDescription, guard(s, s.readOutput),
		tools.WithOutput[TaskArgs, TaskFacts](),
		tools.WithTitle[TaskArgs]("Read a background bash task's output"),
		// Not idempotent: each read consumes the output it returns.
		tools.WithAnnotations[TaskArgs](tools.Annotations{ReadOnlyHint: true}),
		tools.WithCallView(func(a TaskArgs) (tools.CallView, bool) {
			if a.TaskID == "" {
				return tools.CallView{}, false
			}
			return tools.CallView{Title: "Read output from background task " + a.TaskID, Kind: tools.KindExecute, RawInput: a.TaskID}, true
		}))
}

func (s *Set) newKillTool() (*tools.Tool, error) {
	return tools.New("bash_kill", killDescription, guard(s, s.killOrSignal),
		tools.WithOutput[KillArgs, TaskFacts](),
		tools.WithTitle[KillArgs]("Kill a background bash task"),
		// Killing a task that has ended changes nothing.
		tools.WithAnnotations[KillArgs](tools.Annotations{DestructiveHint: true, IdempotentHint: true}),
		tools.WithCallView(func(a KillArgs) (tools.CallView, bool) {
			if a.TaskID == "" {
				return tools.CallView{}, false
			}
			return tools.CallView{Title: "Kill background task " + a.TaskID, Kind: tools.KindExecute, RawInput: a.TaskID}, true
		}))
}

// checkTask validates the task id and the caller's right to it. A task with a recorded owner
// belongs to that owner only; a task without one is open to every caller. An unknown id passes
// here and is reported by the executor.
func (s *Set) checkTask(call tools.Call, id string) error {
	if id == "" {
		b, _ := json.Marshal(id)
		return fmt.Errorf("invalid task_id: expected a string, got %s", b)
	}
	s.remember(call.Agent)
	owner, owned := s.ex.OwnerOf(bash.TaskID(id))
	if !owned {
		return nil
	}
	if caller := ownerOf(call); caller == "" || caller != owner {
		return fmt.Errorf("task %s belongs to another session", id)
	}
	return nil
}

// readOutput is the bash_output tool's body.
func (s *Set) readOutput(ctx context.Context, call tools.Call, args TaskArgs) (tools.Result, error) {
	if err := s.checkTask(call, args.TaskID); err != nil {
		return tools.Result{}, err
	}
	id := bash.TaskID(args.TaskID)
	// The status is taken before the read: a task seen finished has delivered all its output in
	// this read, while one that finishes during the read still reads as running, so the model
	// polls again and gets the rest.
	var facts taskFacts
	task, ok := s.ex.Get(id)
	if ok {
		facts = factsOf(task)
	}
	read, err := s.ex.ReadOutput(id)
	if err != nil {
		return tools.Result{}, err
	}
	if !ok && read.Task != nil {
		facts = factsOf(read.Task)
	}
	out := taskFactsOf(id, facts)
	out.Output = termtext.String(read.Delta)
	out.OmittedBytes, out.StdoutSpill, out.StderrSpill = read.OmittedBytes, read.StdoutSpill.Path, read.StderrSpill.Path
	s.tell(id, out.Status)
	return withFacts(renderRead(read, facts, out.Output), out)
}

// killSettle bounds how long bash_kill waits, once Kill has returned, for the task's end (its
// output closed, its exit facts final): moments when its processes are gone.
const killSettle = 2 * time.Second

// awaitEnd waits until task is done, at most d or until ctx is done, and reports whether it is.
func awaitEnd(ctx context.Context, task *bash.Task, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-task.Done():
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return done(task)
}

// killTask is the bash_kill tool's body.
func (s *Set) killTask(ctx context.Context, call tools.Call, args TaskArgs) (tools.Result, error) {
	if err := s.checkTask(call, args.TaskID); err != nil {
		return tools.Result{}, err
	}
	id := bash.TaskID(args.TaskID)
	killed, err := s.ex.Kill(id) // returns once the tree is gone or SIGKILL was sent
	if err != nil {
		return tools.Result{}, err
	}
	out := TaskFacts{TaskID: args.TaskID, Killed: killed}
	ended := false
	if task, ok := s.ex.Get(id); ok {
		ended = killed && awaitEnd(ctx, task, killSettle)
		f := factsOf(task)
		tf := taskFactsOf(task.ID(), f)
		out.Status, out.ExitCode, out.Signal = tf.Status, tf.ExitCode, tf.Signal
		if ended {
			s.tell(id, out.Status)
			return withFacts("killed background task "+args.TaskID+" "+statusLine(f), out)
		}
	}
	if killed {
		return withFacts("killed background task "+args.TaskID+"; it has not ended yet: bash_output shows when it has", out)
	}
	s.tell(id, out.Status)
	return withFacts("task "+args.TaskID+" had already finished", out)
}

// done reports whether task has ended, without waiting.
func done(task *bash.Task) bool {
	select {
	case <-task.Done():
		return true
	default:
		return false
	}
}
