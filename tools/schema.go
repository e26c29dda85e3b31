package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a compiled argument schema: the JSON Schema a model is shown and the validator
// that checks raw arguments against it. It is immutable and safe for concurrent use.
//
// Only a subset of JSON Schema is supported, the one a tool's arguments need: the keywords
// type (one type or a list), properties, required, additionalProperties (false, or a schema
// for map values), items (one schema), enum, const, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, minLength, maxLength, minItems, maxItems, and the annotations title,
// description, default, examples, format, deprecated, readOnly, writeOnly. Anything else is
// refused when the schema is compiled, never discovered at call time.
type Schema struct {
	root *node
	raw  json.RawMessage
}

// node is the compiled form of one schema level.
type node struct {
	types      []string // allowed JSON types; empty means any
	enum       []any    // nil means no enum constraint
	enumJSON   string   // the enum rendered as compact JSON, for messages
	hasConst   bool
	constVal   any
	constJSON  string
	min, max   *float64
	exMin      *float64
	exMax      *float64
	minLen     *int
	maxLen     *int
	minItems   *int
	maxItems   *int
	props      []prop // declared properties in declaration order
	declares   bool   // properties is present (possibly empty): undeclared keys are dropped
	required   []string
	closed     bool  // additionalProperties: false
	additional *node // schema for undeclared properties (maps), or nil
	items      *node
}

type prop struct {
	name string
	node *node
}

// InferSchema derives the JSON Schema for the Go type T the way [New] does: with
// jsonschema.For, then normalised for tool arguments. Properties keep the struct's field
// order; a field's `jsonschema` tag is its description; fields without omitempty or omitzero
// are required. The normalisation makes objects open (no additionalProperties: false, so keys
// the schema does not declare are accepted and ignored), gives pointers and slices their plain
// type (a JSON null is a type violation, an optional value is expressed by omitting the key),
// and gives an object without fields an empty properties map. It returns an error when T cannot
// be described (channels, functions, cycles, maps with non-string keys).
func InferSchema[T any]() (*jsonschema.Schema, error) {
	s, err := inferSchema[T]()
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	return s, nil
}

// inferSchema is [InferSchema] with errors that do not name the package yet.
func inferSchema[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("infer schema: %w", err)
	}
	normalize(s)
	if s.Type == "object" && s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return s, nil
}

func normalize(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	if s.Type == "object" && isFalseSchema(s.AdditionalProperties) {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		normalize(p)
	}
	normalize(s.Items)
	normalize(s.AdditionalProperties)
}

// isFalseSchema reports whether s is the schema `false` ({"not":{}}), which matches nothing.
func isFalseSchema(s *jsonschema.Schema) bool {
	return s != nil && reflect.DeepEqual(*s, jsonschema.Schema{Not: &jsonschema.Schema{}})
}

// CompileSchema checks s and compiles it into a [Schema]. The root must be an object schema
// (type "object"). It returns an error of the form "tools: unsupported JSON schema: <path>: …" when s
// uses a keyword outside the supported subset, has a malformed value (an enum that is not an
// array of JSON values, a minimum that is not finite) or is not an object schema; the path
// names the offending level ("properties.tags.items", for instance). s is not retained: later
// changes to it do not affect the compiled schema.
func CompileSchema(s *jsonschema.Schema) (*Schema, error) {
	c, err := compileSchema(s)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	return c, nil
}

// compileSchema is [CompileSchema] with errors that do not name the package yet.
func compileSchema(s *jsonschema.Schema) (*Schema, error) {
	if s == nil {
		return nil, fmt.Errorf("unsupported JSON schema: nil schema")
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("unsupported JSON schema: the root must have type \"object\", got %s", typeList(s))
	}
	root, err := compileNode(s, "")
	if err != nil {
		return nil, fmt.Errorf("unsupported JSON schema: %w", err)
	}
	raw, err := marshalSchema(s)
	if err != nil {
		return nil, fmt.Errorf("unsupported JSON schema: %w", err)
	}
	return &Schema{root: root, raw: raw}, nil
}

// JSON returns the schema as the model sees it: compact JSON, byte-identical for the same
// schema on every run. The caller must not modify the returned bytes.
func (s *Schema) JSON() json.RawMessage { return s.raw }

func typeList(s *jsonschema.Schema) string {
	switch {
	case s.Type != "":
		return strconv.Quote(s.Type)
	case len(s.Types) > 0:
		b, _ := json.Marshal(s.Types)
		return string(b)
	}
	return "no type"
}

var knownTypes = map[string]bool{
	"string": true, "number": true, "integer": true, "boolean": true,
	"object": true, "array": true, "null": true,
}

