package tools

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// specSchema is the argument schema the violation table runs against: one property per
// feature of the supported subset.
func specSchema(t testing.TB) *Schema {
	t.Helper()
	str := &jsonschema.Schema{Type: "string"}
	s := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"path":  {Type: "string", Description: "File path."},
			"s":     str,
			"n":     {Type: "number"},
			"i":     {Type: "integer"},
			"b":     {Type: "boolean"},
			"color": {Type: "string", Enum: []any{"red", "green"}},
			"size":  {Type: "number", Enum: []any{1, 2.5}},
			"bag":   {Type: "object"},
			"tags":  {Type: "array", Items: str},
			"config": {Type: "object", Required: []string{"host"}, Properties: map[string]*jsonschema.Schema{
				"host": str, "port": {Type: "integer", Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(65535.0)},
			}, PropertyOrder: []string{"host", "port"}},
			"servers": {Type: "array", Items: &jsonschema.Schema{Type: "object", Required: []string{"host"}, Properties: map[string]*jsonschema.Schema{"host": str}}},
			"closed":  {Type: "object", Properties: map[string]*jsonschema.Schema{"a": str}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
			"env":     {Type: "object", AdditionalProperties: str},
			"maybe":   {Types: []string{"string", "null"}},
			"one":     {Const: jsonschema.Ptr[any](1)},
			"name":    {Type: "string", MinLength: jsonschema.Ptr(1), MaxLength: jsonschema.Ptr(3)},
			"pair":    {Type: "array", MinItems: jsonschema.Ptr(2), MaxItems: jsonschema.Ptr(2)},
			"pos":     {Type: "number", ExclusiveMinimum: jsonschema.Ptr(0.0), ExclusiveMaximum: jsonschema.Ptr(10.0)},
		},
		PropertyOrder: []string{"path", "s", "n", "i", "b", "color", "size", "bag", "tags", "config", "servers", "closed", "env", "maybe", "one", "name", "pair", "pos"},
		Required:      []string{"path"},
	}
	c, err := CompileSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestValidate(t *testing.T) {
	s := specSchema(t)
	cases := []struct {
		name string
		args string
		want []string
	}{
		{"valid minimal", `{"path":"a"}`, nil},
		{"valid full", `{"path":"a","s":"x","n":1.5,"i":3,"b":true,"color":"green","size":2.5,"bag":{"k":[1]},"tags":["x","y"],` +
			`"config":{"host":"h","port":80},"servers":[{"host":"a"}],"closed":{"a":"x"},"env":{"A":"1"},"maybe":null,"one":1.0,` +
			`"name":"abc","pair":[1,2],"pos":9.9}`, nil},
		{"empty input counts as {}", ``, []string{`missing required property "path"`}},
		{"whitespace input counts as {}", " \n\t", []string{`missing required property "path"`}},
		{"extra keys and omitted optionals are fine", `{"path":"a","env2":1,"stdin":"x"}`, nil},
		{"null root", `null`, []string{`"arguments" must be an object`}},
		{"string root", `"x"`, []string{`"arguments" must be an object`}},
		{"array root", `[{"path":"a"}]`, []string{`"arguments" must be an object`}},
		{"number root", `12`, []string{`"arguments" must be an object`}},
		{"malformed JSON", `{"path":`, []string{`"arguments" must be valid JSON: unexpected end of JSON input`}},
		{"bad token", `{path:"a"}`, []string{`"arguments" must be valid JSON: invalid character 'p' looking for beginning of object key string`}},
		{"trailing data", `{"path":"a"} {}`, []string{`"arguments" must be valid JSON: unexpected data after the JSON value at offset 13`}},
		{"missing required", `{}`, []string{`missing required property "path"`}},
		{"null is not missing", `{"path":null}`, []string{`"path" must be a string`}},
		{"wrong primitives", `{"path":"a","s":1,"n":"1","b":"true","i":1.5}`, []string{
			`"s" must be a string`, `"n" must be a number`, `"i" must be an integer`, `"b" must be a boolean`}},
		{"object and array types", `{"path":"a","bag":[],"tags":"x"}`, []string{`"bag" must be an object`, `"tags" must be an array`}},
		{"enum", `{"path":"a","color":"blue"}`, []string{`"color" must be one of ["red","green"]`}},
		{"enum type mismatch reports the type", `{"path":"a","color":1}`, []string{`"color" must be a string`}},
		{"numeric enum by value", `{"path":"a","size":1.0}`, nil},
		{"numeric enum miss", `{"path":"a","size":3}`, []string{`"size" must be one of [1,2.5]`}},
		{"nested missing", `{"path":"a","config":{}}`, []string{`missing required property "config.host"`}},
		{"nested type and bound", `{"path":"a","config":{"host":1,"port":0}}`, []string{`"config.host" must be a string`, `"config.port" must be >= 1`}},
		{"nested max", `{"path":"a","config":{"host":"h","port":70000}}`, []string{`"config.port" must be <= 65535`}},
		{"array items", `{"path":"a","tags":["x",2,"y",null]}`, []string{`"tags[1]" must be a string`, `"tags[3]" must be a string`}},
		{"array of objects", `{"path":"a","servers":[{"host":"a"},{}]}`, []string{`missing required property "servers[1].host"`}},
		{"closed object", `{"path":"a","closed":{"a":"x","z":1,"y":2}}`, []string{
			`"closed.y" is not a declared property (additionalProperties: false)`,
			`"closed.z" is not a declared property (additionalProperties: false)`}},
		{"map values", `{"path":"a","env":{"B":2,"A":"1"}}`, []string{`"env.B" must be a string`}},
		{"type list", `{"path":"a","maybe":3}`, []string{`"maybe" must be a string or null`}},
		{"const", `{"path":"a","one":2}`, []string{`"one" must be 1`}},
		{"min length counts characters", `{"path":"a","name":""}`, []string{`"name" must be at least 1 character long`}},
		{"max length counts characters", `{"path":"a","name":"ééé"}`, nil},
		{"max length", `{"path":"a","name":"abcd"}`, []string{`"name" must be at most 3 characters long`}},
		{"min items", `{"path":"a","pair":[1]}`, []string{`"pair" must have at least 2 items`}},
		{"max items", `{"path":"a","pair":[1,2,3]}`, []string{`"pair" must have at most 2 items`}},
		{"exclusive bounds", `{"path":"a","pos":0}`, []string{`"pos" must be > 0`}},
		{"exclusive max", `{"path":"a","pos":10}`, []string{`"pos" must be < 10`}},
		{"infinite number", `{"path":"a","n":1e999}`, []string{`"n" must be a finite JSON number`}},
		{"integer written with exponent", `{"path":"a","i":1e3}`, nil},
		{"integer written with fraction zero", `{"path":"a","i":-20.0}`, nil},
		{"tiny is not an integer", `{"path":"a","i":1e-400}`, []string{`"i" must be an integer`}},
		{"integer out of 64-bit range", `{"path":"a","i":9223372036854775808}`, []string{
			`"i" must be an integer between -9223372036854775808 and 9223372036854775807`}},
		{"missing first, then children in order", `{"config":{"port":"x"},"s":1}`, []string{
			`missing required property "path"`, `"s" must be a string`, `missing required property "config.host"`, `"config.port" must be an integer`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := s.Validate(json.RawMessage(tc.args))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Validate(%s)\n got %q\nwant %q", tc.args, got, tc.want)
			}
		})
	}
}

