package tools

import (
	"strings"
)

// Kind is the category of a tool call, which user interfaces use to pick an icon and a
// rendering. The zero value means [KindOther].
type Kind string

// The tool call kinds.
const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindDelete  Kind = "delete"
	KindMove    Kind = "move"
	KindSearch  Kind = "search"
	KindExecute Kind = "execute"
	KindFetch   Kind = "fetch"
	KindOther   Kind = "other"
)

// Valid reports whether k is one of the kind constants (the zero value is not).
func (k Kind) Valid() bool {
	switch k {
	case KindRead, KindEdit, KindDelete, KindMove, KindSearch, KindExecute, KindFetch, KindOther:
		return true
	}
	return false
}

// CallView is how a user interface shows a tool call before its result arrives.
//
// A CallView is one of two cards. When Terminal is nil it is the generic card: Title is the
// line shown for the call (required), Kind its category (zero means [KindOther]), RawInput the
// salient input (a string shown as is, any other JSON value shown as pretty JSON; nil means
// none) and Content optional blocks shown under the title. When Terminal is non-nil it is the
// terminal card for a command run: the other fields are ignored and a mapper derives the title
// (the command) and the kind ([KindExecute]) from it.
//
// Views are for people only: nothing in a view ever reaches the model.
type CallView struct {
	Title    string
	Kind     Kind
	RawInput any
	Content  []Content
	Terminal *TerminalCall
}

// TerminalCall is the terminal card of a command run. Command is the command line (the card's
// title); Description is the human summary, if any; Cwd is the working directory as the call
// gave it: absolute as is, relative to the session's directory, empty for the session's
// directory.
type TerminalCall struct {
	Command     string
	Description string
	Cwd         string
}

// ResultView is how a user interface shows a tool result in place of the raw content.
//
// When Terminal is nil it is the generic card: Title, when non-empty, replaces the call's
// title, and Content, when non-nil, replaces the raw result content (nil keeps the raw
// content). When Terminal is non-nil it is the terminal result of a call presented with a
// [TerminalCall]; a mapper ignores it for any other call.
type ResultView struct {
	Title    string
	Content  []Content
	Terminal *TerminalResult
}

// TerminalResult is the output of a command run for a terminal card. Output is the text
// shown in the terminal. ExitCode is the exit status when the command exited; Signal is the
// signal name (for example "SIGTERM") when a signal ended it. At most one of them is set; both
// unset means the outcome is unknown. TimedOut reports that the command was stopped at its
// timeout (however it then ended). They are the tool's facts, never read back from the text.
type TerminalResult struct {
	Output   string
	ExitCode *int
	Signal   string
	TimedOut bool
}

// ConsoleBlock returns text as a Markdown code block tagged console, for user interfaces that
// render Markdown: trailing newlines are removed and the fence is made longer than any run of
// backticks inside text, so the output cannot close it early.
func ConsoleBlock(text string) Content {
	text = strings.TrimRight(text, "\n")
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return TextContent(fence + "console\n" + text + "\n" + fence)
}
