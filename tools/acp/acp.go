// Package acp maps tool calls and results to Agent Client Protocol (ACP) session updates: the
// `tool_call` update that opens a card in an editor and the `tool_call_update` that completes
// it, using the tools' presenters (see github.com/dsh-go/dsh/tools CallView and ResultView).
//
// A [Mapper] serves one ACP session. It remembers each call until its result is presented,
// because a result carries no tool name or arguments. Feeding a fresh Mapper the calls and
// results of a logged session, in log order, yields exactly the updates the live session sent,
// which is how a `session/load` replay rebuilds the same cards.
package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/tools"
)

// Update is the `update` object of an ACP `session/update` notification for a tool call.
// SessionUpdate is "tool_call" or "tool_call_update"; the other fields follow the ACP schema
// (ToolCall and ToolCallUpdate) and are omitted when empty. Content is omitted when nil but
// sent when empty: in an update, an absent content leaves the card's content as it was, an
// empty one clears it.
type Update struct {
	SessionUpdate string            `json:"sessionUpdate"`
	ToolCallID    string            `json:"toolCallId"`
	Title         string            `json:"title,omitempty"`
	Kind          tools.Kind        `json:"kind,omitempty"`
	Status        string            `json:"status,omitempty"`
	Content       []ToolCallContent `json:"content,omitzero"`
	RawInput      any               `json:"rawInput,omitzero"`
	Meta          map[string]any    `json:"_meta,omitempty"`
}

// Notification is the params object of a `session/update` notification: the session id and
// one update.
type Notification struct {
	SessionID string `json:"sessionId"`
	Update    Update `json:"update"`
}

// ToolCallContent is one entry of a tool call's content in ACP: Type "content" with a content
// block in Content, or Type "terminal" with the id of a terminal in TerminalID.
type ToolCallContent struct {
	Type       string        `json:"type"`
	Content    *ContentBlock `json:"content,omitempty"`
	TerminalID string        `json:"terminalId,omitempty"`
}

