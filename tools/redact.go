package tools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
)

// Secret is a value that must never reach a model, with the Name it is known by (the
// environment variable that held it, for instance).
type Secret struct {
	Name  string
	Value string
}

// MinSecretLen is the shortest secret value [Redact] replaces: a shorter value ("1", "true",
// a port number) would also match ordinary text and say nothing worth hiding.
const MinSecretLen = 8

// Redact returns an [After] stage that replaces every occurrence of the value of each of
// secrets in the text blocks of a result, failed results included, and in the string values of
// its structured content, with "[redacted: NAME]".
// Values shorter than [MinSecretLen] bytes are ignored; a value held under several names is
// reported under the first. Where two values overlap, the longer one is replaced. A result
// without any occurrence is accepted as it is.
//
// Redact sees the text as the model would read it, so it catches a value printed whole; it
// cannot catch a value split across two results, cut at a truncation, or transformed (encoded,
// reversed, compressed).
func Redact(secrets []Secret) After {
	rep := RedactText(secrets)
	if rep == nil {
		return func(context.Context, Call, Result) Outcome { return Outcome{Action: Accept} }
	}
	return func(_ context.Context, _ Call, res Result) Outcome {
		var content []Content
		for i, c := range res.Content {
			if c.Type != "text" {
				continue
			}
			clean := rep(c.Text)
			if clean == c.Text {
				continue
			}
			if content == nil {
				content = slices.Clone(res.Content)
			}
			content[i].Text = clean
		}
		structured, changed := redactJSON(res.Structured, rep)
		if content == nil && !changed {
			return Outcome{Action: Accept}
		}
		if content != nil {
			res.Content = content
		}
		res.Structured = structured
		return Outcome{Action: Replace, Result: res}
	}
}

// redactJSON applies rep to every string value of the JSON object raw (the structured content
// carries the output too) and returns the result re-encoded, with true, or raw and false when
// nothing changed or raw is not JSON.
func redactJSON(raw json.RawMessage, rep func(string) string) (json.RawMessage, bool) {
	if len(raw) == 0 {
		return raw, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw, false
	}
	v, changed := redactValue(v, rep)
	if !changed {
		return raw, false
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return raw, false
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), true
}

// redactValue applies rep to the strings of a decoded JSON value.
func redactValue(v any, rep func(string) string) (any, bool) {
	changed := false
	switch x := v.(type) {
	case string:
		clean := rep(x)
		return clean, clean != x
	case []any:
		for i, e := range x {
			var c bool
			x[i], c = redactValue(e, rep)
			changed = changed || c
		}
	case map[string]any:
		for k, e := range x {
			var c bool
			x[k], c = redactValue(e, rep)
			changed = changed || c
		}
	}
	return v, changed
}

// RedactText returns the replacement [Redact] applies to each text block, for text that leaves
// the harness by another way (a progress message): every value of secrets of at least
// [MinSecretLen] bytes becomes "[redacted: NAME]", the longer first where two overlap. It
// returns nil when no secret is long enough, so a caller can skip the work.
func RedactText(secrets []Secret) func(string) string {
	var list []Secret
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s.Value) >= MinSecretLen && !seen[s.Value] {
			seen[s.Value] = true
			list = append(list, s)
		}
	}
	if len(list) == 0 {
		return nil
	}
	// strings.Replacer tries the old strings in argument order at each position: longest first.
	slices.SortStableFunc(list, func(a, b Secret) int { return cmp.Compare(len(b.Value), len(a.Value)) })
	pairs := make([]string, 0, 2*len(list))
	for _, s := range list {
		pairs = append(pairs, s.Value, "[redacted: "+s.Name+"]")
	}
	return strings.NewReplacer(pairs...).Replace
}