func TestValidateCapsViolations(t *testing.T) {
	s := specSchema(t)
	items := strings.Repeat("1,", 99) + "1"
	got := s.Validate(json.RawMessage(`{"path":"a","tags":[` + items + `]}`))
	if len(got) != MaxViolations+1 {
		t.Fatalf("got %d violations, want %d", len(got), MaxViolations+1)
	}
	if got[0] != `"tags[0]" must be a string` || got[MaxViolations] != "and 80 more" {
		t.Errorf("first %q, last %q", got[0], got[MaxViolations])
	}
}

func TestDecodeDropsUndeclaredKeys(t *testing.T) {
	s := specSchema(t)
	var dst map[string]any
	if err := s.Decode(json.RawMessage(`{"path":"a","env":{"A":"1"},"stdin":"x","Path":"b","config":{"host":"h","extra":1}}`), &dst); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"path": "a", "env": map[string]any{"A": "1"}, "config": map[string]any{"host": "h"}}
	if !reflect.DeepEqual(dst, want) {
		t.Errorf("decoded %v, want %v", dst, want)
	}
}

func TestDecodeCanonicalIntegers(t *testing.T) {
	type args struct {
		N int64 `json:"n"`
	}
	s := mustCompile[args](t)
	for lit, want := range map[string]int64{"1e3": 1000, "-20.0": -20, "120.50e1": 1205, "0.05e2": 5, "9223372036854775807": 1<<63 - 1, "-0": 0} {
		var a args
		if err := s.Decode(json.RawMessage(`{"n":`+lit+`}`), &a); err != nil {
			t.Errorf("%s: %v", lit, err)
			continue
		}
		if a.N != want {
			t.Errorf("%s decoded as %d, want %d", lit, a.N, want)
		}
	}
}

