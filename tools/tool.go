package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is a tool definition as a [Registry] holds it.
//
// Name is what the model calls ([ValidName] rules). Title is a short human-readable name for
// user interfaces and tool lists ("Run a bash command"); empty means none, and the model never
// reads it. Description is what the model reads about the tool. Parameters is the JSON Schema
// of the argument object, exactly as it is shown to the model (and as an MCP server publishes
// it). OutputSchema, when set, is the JSON Schema of the facts every successful result carries
// in [Result].Structured (an MCP server publishes it as the tool's output schema). Annotations
// are the tool's behaviour hints for clients (see [Annotations]); nil states none. Execute runs a call; it receives the raw arguments in call.Args and returns the result
// content, or an error that the registry turns into a failed result. PresentCall and
// PresentResult, when non-nil, describe a call and its result for user interfaces; they must be
// pure functions of their inputs, because they also run on replayed session logs whose
// arguments may be malformed or old.
//
// Title and Annotations are set by the package that defines the tool, because it is the one
// that knows what the tool does; a harness maps them to its protocol without a table of its own.
//
// Build typed tools with [New], which fills every field from a Go argument type. A Tool built
// by hand (for instance to forward to an MCP server) is a "raw" tool: the harness shows its
// Parameters as given and does not validate its arguments.
type Tool struct {
	Name          string
	Title         string
	Description   string
	Parameters    json.RawMessage
	OutputSchema  json.RawMessage
	Annotations   *Annotations
	Execute       func(ctx context.Context, call Call) (Result, error)
	PresentCall   func(args json.RawMessage) (CallView, bool)
	PresentResult func(args json.RawMessage, result Result) (ResultView, bool)

	output outputCheck // a registry's own copy: OutputSchema resolved on first use
}

// Handler is the typed body of a tool built with [New]. It receives the call's context
// (cancelled when the caller gives up on the call), the call itself (for its id and agent) and
// the decoded arguments, which have already passed schema validation. It returns the result
// content, or an error which becomes the result "Error: " + err.Error(); a returned Result with
// IsError set is passed on as is.
type Handler[In any] func(ctx context.Context, call Call, args In) (Result, error)

// Option configures a tool built with [New] for argument type In.
type Option[In any] func(*options[In])

type options[In any] struct {
	schema        *jsonschema.Schema
	title         string
	annotations   *Annotations
	output        func() (*jsonschema.Schema, error)
	presentCall   func(In) (CallView, bool)
	presentResult func(In, Result) (ResultView, bool)
}

// WithSchema returns an option that makes [New] use schema instead of the one inferred from In.
// Use it to add what struct tags cannot say (an enum, a minimum), starting from [InferSchema].
// The schema must still describe values that decode into In.
func WithSchema[In any](schema *jsonschema.Schema) Option[In] {
	return func(o *options[In]) { o.schema = schema }
}

// WithTitle returns an option that sets the tool's [Tool].Title to title, the short name user
// interfaces show for it.
func WithTitle[In any](title string) Option[In] {
	return func(o *options[In]) { o.title = title }
}

// WithAnnotations returns an option that sets the tool's behaviour hints to a, every one of them
// stated (see [Annotations]).
func WithAnnotations[In any](a Annotations) Option[In] {
	return func(o *options[In]) { o.annotations = &a }
}

// WithOutput returns an option that declares Out as the type of the facts the tool's successful
// results carry in [Result].Structured: the tool's [Tool].OutputSchema is inferred from Out the
// way its parameters are inferred from In. The handler fills Structured with [Structured].
func WithOutput[In, Out any]() Option[In] {
	return func(o *options[In]) { o.output = inferSchema[Out] }
}

// WithCallView returns an option that sets the tool's call presenter: present receives
// arguments that passed schema validation and returns the view and true, or false for "no
// presentation". Arguments that do not validate, and panics inside present, also give "no
// presentation".
func WithCallView[In any](present func(args In) (CallView, bool)) Option[In] {
	return func(o *options[In]) { o.presentCall = present }
}

// WithResultView returns an option that sets the tool's result presenter: present receives the
// call's validated arguments and the result, and returns the view and true, or false for "no
// presentation". Arguments that do not validate, and panics inside present, also give "no
// presentation".
func WithResultView[In any](present func(args In, result Result) (ResultView, bool)) Option[In] {
	return func(o *options[In]) { o.presentResult = present }
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether name is a valid tool name: 1 to 64 characters from A-Z, a-z, 0-9,
// underscore and hyphen, the intersection of what model providers and MCP accept.
func ValidName(name string) bool { return namePattern.MatchString(name) }

// New builds a typed tool named name with the model-facing description, whose arguments
// are the JSON object form of In and whose body is handler. The schema is [InferSchema] of In
// (or the one given with [WithSchema]); opts may also set a title, behaviour hints
// ([WithTitle], [WithAnnotations]) and presenters. Each call's raw
// arguments are validated against the schema and decoded into a fresh In before handler runs;
// a call with bad arguments fails with an [*ArgsError] listing every violation and handler is
// not called.
//
// New returns an error when name is not a [ValidName], description is empty, handler is nil,
// or the schema cannot be inferred or compiled (see [CompileSchema]); a definition mistake
// shows at definition time, never at call time.
func New[In any](name, description string, handler Handler[In], opts ...Option[In]) (*Tool, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("tools: tool %q: invalid name: want 1 to 64 characters from A-Z a-z 0-9 _ -", name)
	}
	if description == "" {
		return nil, fmt.Errorf("tools: tool %q: empty description", name)
	}
	if handler == nil {
		return nil, fmt.Errorf("tools: tool %q: nil handler", name)
	}
	var o options[In]
	for _, opt := range opts {
		opt(&o)
	}
	s := o.schema
	if s == nil {
		var err error
		if s, err = inferSchema[In](); err != nil {
			return nil, fmt.Errorf("tools: tool %q: %w", name, err)
		}
	}
	schema, err := compileSchema(s)
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: %w", name, err)
	}
	var output json.RawMessage
	if o.output != nil {
		out, err := o.output()
		if err == nil {
			var compiled *Schema
			if compiled, err = compileSchema(out); err == nil {
				output = compiled.JSON()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("tools: tool %q: output: %w", name, err)
		}
	}
	t := &Tool{
		Name:         name,
		Title:        o.title,
		Description:  description,
		Parameters:   schema.JSON(),
		OutputSchema: output,
		Annotations:  o.annotations,
		Execute: func(ctx context.Context, call Call) (Result, error) {
			var args In
			if err := schema.Decode(call.Args, &args); err != nil {
				return Result{}, err
			}
			return handler(ctx, call, args)
		},
	}
	if present := o.presentCall; present != nil {
		t.PresentCall = func(raw json.RawMessage) (view CallView, ok bool) {
			defer recoverFalse(&ok)
			var args In
			if schema.Decode(raw, &args) != nil {
				return CallView{}, false
			}
			return present(args)
		}
	}
	if present := o.presentResult; present != nil {
		t.PresentResult = func(raw json.RawMessage, result Result) (view ResultView, ok bool) {
			defer recoverFalse(&ok)
			var args In
			if schema.Decode(raw, &args) != nil {
				return ResultView{}, false
			}
			return present(args, result)
		}
	}
	return t, nil
}

// recoverFalse turns a panic in a presenter into "no presentation".
func recoverFalse(ok *bool) {
	if recover() != nil {
		*ok = false
	}
}
