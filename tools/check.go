package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// DebugSchemaEnv is the environment variable that makes every [Registry] check each result
// against its tool's output schema outside tests: DSH_DEBUG_SCHEMA=1. Test binaries always
// check.
const DebugSchemaEnv = "DSH_DEBUG_SCHEMA"

// CodeResultSchema marks a result a checking [Registry] replaced because the tool's result did
// not match the tool's output schema (see [Tool.CheckResult]).
const CodeResultSchema = "RESULT_SCHEMA"

// checkResults reports whether registries check results: in a test binary, or with
// DSH_DEBUG_SCHEMA=1. It is decided once per process.
var checkResults = sync.OnceValue(func() bool { return checkingOn(testing.Testing(), os.Getenv(DebugSchemaEnv)) })

// checkingOn is the rule of checkResults: always in tests, otherwise when env is "1".
func checkingOn(inTest bool, env string) bool { return inTest || env == "1" }

// CheckResult returns nil when res is a result t may return under its output schema, and an
// error saying what is wrong otherwise. A tool without an output schema accepts every result. A
// successful result of a tool with one must carry structured content (MCP clients refuse one
// without it) that validates against the schema; a failed result may carry none, and what it
// carries must validate too. The schema is resolved on every call: a [Registry] resolves it once
// per registered tool.
func (t *Tool) CheckResult(res Result) error {
	if len(t.OutputSchema) == 0 {
		return nil
	}
	rs, err := resolveOutput(t.OutputSchema)
	if err != nil {
		return fmt.Errorf("tools: tool %q: %w", t.Name, err)
	}
	if err := checkStructured(rs, res); err != nil {
		return fmt.Errorf("tools: tool %q: %w", t.Name, err)
	}
	return nil
}

// resolveOutput parses and resolves an output schema for validation.
func resolveOutput(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	return rs, nil
}

// checkStructured validates the structured content of res against rs.
func checkStructured(rs *jsonschema.Resolved, res Result) error {
	if len(res.Structured) == 0 {
		if res.IsError {
			return nil
		}
		return errors.New("result has no structured content but the tool declares an output schema")
	}
	var v map[string]any
	if err := json.Unmarshal(res.Structured, &v); err != nil || v == nil {
		return fmt.Errorf("structured content %s is not a JSON object", res.Structured)
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("structured content %s does not match the output schema: %w", res.Structured, err)
	}
	return nil
}

// outputCheck resolves a registered tool's output schema once, when a result is first checked.
type outputCheck func() (*jsonschema.Resolved, error)

func newOutputCheck(raw json.RawMessage) outputCheck {
	if len(raw) == 0 {
		return nil
	}
	return sync.OnceValues(func() (*jsonschema.Resolved, error) { return resolveOutput(raw) })
}

// check returns res, or, when res does not match the output schema, a failed result with code
// [CodeResultSchema] that says why, followed by the content res had (its own blocks).
func (c outputCheck) check(name string, res Result) Result {
	if c == nil {
		return res
	}
	rs, err := c()
	if err == nil {
		err = checkStructured(rs, res)
	}
	if err == nil {
		return res
	}
	bad := ErrorResult(&Error{Code: CodeResultSchema, Message: fmt.Sprintf("tool %q returned a result outside its output schema: %v", name, err), Err: err})
	if len(res.Content) > 0 {
		bad.Content[0].Text += "; the result was:\n"
		bad.Content = append(bad.Content, res.Content...)
	}
	return bad
}
