package toolbash

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

// tasksDescription is what the model reads about the bash_tasks tool.
const tasksDescription = "List this session's background bash tasks, newest first: id, description, command, status " +
	"(running, exit code, killed), start time and how much output bash_output has not returned yet. " +
	"Use it to find a task id again."

// MaxListedTasks is the most tasks one bash_tasks result lists; older ones are counted.
const MaxListedTasks = 50

// TasksArgs are the arguments of bash_tasks.
type TasksArgs struct {
	Limit *int `json:"limit,omitempty" jsonschema:"How many of the newest tasks to list, 1 to 50 (default 50)."`
}

// TaskListFacts are the facts of a bash_tasks result.
type TaskListFacts struct {
	Tasks []ListedTask `json:"tasks" jsonschema:"The session's tasks, newest first."`
	Older int          `json:"older,omitempty" jsonschema:"Older tasks of the session that are not listed."`
}

// ListedTask is one task of a bash_tasks result.
type ListedTask struct {
	TaskID      string `json:"taskId" jsonschema:"The task id."`
	Description string `json:"description,omitempty" jsonschema:"The description the task was started with."`
	Command     string `json:"command" jsonschema:"The command the task runs."`
	Status      string `json:"status" jsonschema:"running, completed or killed."`
	ExitCode    *int   `json:"exitCode,omitempty" jsonschema:"The exit status of a completed task."`
	Signal      string `json:"signal,omitempty" jsonschema:"The signal that ended a killed task, when one did."`
	Started     string `json:"started" jsonschema:"When the task started (RFC 3339, UTC)."`
	UnreadBytes *int64 `json:"unreadBytes,omitempty" jsonschema:"Output bytes bash_output has not returned yet, when the executor can tell."`
}

func (s *Set) newTasksTool() (*tools.Tool, error) {
	return tools.New("bash_tasks", tasksDescription, guard(s, s.listTasks),
		tools.WithTitle[TasksArgs]("List background bash tasks"),
		tools.WithAnnotations[TasksArgs](tools.Annotations{ReadOnlyHint: true, IdempotentHint: true}),
		tools.WithOutput[TasksArgs, TaskListFacts](),
		tools.WithCallView(func(TasksArgs) (tools.CallView, bool) {
			return tools.CallView{Title: "List background tasks", Kind: tools.KindRead}, true
		}),
		tools.WithResultView(presentTasks))
}

// listTasks is the bash_tasks tool's body: the caller's tasks only (those started without an
// owner when the caller has none), newest first.
func (s *Set) listTasks(ctx context.Context, call tools.Call, args TasksArgs) (tools.Result, error) {
	limit := MaxListedTasks
	if args.Limit != nil {
		if *args.Limit < 1 || *args.Limit > MaxListedTasks {
			return tools.Result{}, fmt.Errorf("invalid limit: expected 1 to %d, got %d", MaxListedTasks, *args.Limit)
		}
		limit = *args.Limit
	}
	caller := ownerOf(call)
	var mine []*bash.Task
	for _, t := range s.ex.List() {
		if owner, _ := s.ex.OwnerOf(t.ID()); owner == caller {
			mine = append(mine, t)
		}
	}
	slices.Reverse(mine) // List is in start order
	// No tasks is [], never null: the schema says array, and validating clients refuse null.
	facts := TaskListFacts{Tasks: []ListedTask{}}
	if len(mine) > limit {
		facts.Older = len(mine) - limit
		mine = mine[:limit]
	}
	unread, _ := s.ex.(bash.UnreadCounter)
	for _, t := range mine {
		f := taskFactsOf(t.ID(), factsOf(t))
		e := ListedTask{TaskID: f.TaskID, Description: s.description(t.ID()), Command: t.Command(),
			Status: f.Status, ExitCode: f.ExitCode, Signal: f.Signal, Started: t.Started().UTC().Format(time.RFC3339)}
		if unread != nil {
			if n, err := unread.Unread(t.ID()); err == nil {
				e.UnreadBytes = &n
			}
		}
		facts.Tasks = append(facts.Tasks, e)
	}
	return withFacts(renderTasks(facts), facts)
}

// renderTasks renders the task list the model reads: one header line, then per task a line with
// the id, status, start and unread output, and an indented line with the description and the
// command (its first line, at most 200 characters).
func renderTasks(f TaskListFacts) string {
	if len(f.Tasks) == 0 && f.Older == 0 {
		return "No background tasks in this session."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d background task(s) of this session, newest first:", len(f.Tasks)+f.Older)
	for _, t := range f.Tasks {
		fmt.Fprintf(&b, "\n%s  [status: %s]  started %s", oneLine(t.TaskID, 80), oneLine(listedStatus(t), 80), oneLine(t.Started, 40))
		if t.UnreadBytes != nil {
			fmt.Fprintf(&b, "  unread output: %d bytes", *t.UnreadBytes)
		}
		b.WriteString("\n  ")
		if t.Description != "" {
			b.WriteString(oneLine(t.Description, 200) + ": ")
		}
		b.WriteString(oneLine(t.Command, 200))
	}
	if f.Older > 0 {
		fmt.Fprintf(&b, "\n(%d older task(s) not listed)", f.Older)
	}
	return b.String()
}

// listedStatus renders a task's state the way statusLine does, without the brackets.
func listedStatus(t ListedTask) string {
	switch {
	case t.Status == string(bash.TaskRunning):
		return "running"
	case t.Status == string(bash.TaskKilled) && t.Signal != "":
		return "killed by " + t.Signal
	case t.Status == string(bash.TaskKilled):
		return "killed"
	case t.ExitCode != nil:
		return "completed, exit code: " + strconv.Itoa(*t.ExitCode)
	}
	return t.Status
}

// oneLine returns the first line of s, cut at max characters, with "…" when anything was left
// out.
func oneLine(s string, max int) string {
	line, rest, cut := strings.Cut(s, "\n")
	if utf8.RuneCountInString(line) > max {
		line, cut = string([]rune(line)[:max]), true
	}
	if cut || strings.TrimSpace(rest) != "" {
		return line + " …"
	}
	return line
}

// presentTasks shows a task list as a Markdown table built from the result's facts.
func presentTasks(_ TasksArgs, res tools.Result) (tools.ResultView, bool) {
	var f TaskListFacts
	if res.IsError || !factsIn(res, &f) {
		return tools.ResultView{}, false
	}
	if len(f.Tasks) == 0 {
		return tools.ResultView{Title: "No background tasks", Content: []tools.Content{}}, true
	}
	var b strings.Builder
	b.WriteString("| task | status | started | description |\n|---|---|---|---|\n")
	for _, t := range f.Tasks {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(t.TaskID), cell(listedStatus(t)), cell(t.Started), cell(oneLine(t.Description, 80)))
	}
	if f.Older > 0 {
		fmt.Fprintf(&b, "\n%d older task(s) not listed.\n", f.Older)
	}
	return tools.ResultView{Title: fmt.Sprintf("%d background task(s)", len(f.Tasks)+f.Older), Content: []tools.Content{tools.TextContent(b.String())}}, true
}

// cell escapes text for one Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// remember the description of a task started by this Set, for bash_tasks.
func (s *Set) setDescription(id bash.TaskID, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.descriptions[id] = description
}

func (s *Set) description(id bash.TaskID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.descriptions[id]
}
