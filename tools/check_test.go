package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type listFacts struct {
	Items []string `json:"items" jsonschema:"The items."`
	Count *int     `json:"count,omitempty" jsonschema:"How many."`
}

// listTool returns a tool with an output schema whose handler returns what result builds.
func listTool(t *testing.T, result func() (Result, error)) *Tool {
	t.Helper()
	tool, err := New("list", "List things.", func(context.Context, Call, struct{}) (Result, error) { return result() },
		WithOutput[struct{}, listFacts]())
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestRegistryChecksResults checks that a registry in a test binary replaces every result
// outside its tool's output schema by a failed one naming the problem, and passes the others.
func TestRegistryChecksResults(t *testing.T) {
	two := 2
	for _, tc := range []struct {
		name   string
		result func() (Result, error)
		want   string // "" for a result that passes as it is
	}{
		{"valid", func() (Result, error) {
			return Structured(Text("a b"), listFacts{Items: []string{"a", "b"}, Count: &two})
		}, ""},
		{"empty list", func() (Result, error) { return Structured(Text("none"), listFacts{Items: []string{}}) }, ""},
		{"failed without facts", func() (Result, error) { return Result{}, errors.New("boom") }, ""},
		{"nil list", func() (Result, error) { return Structured(Text("none"), listFacts{}) }, `"items":null`},
		{"no facts", func() (Result, error) { return Text("none"), nil }, "has no structured content"},
		{"wrong type", func() (Result, error) {
			return Result{Content: []Content{TextContent("x")}, Structured: json.RawMessage(`{"items":[1]}`)}, nil
		}, `{"items":[1]}`},
		{"missing property", func() (Result, error) {
			return Result{Content: []Content{TextContent("x")}, Structured: json.RawMessage(`{"count":1}`)}, nil
		}, "items"},
		{"not an object", func() (Result, error) {
			return Result{Content: []Content{TextContent("x")}, Structured: json.RawMessage(`[1]`)}, nil
		}, "is not a JSON object"},
		{"failed with bad facts", func() (Result, error) {
			return Result{Content: []Content{TextContent("x")}, IsError: true, Structured: json.RawMessage(`{"items":"no"}`)}, nil
		}, `{"items":"no"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := listTool(t, tc.result)
			var r Registry
			if _, err := r.Register(tool); err != nil {
				t.Fatal(err)
			}
			res := r.Execute(context.Background(), Call{ID: "1", Name: "list"})
			direct := tool.CheckResult(mustRun(t, tool))
			if tc.want == "" {
				if res.Code == CodeResultSchema || direct != nil {
					t.Fatalf("a valid result was refused: %q / %v", res.Text(), direct)
				}
				return
			}
			if res.Code != CodeResultSchema || !res.IsError {
				t.Fatalf("a result outside the schema passed: %+v", res)
			}
			text := res.Text()
			if !strings.HasPrefix(text, `Error: tool "list" returned a result outside its output schema: `) || !strings.Contains(text, tc.want) {
				t.Errorf("refusal %q does not say %q", text, tc.want)
			}
			if direct == nil || !strings.HasPrefix(direct.Error(), `tools: tool "list": `) || !strings.Contains(direct.Error(), tc.want) {
				t.Errorf("CheckResult = %v, want an error saying %q", direct, tc.want)
			}
		})
	}
}

// mustRun runs tool's Execute directly, turning an error into its failed result.
func mustRun(t *testing.T, tool *Tool) Result {
	t.Helper()
	res, err := tool.Execute(context.Background(), Call{ID: "1", Name: tool.Name})
	if err != nil {
		return ErrorResult(err)
	}
	return res
}

func TestCheckResultWithoutOutputSchema(t *testing.T) {
	if err := shoutTool(t).CheckResult(Text("anything")); err != nil {
		t.Errorf("a tool without an output schema refused a result: %v", err)
	}
	bad := rawTool("raw", nil)
	bad.OutputSchema = json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/nowhere"}}}`)
	if err := bad.CheckResult(Text("x")); err == nil || !strings.Contains(err.Error(), "output schema") {
		t.Errorf("an output schema that does not resolve: %v", err)
	}
}

func TestCheckingOn(t *testing.T) {
	for _, tc := range []struct {
		inTest bool
		env    string
		want   bool
	}{{true, "", true}, {false, "", false}, {false, "1", true}, {false, "0", false}, {false, "yes", false}} {
		if got := checkingOn(tc.inTest, tc.env); got != tc.want {
			t.Errorf("checkingOn(%v, %q) = %v, want %v", tc.inTest, tc.env, got, tc.want)
		}
	}
	if !checkResults() {
		t.Error("a test binary does not check results")
	}
}
