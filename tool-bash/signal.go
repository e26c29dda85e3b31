package toolbash

import (
	"context"
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

// KillArgs are the arguments of bash_kill.
type KillArgs struct {
	TaskID string `json:"task_id" jsonschema:"Task id returned by the bash tool."`
	Signal string `json:"signal,omitempty" jsonschema:"Optional: send only this signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGKILL) instead of SIGTERM then SIGKILL."`
}

// killOrSignal is the bash_kill tool's body: without a signal, today's kill; with one, that
// signal alone, through the executor's bash.Interactive ability. Ownership is checked as for
// bash_output.
func (s *Set) killOrSignal(ctx context.Context, call tools.Call, args KillArgs) (tools.Result, error) {
	if args.Signal == "" {
		return s.killTask(ctx, call, TaskArgs{TaskID: args.TaskID})
	}
	if err := s.checkTask(call, args.TaskID); err != nil {
		return tools.Result{}, err
	}
	sig := bash.Signal(args.Signal)
	if !sig.Valid() {
		names := make([]string, len(bash.Signals))
		for i, s := range bash.Signals {
			names[i] = string(s)
		}
		return tools.Result{}, fmt.Errorf("invalid signal %q: want one of %s", args.Signal, strings.Join(names, ", "))
	}
	in, err := bash.InteractiveOf(s.ex)
	if err != nil {
		return tools.Result{}, fmt.Errorf("cannot send %s: %w", sig, err)
	}
	id := bash.TaskID(args.TaskID)
	sent, err := in.Signal(id, sig)
	if err != nil {
		return tools.Result{}, err
	}
	out := TaskFacts{TaskID: args.TaskID}
	if task, ok := s.ex.Get(id); ok {
		f := taskFactsOf(task.ID(), factsOf(task))
		out.Status, out.ExitCode, out.Signal = f.Status, f.ExitCode, f.Signal
	}
	s.tell(id, out.Status)
	if !sent {
		return withFacts("task "+args.TaskID+" had already finished", out)
	}
	return withFacts("sent "+string(sig)+" to background task "+args.TaskID, out)
}
