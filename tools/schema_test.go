package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type server struct {
	Host string `json:"host" jsonschema:"Host name."`
	Port int    `json:"port,omitempty"`
}

type richArgs struct {
	Path    string            `json:"path" jsonschema:"File to read."`
	Count   int               `json:"count,omitempty" jsonschema:"How many."`
	Ratio   float64           `json:"ratio,omitempty"`
	Verbose *bool             `json:"verbose,omitempty"`
	Tags    []string          `json:"tags,omitempty"`
	Config  *server           `json:"config,omitempty"`
	Servers []server          `json:"servers,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Small   uint8             `json:"small,omitempty"`
	Free    map[string]any    `json:"free,omitempty"`
}

func TestInferSchemaShape(t *testing.T) {
	s, err := InferSchema[richArgs]()
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompileSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	got := string(c.JSON())
	// Properties in field order, descriptions from tags, required from fields without
	// omitempty, pointers and slices with their plain type, no additionalProperties:false.
	want := `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File to read."},` +
		`"count":{"type":"integer","description":"How many."},` +
		`"ratio":{"type":"number"},` +
		`"verbose":{"type":"boolean"},` +
		`"tags":{"type":"array","items":{"type":"string"}},` +
		`"config":{"type":"object","properties":{"host":{"type":"string","description":"Host name."},"port":{"type":"integer"}},"required":["host"]},` +
		`"servers":{"type":"array","items":{"type":"object","properties":{"host":{"type":"string","description":"Host name."},"port":{"type":"integer"}},"required":["host"]}},` +
		`"labels":{"type":"object","additionalProperties":{"type":"string"}},` +
		`"small":{"type":"integer","minimum":0,"maximum":255},` +
		`"free":{"type":"object","additionalProperties":true}` +
		`},"required":["path"]}`
	if got != want {
		t.Errorf("schema:\n got %s\nwant %s", got, want)
	}
}

func TestInferSchemaByteIdentical(t *testing.T) {
	first := mustCompile[richArgs](t).JSON()
	for range 200 {
		if got := mustCompile[richArgs](t).JSON(); string(got) != string(first) {
			t.Fatalf("schema bytes changed between runs:\n%s\n%s", first, got)
		}
	}
}

func TestInferSchemaEmptyStruct(t *testing.T) {
	got := string(mustCompile[struct{}](t).JSON())
	if want := `{"type":"object","properties":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestInferSchemaErrors(t *testing.T) {
	if _, err := InferSchema[struct{ C chan int }](); err == nil {
		t.Error("channel field: want an error")
	}
	if _, err := InferSchema[struct {
		F func()
	}](); err == nil {
		t.Error("func field: want an error")
	}
}

func TestCompileSchemaRefusesUnsupported(t *testing.T) {
	obj := func(p *jsonschema.Schema) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": p}}
	}
	cases := []struct {
		name   string
		schema *jsonschema.Schema
		want   string
	}{
		{"nil", nil, "nil schema"},
		{"root not object", &jsonschema.Schema{Type: "string"}, `the root must have type "object", got "string"`},
		{"root without type", &jsonschema.Schema{}, `got no type`},
		{"pattern", obj(&jsonschema.Schema{Type: "string", Pattern: "a+"}), "properties.x: keyword pattern is not supported"},
		{"oneOf", obj(&jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}}), "keyword oneOf"},
		{"ref", obj(&jsonschema.Schema{Ref: "#/x"}), "keyword $ref"},
		{"unknown type", obj(&jsonschema.Schema{Type: "int"}), `properties.x: unknown type "int"`},
		{"nested items", obj(&jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string", Pattern: "x"}}), "properties.x.items: keyword pattern"},
		{"extra keyword", obj(&jsonschema.Schema{Type: "string", Extra: map[string]any{"x-foo": 1}}), "unknown keyword"},
		{"duplicate required", &jsonschema.Schema{Type: "object", Required: []string{"a", "a"}}, `required lists "a" twice`},
		{"negative minLength", obj(&jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(-1)}), "minLength must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileSchema(tc.schema)
			if err == nil {
				t.Fatalf("want an error containing %q", tc.want)
			}
			if !strings.HasPrefix(err.Error(), "tools: unsupported JSON schema: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to start with %q and contain %q", err, "tools: unsupported JSON schema: ", tc.want)
			}
		})
	}
}

func TestCompileSchemaDoesNotRetainInput(t *testing.T) {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"color": {Type: "string", Enum: []any{"red", "green"}},
	}}
	c, err := CompileSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	before := string(c.JSON())
	s.Properties["color"].Enum[0] = "blue"
	s.Properties["other"] = &jsonschema.Schema{Type: "string"}
	if string(c.JSON()) != before {
		t.Errorf("JSON changed after the input schema was modified")
	}
	if v := c.Validate(json.RawMessage(`{"color":"red"}`)); v != nil {
		t.Errorf("red rejected after the input schema was modified: %v", v)
	}
}

func mustCompile[T any](t testing.TB) *Schema {
	t.Helper()
	s, err := InferSchema[T]()
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompileSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