// ContentBlock is an ACP text content block.
type ContentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Statuses used in updates.
const (
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// Tools is where a [Mapper] finds tool definitions; *tools.Registry implements it.
type Tools interface {
	Lookup(name string) (*tools.Tool, bool)
}

// Options configure a [Mapper]. Dir is the session's working directory, used to resolve a
// terminal card's relative working directory. TerminalOutput reports whether the client
// advertised `clientCapabilities._meta.terminal_output: true` at initialize; only then are
// terminal cards sent as embedded terminals (`_meta.terminal_info`, `terminal_output`,
// `terminal_exit`), otherwise as execute cards with a fenced console block. Logger receives a
// line for every presenter panic that was contained; nil means slog.Default().
type Options struct {
	Dir            string
	TerminalOutput bool
	Logger         *slog.Logger
}

// Mapper turns the calls and results of one ACP session into session updates. Methods are safe
// for concurrent use, but updates must be applied in the order the session logged its events
// for a replay to match.
type Mapper struct {
	tools Tools
	opts  Options

	mu       sync.Mutex
	inflight map[string]inflight // call id → what its result needs; removed when presented
}

type inflight struct {
	name     string
	args     json.RawMessage
	terminal bool // the call was shown as a terminal card
}

// NewMapper returns a Mapper for one session that looks tools up in ts (nil means no tools are
// known and every card is generic) with options opts.
func NewMapper(ts Tools, opts Options) *Mapper {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Mapper{tools: ts, opts: opts, inflight: map[string]inflight{}}
}

// Call returns the `tool_call` update for a call with id callID to the tool name with the raw
// JSON arguments args, and remembers the call until [Mapper.Result] presents its result.
//
// With the tool's call presenter, the card shows the presented title, kind (default "other")
// and rawInput; a terminal card is an execute card titled with the command. Without a
// presenter (unknown tool, no presenter, "no presentation", or a presenter that panicked) the
// card is generic: the title is the tool name, the kind is guessed from the name, and rawInput
// is the parsed arguments (the raw string when they are not JSON, {} when empty).
func (m *Mapper) Call(callID, name string, args json.RawMessage) Update {
	u := Update{SessionUpdate: "tool_call", ToolCallID: callID, Status: StatusInProgress}
	view, ok := m.presentCall(name, args)
	entry := inflight{name: name, args: args}
	switch {
	case !ok:
		u.Title, u.Kind, u.RawInput = name, guessKind(name), parseArgs(args)
	case view.Terminal != nil:
		entry.terminal = true
		t := view.Terminal
		u.Title, u.Kind, u.RawInput = t.Command, tools.KindExecute, t.Command
		if t.Description != "" {
			u.Content = append(u.Content, textContent(t.Description))
		}
		if m.opts.TerminalOutput {
			u.Content = append(u.Content, ToolCallContent{Type: "terminal", TerminalID: callID})
			u.Meta = map[string]any{"terminal_info": map[string]any{"terminal_id": callID, "cwd": m.resolveDir(t.Cwd)}}
		}
	default:
		u.Title, u.Kind = view.Title, view.Kind
		if !u.Kind.Valid() {
			u.Kind = tools.KindOther
		}
		if u.Title == "" {
			u.Title = name
		}
		u.RawInput = view.RawInput
		u.Content = mapContent(view.Content)
	}
	m.mu.Lock()
	m.inflight[callID] = entry
	m.mu.Unlock()
	return u
}

// Result returns the `tool_call_update` that completes the card of res.CallID: status
// "completed", or "failed" when res.IsError. The call's entry is forgotten, so a second result
// for the same id, or a result whose call was never seen, is shown with its raw text content.
//
// With the tool's result presenter, a generic view replaces the title (when non-empty) and the
// content (when non-nil); a terminal view of a terminal call becomes `_meta.terminal_output` and
// `_meta.terminal_exit` (with the client capability) or a fenced console block (without); a
// terminal view of a call that was not a terminal card is ignored. Without the capability the
// console block is followed by a status line from the view's facts: "[timed out]", then
// "[killed by signal: SIG]" or "[exit code: N]" (non-zero only). Non-text blocks are dropped.
func (m *Mapper) Result(res tools.Result) Update {
	u := Update{SessionUpdate: "tool_call_update", ToolCallID: res.CallID, Status: StatusCompleted}
	if res.IsError {
		u.Status = StatusFailed
	}
	m.mu.Lock()
	entry, known := m.inflight[res.CallID]
	delete(m.inflight, res.CallID)
	m.mu.Unlock()

	raw := mapContent(res.Content)
	if raw == nil {
		raw = []ToolCallContent{}
	}
	u.Content = raw
	if !known {
		return u
	}
	view, ok := m.presentResult(entry, res)
	switch {
	case !ok:
	case view.Terminal != nil:
		if !entry.terminal {
			break // orphan terminal result: keep the raw content
		}
		if m.opts.TerminalOutput {
			u.Content = nil
			exit := map[string]any{"terminal_id": res.CallID, "exit_code": nil, "signal": nil}
			if view.Terminal.ExitCode != nil {
				exit["exit_code"] = *view.Terminal.ExitCode
			} else if view.Terminal.Signal != "" {
				exit["signal"] = view.Terminal.Signal
			}
			u.Meta = map[string]any{
				"terminal_output": map[string]any{"terminal_id": res.CallID, "data": view.Terminal.Output},
				"terminal_exit":   exit,
			}
		} else {
			// Without a terminal the outcome still shows: the output, then the status line.
			blocks := []tools.Content{tools.ConsoleBlock(view.Terminal.Output)}
			if status := statusLine(view.Terminal); status != "" {
				blocks = append(blocks, tools.TextContent(status))
			}
			u.Content = mapContent(blocks)
		}
		u.Title = view.Title
	default:
		u.Title = view.Title
		if view.Content != nil {
			u.Content = mapContent(view.Content)
			if u.Content == nil {
				u.Content = []ToolCallContent{}
			}
		}
	}
	return u
}

// Pending returns the number of calls whose result has not been presented yet.
func (m *Mapper) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.inflight)
}