func compileNode(s *jsonschema.Schema, path string) (*node, error) {
	where := func() string {
		if path == "" {
			return "root"
		}
		return path
	}
	if err := unsupportedKeywords(s); err != nil {
		return nil, fmt.Errorf("%s: %w", where(), err)
	}
	n := &node{}
	switch {
	case s.Type != "" && s.Types != nil:
		return nil, fmt.Errorf("%s: both type and a type list are set", where())
	case s.Type != "":
		n.types = []string{s.Type}
	case s.Types != nil:
		if len(s.Types) == 0 {
			return nil, fmt.Errorf("%s: empty type list", where())
		}
		n.types = slices.Clone(s.Types)
	}
	for _, t := range n.types {
		if !knownTypes[t] {
			return nil, fmt.Errorf("%s: unknown type %q", where(), t)
		}
	}
	if s.Enum != nil {
		n.enum = make([]any, len(s.Enum))
		for i, v := range s.Enum {
			d, err := decodeSchemaValue(v)
			if err != nil {
				return nil, fmt.Errorf("%s: enum[%d]: %w", where(), i, err)
			}
			n.enum[i] = d
		}
		n.enumJSON = compactJSON(s.Enum)
	}
	if s.Const != nil {
		d, err := decodeSchemaValue(*s.Const)
		if err != nil {
			return nil, fmt.Errorf("%s: const: %w", where(), err)
		}
		n.hasConst, n.constVal, n.constJSON = true, d, compactJSON(*s.Const)
	}
	for name, f := range map[string]*float64{"minimum": s.Minimum, "maximum": s.Maximum, "exclusiveMinimum": s.ExclusiveMinimum, "exclusiveMaximum": s.ExclusiveMaximum} {
		if f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0)) {
			return nil, fmt.Errorf("%s: %s must be finite", where(), name)
		}
	}
	for name, p := range map[string]*int{"minLength": s.MinLength, "maxLength": s.MaxLength, "minItems": s.MinItems, "maxItems": s.MaxItems} {
		if p != nil && *p < 0 {
			return nil, fmt.Errorf("%s: %s must not be negative", where(), name)
		}
	}
	n.min, n.max, n.exMin, n.exMax = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
	n.minLen, n.maxLen, n.minItems, n.maxItems = s.MinLength, s.MaxLength, s.MinItems, s.MaxItems

	n.declares = s.Properties != nil
	for _, name := range propertyOrder(s) {
		child, err := compileNode(s.Properties[name], join(path, "properties."+name))
		if err != nil {
			return nil, err
		}
		n.props = append(n.props, prop{name: name, node: child})
	}
	seen := map[string]bool{}
	for _, r := range s.Required {
		if seen[r] {
			return nil, fmt.Errorf("%s: required lists %q twice", where(), r)
		}
		seen[r] = true
	}
	n.required = slices.Clone(s.Required)
	if ap := s.AdditionalProperties; ap != nil {
		switch {
		case isFalseSchema(ap):
			n.closed = true
		case reflect.ValueOf(*ap).IsZero():
			// true: any value, the default.
		default:
			child, err := compileNode(ap, join(path, "additionalProperties"))
			if err != nil {
				return nil, err
			}
			n.additional = child
		}
	}
	if s.Items != nil {
		child, err := compileNode(s.Items, join(path, "items"))
		if err != nil {
			return nil, err
		}
		n.items = child
	}
	return n, nil
}

func join(path, elem string) string {
	if path == "" {
		return elem
	}
	return path + "." + elem
}

// propertyOrder returns the property names in PropertyOrder order, then the rest sorted, the
// order in which jsonschema marshals them.
func propertyOrder(s *jsonschema.Schema) []string {
	var names []string
	done := map[string]bool{}
	for _, name := range s.PropertyOrder {
		if _, ok := s.Properties[name]; ok && !done[name] {
			names = append(names, name)
			done[name] = true
		}
	}
	var rest []string
	for name := range s.Properties {
		if !done[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// unsupportedKeywords reports the first keyword of s outside the supported subset.
func unsupportedKeywords(s *jsonschema.Schema) error {
	var bad []string
	add := func(set bool, name string) {
		if set {
			bad = append(bad, name)
		}
	}
	add(s.ID != "", "$id")
	add(s.Schema != "", "$schema")
	add(s.Ref != "", "$ref")
	add(s.Defs != nil || s.Definitions != nil, "$defs")
	add(s.DependencySchemas != nil || s.DependencyStrings != nil, "dependencies")
	add(s.Anchor != "" || s.DynamicAnchor != "" || s.DynamicRef != "", "$anchor")
	add(s.Vocabulary != nil, "$vocabulary")
	add(s.MultipleOf != nil, "multipleOf")
	add(s.Pattern != "", "pattern")
	add(s.PrefixItems != nil || s.ItemsArray != nil, "prefixItems")
	add(s.AdditionalItems != nil, "additionalItems")
	add(s.UniqueItems, "uniqueItems")
	add(s.Contains != nil || s.MinContains != nil || s.MaxContains != nil, "contains")
	add(s.UnevaluatedItems != nil, "unevaluatedItems")
	add(s.MinProperties != nil || s.MaxProperties != nil, "minProperties")
	add(s.DependentRequired != nil, "dependentRequired")
	add(s.PatternProperties != nil, "patternProperties")
	add(s.PropertyNames != nil, "propertyNames")
	add(s.UnevaluatedProperties != nil, "unevaluatedProperties")
	add(s.AllOf != nil, "allOf")
	add(s.AnyOf != nil, "anyOf")
	add(s.OneOf != nil, "oneOf")
	add(s.Not != nil, "not")
	add(s.If != nil || s.Then != nil || s.Else != nil, "if")
	add(s.DependentSchemas != nil, "dependentSchemas")
	add(s.ContentEncoding != "" || s.ContentMediaType != "" || s.ContentSchema != nil, "contentEncoding")
	add(s.Extra != nil, "unknown keyword")
	if len(bad) > 0 {
		return fmt.Errorf("keyword %s is not supported", bad[0])
	}
	return nil
}

// marshalSchema renders s as compact JSON. jsonschema marshals struct keys in a fixed order
// and properties in PropertyOrder, so the bytes are the same on every run.
func marshalSchema(s *jsonschema.Schema) (json.RawMessage, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}
