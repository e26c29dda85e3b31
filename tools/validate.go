package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxViolations is the most violations one [ArgsError] lists; beyond it the last entry says how
// many more were found, so a pathological argument object cannot produce an unbounded message.
const MaxViolations = 20

// rootLabel names the argument object itself in violations.
const rootLabel = "arguments"

// Validate checks the raw JSON arguments raw against the schema and returns every violation,
// in schema-walk order: for each object, its missing required properties first, then the
// violations inside its declared properties in declaration order, then undeclared keys of a
// closed object. An empty raw counts as {}. It returns nil when raw is valid. Validate never
// panics, whatever raw holds.
//
// Violations name their path with dotted keys and [i] indices, the argument object itself
// being "arguments": `"arguments" must be an object`, `missing required property
// "config.host"`, `"tags[1]" must be a string`, `"color" must be one of ["red","green"]`.
// A JSON null is not the same as a missing key: a present null is a type violation unless
// the schema allows null.
func (s *Schema) Validate(raw json.RawMessage) []string {
	_, v := s.check(raw)
	return v
}

// Decode validates raw as [Schema.Validate] does and, when it is valid, decodes it into dst
// (a non-nil pointer). Only declared properties are decoded: keys the schema does not declare
// are dropped first, so they can never reach dst. It returns an [*ArgsError] listing every
// violation, or one naming the decoding problem when the valid value does not fit dst (a
// number too large for a float32 field, for instance).
func (s *Schema) Decode(raw json.RawMessage, dst any) error {
	clean, violations := s.check(raw)
	if violations != nil {
		return &ArgsError{Violations: violations}
	}
	b, err := json.Marshal(clean)
	if err != nil {
		return &ArgsError{Violations: []string{fmt.Sprintf("%q cannot be re-encoded: %v", rootLabel, err)}}
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return &ArgsError{Violations: []string{fmt.Sprintf("%q cannot be decoded: %v", rootLabel, err)}}
	}
	return nil
}

// check parses raw and walks it, returning the cleaned value (declared keys only, integers in
// canonical form) and the violations.
func (s *Schema) check(raw json.RawMessage) (any, []string) {
	v, err := parseJSON(raw)
	if err != nil {
		return nil, []string{fmt.Sprintf("%q must be valid JSON: %v", rootLabel, err)}
	}
	w := walker{}
	clean := w.walk(s.root, v, "")
	if w.total > MaxViolations {
		w.out = append(w.out, fmt.Sprintf("and %d more", w.total-MaxViolations))
	}
	return clean, w.out
}

// parseJSON decodes exactly one JSON value, keeping numbers as json.Number.
func parseJSON(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("unexpected end of JSON input")
		}
		return nil, err
	}
	end := dec.InputOffset()
	if rest := bytes.TrimLeft(raw[end:], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("unexpected data after the JSON value at offset %d", len(raw)-len(rest))
	}
	return v, nil
}

type walker struct {
	out   []string
	total int
}

func (w *walker) add(msg string) {
	w.total++
	if len(w.out) < MaxViolations {
		w.out = append(w.out, msg)
	}
}

func label(path string) string {
	if path == "" {
		return strconv.Quote(rootLabel)
	}
	return strconv.Quote(path)
}

func childPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// walk checks v against n at path and returns v cleaned for decoding.
func (w *walker) walk(n *node, v any, path string) any {
	kind, num := jsonKind(v)
	if len(n.types) > 0 && !typeAllowed(n.types, kind, num) {
		if kind == "number" && num.literal != "" && !num.finite && (slices.Contains(n.types, "number") || slices.Contains(n.types, "integer")) {
			w.add(label(path) + " must be a finite JSON number")
		} else if kind == "number" && num.finite && num.integral && !num.fitsInt64 && slices.Contains(n.types, "integer") {
			w.add(label(path) + " must be an integer between -9223372036854775808 and 9223372036854775807")
		} else {
			w.add(label(path) + " must be " + describeTypes(n.types))
		}
		return nil
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return equalDecoded(v, e) }) {
		w.add(label(path) + " must be one of " + n.enumJSON)
	}
	if n.hasConst && !equalDecoded(v, n.constVal) {
		w.add(label(path) + " must be " + n.constJSON)
	}
	switch kind {
	case "number":
		w.bounds(n, num.f, path)
		if slices.Contains(n.types, "integer") && !slices.Contains(n.types, "number") {
			return json.Number(num.canonicalInt)
		}
		return v
	case "string":
		s := v.(string)
		if n.minLen != nil || n.maxLen != nil {
			count := utf8.RuneCountInString(s)
			if n.minLen != nil && count < *n.minLen {
				w.add(fmt.Sprintf("%s must be at least %d %s long", label(path), *n.minLen, plural(*n.minLen, "character")))
			}
			if n.maxLen != nil && count > *n.maxLen {
				w.add(fmt.Sprintf("%s must be at most %d %s long", label(path), *n.maxLen, plural(*n.maxLen, "character")))
			}
		}
		return s
	case "array":
		a := v.([]any)
		if n.minItems != nil && len(a) < *n.minItems {
			w.add(fmt.Sprintf("%s must have at least %d %s", label(path), *n.minItems, plural(*n.minItems, "item")))
		}
		if n.maxItems != nil && len(a) > *n.maxItems {
			w.add(fmt.Sprintf("%s must have at most %d %s", label(path), *n.maxItems, plural(*n.maxItems, "item")))
		}
		if n.items == nil {
			return a
		}
		clean := make([]any, len(a))
		for i, item := range a {
			clean[i] = w.walk(n.items, item, fmt.Sprintf("%s[%d]", pathOrRoot(path), i))
		}
		return clean
	case "object":
		return w.object(n, v.(map[string]any), path)
	}
	return v
}

