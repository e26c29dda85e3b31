package toolbash

import (
	"encoding/json"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

// The facts of each tool's result, carried in tools.Result.Structured (an MCP client reads them
// as structuredContent, described by the tool's output schema). They carry the output as the text
// shows it, so a client that shows only one of the two blocks misses nothing. The model-facing
// text is rendered from the same facts; cards and programs read these and never parse the text,
// so a command that prints "[killed by signal: SIGKILL]" and exits 0 fools nobody.

// RunFacts are the facts of a bash result: a foreground run, or a background start (TaskID).
type RunFacts struct {
	ExitCode  *int          `json:"exitCode,omitempty" jsonschema:"The command's exit status; absent when a signal ended it or it runs in the background."`
	Signal    string        `json:"signal,omitempty" jsonschema:"The signal that ended the command, such as SIGKILL."`
	TimedOut  bool          `json:"timedOut,omitempty" jsonschema:"The executor stopped the command at its timeout."`
	TimeoutMs int64         `json:"timeoutMs,omitempty" jsonschema:"The timeout that applied, in milliseconds."`
	ProcLimit bool          `json:"processLimit,omitempty" jsonschema:"The executor stopped the command's processes for reaching the process limit (a fork bomb)."`
	Stdout    *StreamFacts  `json:"stdout,omitempty" jsonschema:"What the command wrote to stdout."`
	Stderr    *StreamFacts  `json:"stderr,omitempty" jsonschema:"What the command wrote to stderr."`
	TaskID    string        `json:"taskId,omitempty" jsonschema:"The background task started by run_in_background."`
	Sandbox   *SandboxFacts `json:"sandbox,omitempty" jsonschema:"The sandbox the command ran in, when one applied."`
}

// SandboxFacts are the facts of the sandbox a command ran in.
type SandboxFacts struct {
	Mode       string   `json:"mode" jsonschema:"read-only or workspace-write."`
	Network    string   `json:"network" jsonschema:"on or off."`
	Unenforced []string `json:"unenforced,omitempty" jsonschema:"What this machine could not enforce (best effort)."`
	Denial     string   `json:"denial,omitempty" jsonschema:"What the sandbox may have denied when the command failed."`
}

// StreamFacts are the facts of one collected stream.
type StreamFacts struct {
	Text         string `json:"text" jsonschema:"The stream as the text block shows it: sanitized, and when bytes were omitted its head, the truncation line and its tail."`
	Bytes        int64  `json:"bytes" jsonschema:"Bytes the command wrote to the stream."`
	OmittedBytes int64  `json:"omittedBytes,omitempty" jsonschema:"Bytes left out between the head and the tail of the text."`
	SpillPath    string `json:"spillPath,omitempty" jsonschema:"The file that holds the stream from its first byte."`
	SpillBytes   int64  `json:"spillBytes,omitempty" jsonschema:"Bytes the spill file holds."`
	SpillPartial bool   `json:"spillPartial,omitempty" jsonschema:"The spill file holds only the first spillBytes bytes of the stream."`
}

// TaskFacts are the facts of a bash_output or bash_kill result: the task's state, taken before
// the read, and what the read lost.
type TaskFacts struct {
	TaskID       string `json:"taskId" jsonschema:"The task id."`
	Status       string `json:"status" jsonschema:"running, completed or killed."`
	Output       string `json:"output,omitempty" jsonschema:"bash_output: the new output as the text block shows it (sanitized; absent when there is none)."`
	ExitCode     *int   `json:"exitCode,omitempty" jsonschema:"The exit status of a completed task."`
	Signal       string `json:"signal,omitempty" jsonschema:"The signal that ended a killed task, when one did."`
	Killed       bool   `json:"killed,omitempty" jsonschema:"bash_kill stopped a running task (false: it had already ended)."`
	OmittedBytes int64  `json:"omittedBytes,omitempty" jsonschema:"Output bytes dropped from memory before this read could deliver them."`
	StdoutSpill  string `json:"stdoutSpill,omitempty" jsonschema:"The file that holds the task's stdout."`
	StderrSpill  string `json:"stderrSpill,omitempty" jsonschema:"The file that holds the task's stderr."`
}

func streamFacts(o bash.Output) *StreamFacts {
	f := &StreamFacts{Text: renderStream(o), Bytes: o.TotalBytes, OmittedBytes: o.OmittedBytes}
	if o.Truncated() && o.Spill.Path != "" {
		f.SpillPath, f.SpillBytes, f.SpillPartial = o.Spill.Path, o.Spill.Bytes, o.Spill.Partial
	}
	return f
}

func runFacts(res bash.RunResult) RunFacts {
	var sandbox *SandboxFacts
	if sb := res.Sandbox; sb != nil {
		network := sb.Policy.Network
		if network == "" {
			network = bash.NetworkOff // the zero mode, stated: the facts say on or off
		}
		sandbox = &SandboxFacts{Mode: string(sb.Policy.Mode), Network: string(network), Unenforced: sb.Unenforced, Denial: sb.Denial}
	}
	return RunFacts{
		Sandbox:   sandbox,
		ExitCode:  res.ExitCode,
		Signal:    res.Signal,
		TimedOut:  res.TimedOut,
		TimeoutMs: res.Timeout.Milliseconds(),
		ProcLimit: res.ProcessLimit,
		Stdout:    streamFacts(res.Stdout),
		Stderr:    streamFacts(res.Stderr),
	}
}

func taskFactsOf(id bash.TaskID, f taskFacts) TaskFacts {
	out := TaskFacts{TaskID: string(id), Status: string(f.status), Signal: f.signal}
	if f.status == bash.TaskCompleted {
		code := f.code
		out.ExitCode = &code
	}
	return out
}

// withFacts returns the text result with facts as its structured content.
func withFacts(text string, facts any) (tools.Result, error) {
	return tools.Structured(tools.Text(text), facts)
}

// factsIn decodes the structured facts of res into v, reporting false when there are none.
func factsIn(res tools.Result, v any) bool {
	return len(res.Structured) > 0 && json.Unmarshal(res.Structured, v) == nil
}
