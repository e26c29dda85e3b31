package tools

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Content is one block of a tool result or of a presentation. Type is "text" for the only
// block kind the tools in this repository produce; Text holds the text. Other kinds (images,
// for instance) may be carried by tools registered from elsewhere; presentation mappers drop
// what they cannot show.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// TextContent returns a text block holding text.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// Result is the outcome of one tool call as the model and the session log see it.
//
// CallID echoes the [Call] it answers (the [Registry] fills it in). Content is what the model
// reads. IsError marks a failed call: invalid arguments, an unknown tool, a tool error or
// panic, a veto by a middleware. Code is the machine-readable error code of a failed call
// when the error carried one (see [Coded]); it is empty otherwise. Err is the error that
// produced a failed result, for the harness's own error handling; it is not serialised, so a
// result read back from a log has Code but no Err.
//
// Structured, when set, holds the result's facts as one JSON object (the exit code, a timeout,
// the spill files of a command run), described by the tool's [Tool].OutputSchema. The text in
// Content is rendered from the same facts; presenters and programs read the facts and never
// parse the text (an MCP server sends them as structuredContent). Build it with [Structured].
type Result struct {
	CallID     string          `json:"callId"`
	Content    []Content       `json:"content"`
	Structured json.RawMessage `json:"structured,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	Code       string          `json:"code,omitempty"`
	Err        error           `json:"-"`
}

// Structured returns r with facts, marshalled as JSON, as its [Result].Structured. facts must
// marshal to a JSON object; anything else (or a marshalling error) is returned as an error and r
// is unchanged.
func Structured(r Result, facts any) (Result, error) {
	b, err := json.Marshal(facts)
	if err != nil {
		return r, fmt.Errorf("tools: structured result: %w", err)
	}
	if len(b) == 0 || b[0] != '{' {
		return r, fmt.Errorf("tools: structured result: %T is not a JSON object", facts)
	}
	r.Structured = b
	return r, nil
}

// Text returns a successful result whose content is one text block holding text.
func Text(text string) Result { return Result{Content: []Content{TextContent(text)}} }

// Text returns the concatenation of the result's text blocks, the way a model reads them.
func (r Result) Text() string {
	if len(r.Content) == 1 && r.Content[0].Type == "text" {
		return r.Content[0].Text
	}
	var s string
	for _, c := range r.Content {
		if c.Type == "text" {
			s += c.Text
		}
	}
	return s
}

// ErrorResult returns the failed result that stands for err: one text block
// "Error: " + err.Error(), IsError set, Err set to err, and Code set when err (or an error it
// wraps) implements [Coded]. A nil err is reported as "Error: unknown error".
func ErrorResult(err error) Result {
	msg := "unknown error"
	if err != nil {
		msg = err.Error()
	}
	r := Result{Content: []Content{TextContent("Error: " + msg)}, IsError: true, Err: err}
	var c Coded
	if errors.As(err, &c) {
		r.Code = c.ErrorCode()
	}
	return r
}

// Coded is implemented by errors that carry a stable machine-readable code. ErrorCode returns
// the code, for example [CodeInvalidArgs]. [ErrorResult] copies the code of the first error in
// the chain that implements Coded into [Result].Code.
type Coded interface {
	error
	ErrorCode() string
}

// Error codes set by this package. Tools may use their own codes through [Error] or any error
// implementing [Coded].
const (
	// CodeInvalidArgs marks arguments that do not match the tool's schema.
	CodeInvalidArgs = "INVALID_ARGS"
	// CodeUnknownTool marks a call to a name that is not registered.
	CodeUnknownTool = "UNKNOWN_TOOL"
	// CodePanic marks a tool or middleware that panicked.
	CodePanic = "TOOL_PANIC"
	// CodeAborted marks a call whose context ended while the tool was running.
	CodeAborted = "ABORTED"
	// CodeAbortedBeforeDispatch marks a call whose context had ended before the tool ran.
	CodeAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
	// CodeDenied marks a call refused by a middleware (a permission policy, for instance).
	CodeDenied = "DENIED"
)

// Error is the harness error type: a message for the model and a stable code for the harness.
// Code is one of the Code* constants or a tool's own; Message is the text after "Error: ";
// Err, when set, is the underlying cause (reachable with errors.Is and errors.As).
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// ErrorCode returns the code.
func (e *Error) ErrorCode() string { return e.Code }

// Unwrap returns the cause, or nil.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an [*Error] with code and a message formatted from format and args as
// fmt.Errorf does (a %w verb sets the cause).
func Errorf(code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// ArgsError reports arguments that violate a tool's schema. Violations lists every problem
// found, each naming its path (for example `missing required property "config.host"` or
// `"tags[1]" must be a string`), in schema-walk order. Its message is
// "invalid arguments: " followed by the violations joined with "; ", and its code is
// [CodeInvalidArgs].
type ArgsError struct {
	Violations []string
}

// Error returns "invalid arguments: " and the violations joined with "; ".
func (e *ArgsError) Error() string {
	s := "invalid arguments: "
	for i, v := range e.Violations {
		if i > 0 {
			s += "; "
		}
		s += v
	}
	return s
}

// ErrorCode returns [CodeInvalidArgs].
func (e *ArgsError) ErrorCode() string { return CodeInvalidArgs }

// NotFoundError reports a call to a tool name that is not registered. Name is the name the
// caller asked for. Its message is `unknown tool "<name>"` and its code [CodeUnknownTool].
type NotFoundError struct {
	Name string
}

// Error returns `unknown tool "<name>"`.
func (e *NotFoundError) Error() string { return fmt.Sprintf("unknown tool %q", e.Name) }

// ErrorCode returns [CodeUnknownTool].
func (e *NotFoundError) ErrorCode() string { return CodeUnknownTool }

// PanicError reports a panic inside a tool or middleware. Tool is the tool name, Value the
// recovered value and Stack the goroutine stack at the panic (for logs, never shown to the
// model). Its code is [CodePanic].
type PanicError struct {
	Tool  string
	Value any
	Stack []byte
}

// Error returns `tool "<name>" panicked: <value>`.
func (e *PanicError) Error() string { return fmt.Sprintf("tool %q panicked: %v", e.Tool, e.Value) }

// ErrorCode returns [CodePanic].
func (e *PanicError) ErrorCode() string { return CodePanic }