func (m *Mapper) lookup(name string) *tools.Tool {
	if m.tools == nil {
		return nil
	}
	t, ok := m.tools.Lookup(name)
	if !ok {
		return nil
	}
	return t
}

// presentCall runs the tool's call presenter, containing a panic as "no presentation".
func (m *Mapper) presentCall(name string, args json.RawMessage) (view tools.CallView, ok bool) {
	t := m.lookup(name)
	if t == nil || t.PresentCall == nil {
		return tools.CallView{}, false
	}
	defer func() {
		if v := recover(); v != nil {
			m.opts.Logger.Warn("acp: call presenter panicked", "tool", name, "panic", fmt.Sprint(v))
			view, ok = tools.CallView{}, false
		}
	}()
	return t.PresentCall(args)
}

// presentResult runs the tool's result presenter, containing a panic as "no presentation".
func (m *Mapper) presentResult(entry inflight, res tools.Result) (view tools.ResultView, ok bool) {
	t := m.lookup(entry.name)
	if t == nil || t.PresentResult == nil {
		return tools.ResultView{}, false
	}
	defer func() {
		if v := recover(); v != nil {
			m.opts.Logger.Warn("acp: result presenter panicked", "tool", entry.name, "panic", fmt.Sprint(v))
			view, ok = tools.ResultView{}, false
		}
	}()
	return t.PresentResult(entry.args, res)
}

func (m *Mapper) resolveDir(dir string) string {
	switch {
	case dir == "":
		return m.opts.Dir
	case filepath.IsAbs(dir) || m.opts.Dir == "":
		return dir
	}
	return filepath.Join(m.opts.Dir, dir)
}

// parseArgs returns the arguments as a JSON value for rawInput: {} when empty, the raw string
// when they are not valid JSON.
func parseArgs(args json.RawMessage) any {
	if strings.TrimSpace(string(args)) == "" {
		return map[string]any{}
	}
	if !json.Valid(args) {
		return string(args)
	}
	return json.RawMessage(bytes.Clone(args))
}

// guessKind picks a kind for a tool without a presenter from its name.
func guessKind(name string) tools.Kind {
	switch {
	case name == "bash" || name == "bash_output" || name == "bash_kill":
		return tools.KindExecute
	case strings.HasPrefix(name, "read"):
		return tools.KindRead
	case name == "write" || strings.HasPrefix(name, "edit"):
		return tools.KindEdit
	}
	return tools.KindOther
}

func textContent(text string) ToolCallContent {
	return ToolCallContent{Type: "content", Content: &ContentBlock{Type: "text", Text: text}}
}

// mapContent keeps the text blocks of cs; it returns nil when there are none.
func mapContent(cs []tools.Content) []ToolCallContent {
	var out []ToolCallContent
	for _, c := range cs {
		if c.Type == "text" {
			out = append(out, textContent(c.Text))
		}
	}
	return out
}

// statusLine renders the outcome of a terminal result for a client without a terminal:
// "[timed out]" when it timed out, then "[killed by signal: SIG]" or "[exit code: N]" for a
// non-zero exit, one per line; "" for a plain success or an unknown outcome.
func statusLine(t *tools.TerminalResult) string {
	var lines []string
	if t.TimedOut {
		lines = append(lines, "[timed out]")
	}
	switch {
	case t.Signal != "":
		lines = append(lines, "[killed by signal: "+t.Signal+"]")
	case t.ExitCode != nil && *t.ExitCode != 0:
		lines = append(lines, "[exit code: "+strconv.Itoa(*t.ExitCode)+"]")
	}
	return strings.Join(lines, "\n")
}