func pathOrRoot(path string) string {
	if path == "" {
		return rootLabel
	}
	return path
}

func (w *walker) object(n *node, m map[string]any, path string) any {
	for _, r := range n.required {
		if _, ok := m[r]; !ok {
			w.add("missing required property " + strconv.Quote(childPath(path, r)))
		}
	}
	if n.props == nil && n.additional == nil && !n.closed && !n.declares {
		return m // a free-form object: only its type is checked
	}
	clean := make(map[string]any, len(n.props))
	declared := make(map[string]bool, len(n.props))
	for _, p := range n.props {
		declared[p.name] = true
		if val, ok := m[p.name]; ok {
			clean[p.name] = w.walk(p.node, val, childPath(path, p.name))
		}
	}
	var extra []string
	for k := range m {
		if !declared[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		switch {
		case n.closed:
			w.add(strconv.Quote(childPath(path, k)) + " is not a declared property (additionalProperties: false)")
		case n.additional != nil:
			clean[k] = w.walk(n.additional, m[k], childPath(path, k))
		}
		// Otherwise the key is ignored: it is neither validated nor forwarded.
	}
	return clean
}

func (w *walker) bounds(n *node, f float64, path string) {
	if n.min != nil && f < *n.min {
		w.add(fmt.Sprintf("%s must be >= %s", label(path), formatFloat(*n.min)))
	}
	if n.exMin != nil && f <= *n.exMin {
		w.add(fmt.Sprintf("%s must be > %s", label(path), formatFloat(*n.exMin)))
	}
	if n.max != nil && f > *n.max {
		w.add(fmt.Sprintf("%s must be <= %s", label(path), formatFloat(*n.max)))
	}
	if n.exMax != nil && f >= *n.exMax {
		w.add(fmt.Sprintf("%s must be < %s", label(path), formatFloat(*n.exMax)))
	}
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// number describes a JSON number literal.
type number struct {
	literal      string
	f            float64
	finite       bool // representable as a finite float64
	integral     bool // finite with no fractional part
	fitsInt64    bool // integral and within the int64 range
	canonicalInt string
}

func parseNumber(lit string) number {
	n := number{literal: lit}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return n
	}
	n.f, n.finite = f, true
	digits, integral := integerDigits(lit)
	if !integral {
		return n
	}
	n.integral = true
	if i, err := strconv.ParseInt(digits, 10, 64); err == nil {
		n.fitsInt64, n.canonicalInt = true, strconv.FormatInt(i, 10)
	}
	return n
}

// integerDigits reports whether the JSON number literal lit denotes an integer, exactly (no
// float rounding: 1e-400 is not an integer, 12345678901234567890e-1 is one), and returns that
// integer as a plain decimal string ("-" sign, no exponent). It does no big-number arithmetic,
// so an extreme exponent costs nothing.
func integerDigits(lit string) (string, bool) {
	sign := ""
	if strings.HasPrefix(lit, "-") {
		sign, lit = "-", lit[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(lit), "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expPart)
		if err != nil { // out of int range: |exponent| is astronomically large
			e = math.MaxInt32
			if strings.HasPrefix(expPart, "-") {
				e = math.MinInt32
			}
		}
		exp = max(min(e, 1<<20), -(1 << 20))
	}
	intPart, fracPart, _ := strings.Cut(mant, ".")
	all := intPart + fracPart
	digits := strings.TrimLeft(all, "0")
	// The value is 0.d1d2d3… × 10^point with d = digits.
	point := len(intPart) + exp - (len(all) - len(digits))
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return "0", true
	}
	if point < len(digits) {
		return "", false
	}
	if point > 40 { // far beyond any 64-bit integer; the caller only needs to know it does not fit
		return sign + strings.Repeat("9", 40), true
	}
	return sign + digits + strings.Repeat("0", point-len(digits)), true
}

// jsonKind returns the JSON type of a decoded value and, for numbers, its details.
func jsonKind(v any) (string, number) {
	switch x := v.(type) {
	case nil:
		return "null", number{}
	case bool:
		return "boolean", number{}
	case string:
		return "string", number{}
	case json.Number:
		return "number", parseNumber(string(x))
	case []any:
		return "array", number{}
	case map[string]any:
		return "object", number{}
	}
	return "unknown", number{}
}

func typeAllowed(types []string, kind string, num number) bool {
	for _, t := range types {
		switch {
		case t == kind && kind != "number":
			return true
		case t == "number" && kind == "number" && num.finite:
			return true
		case t == "integer" && kind == "number" && num.fitsInt64:
			return true
		}
	}
	return false
}

var typeNames = map[string]string{
	"string": "a string", "number": "a number", "integer": "an integer", "boolean": "a boolean",
	"object": "an object", "array": "an array", "null": "null",
}

func describeTypes(types []string) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = typeNames[t]
	}
	return strings.Join(names, " or ")
}

// decodeSchemaValue turns a value from a schema (enum entry, const) into the form parseJSON
// produces, so it compares with decoded arguments.
func decodeSchemaValue(e any) (any, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return parseJSON(b)
}

// equalDecoded reports whether two decoded JSON values are equal under JSON semantics
// (numbers compare by value, 1 == 1.0).
func equalDecoded(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		nx, ny := parseNumber(string(x)), parseNumber(string(y))
		if nx.finite && ny.finite {
			return nx.f == ny.f
		}
		return x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalDecoded(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalDecoded(xv, yv) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}