func TestDecodeReportsViolations(t *testing.T) {
	type args struct {
		Path string `json:"path"`
		N    int    `json:"n,omitempty"`
	}
	s := mustCompile[args](t)
	var a args
	err := s.Decode(json.RawMessage(`{"n":"x"}`), &a)
	var ae *ArgsError
	if !errorsAs(err, &ae) {
		t.Fatalf("error %v (%T), want *ArgsError", err, err)
	}
	want := `invalid arguments: missing required property "path"; "n" must be an integer`
	if err.Error() != want || len(ae.Violations) != 2 || ae.ErrorCode() != CodeInvalidArgs {
		t.Errorf("got %q %q %q", err, ae.Violations, ae.ErrorCode())
	}
}

func TestDecodeNarrowFloat(t *testing.T) {
	// The schema of a float32 is "number"; a value beyond float32's range passes the schema but
	// not the decoder, and is reported as an argument problem rather than a panic.
	type args struct {
		F float32 `json:"f"`
	}
	var a args
	err := mustCompile[args](t).Decode(json.RawMessage(`{"f":1e300}`), &a)
	if err == nil || !strings.HasPrefix(err.Error(), `invalid arguments: "arguments" cannot be decoded:`) {
		t.Errorf("got %v", err)
	}
}

// FuzzValidate checks that validation is total and that it is the only gate: whatever the
// input, Validate does not panic, and the input decodes into the typed struct exactly when
// Validate finds nothing.
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"path":"a"}`, `{"path":"a","count":1e3}`, `{"path":1}`,
		`{"path":"a","tags":["x",1]}`, `{"path":"a","config":{"host":"h","port":1.5}}`,
		`{"path":"a","servers":[{},{"host":"x"}]}`, `{"path":"a","labels":{"a":1}}`, `{"path":"a","small":256}`,
		`{"path":"a","count":1e999}`, `{"path":"a","count":-1e-999}`, `{"path":"a","verbose":null}`,
		`{"path":"\ud800"}`, `{"path":"a"}x`, `{"path":"a","free":{"x":[{}]}}`, `{"path":"a","ratio":12345678901234567890}`,
	} {
		f.Add([]byte(seed))
	}
	s := mustCompile[richArgs](f)
	f.Fuzz(func(t *testing.T, data []byte) {
		violations := s.Validate(data)
		var a richArgs
		err := s.Decode(data, &a)
		if (violations == nil) != (err == nil) {
			t.Fatalf("Validate says %q but Decode says %v for %q", violations, err, data)
		}
		for _, v := range violations {
			if v == "" {
				t.Fatalf("empty violation for %q", data)
			}
		}
		if len(violations) > MaxViolations+1 {
			t.Fatalf("%d violations for %q", len(violations), data)
		}
	})
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
