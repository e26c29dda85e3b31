package bashpolicy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dsh-go/dsh/tools"
)

// Rules is a policy as its file holds it:
//
//	{"default": "ask", "unknown": "ask", "allow": ["ls", "git status", "go test *"], "ask": ["git push *"], "deny": ["rm"]}
//
// Default is the outcome of a simple command no rule matches, Unknown the outcome of what the
// policy cannot judge (a command name that is not a literal word, a script, a shell fed from a
// pipe, a syntax error); each is "allow", "ask" or "deny", and empty means "ask". Allow, Ask and
// Deny are the rules: each is words separated by spaces, matched against the start of a simple
// command's words after bash's quote removal; "*" as the last word matches any remaining words,
// and a rule of one word matches that command with any arguments.
type Rules struct {
	Default string   `json:"default,omitempty"`
	Unknown string   `json:"unknown,omitempty"`
	Allow   []string `json:"allow,omitempty"`
	Ask     []string `json:"ask,omitempty"`
	Deny    []string `json:"deny,omitempty"`
}

// Policy is a compiled set of [Rules]. It is immutable and safe for concurrent use.
type Policy struct {
	rules   Rules // as given, for Describe
	def     tools.Verdict
	unknown tools.Verdict
	byName  map[string][]rule // command name → its rules, deny first, then ask, then allow
	any     []rule            // rules whose name is "*"
}

// rule is one compiled rule. words are the words after the command name; rest is set when the
// rule ends with "*" (or has one word), so that any further words match.
type rule struct {
	text    string
	verdict tools.Verdict
	words   []string
	rest    bool
}

// Load reads the policy file at path (see [Rules] for its form) and returns the policy. It
// returns an error naming the file and the problem: the file cannot be read, is not one JSON
// object, has a key other than default, unknown, allow, ask and deny, or a bad outcome or rule
// (see [New]).
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bashpolicy: %w", err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("bashpolicy: policy file %s: %s", path, strings.TrimPrefix(err.Error(), "bashpolicy: "))
	}
	return p, nil
}

// Parse decodes data, a policy file's content, and returns the policy. It returns the errors
// [Load] describes.
func Parse(data []byte) (*Policy, error) {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("bashpolicy: want one JSON object, such as {\"default\": \"ask\", \"allow\": [\"ls\"]}")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Rules
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("bashpolicy: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("bashpolicy: unexpected data after the JSON object")
	}
	return New(r)
}

// jsonProblem words a decoding error of a policy file for a person.
func jsonProblem(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown key " + name + "; the keys are default, unknown, allow, ask and deny"
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return "want one JSON object"
		}
		return fmt.Sprintf("%q must be %s", te.Field, map[bool]string{true: "a list of strings", false: "a string"}[strings.Contains("allow ask deny", te.Field)])
	}
	return "not valid JSON: " + strings.TrimPrefix(msg, "json: ")
}

// New compiles r. It returns an error naming the problem, and the rule when it is a rule's: an
// outcome other than "allow", "ask" or "deny"; a rule that is empty, has "*" anywhere but last,
// holds quotes, a backslash or a "$" (rules are matched after bash has removed quotes and cannot
// match an expansion), or names the program by a path (rules name programs by their base name).
func New(r Rules) (*Policy, error) {
	p := &Policy{rules: r, byName: map[string][]rule{}}
	var err error
	if p.def, err = outcome("default", r.Default); err != nil {
		return nil, err
	}
	if p.unknown, err = outcome("unknown", r.Unknown); err != nil {
		return nil, err
	}
	for _, list := range []struct {
		verdict tools.Verdict
		rules   []string
	}{{tools.VerdictDeny, r.Deny}, {tools.VerdictAsk, r.Ask}, {tools.VerdictAllow, r.Allow}} {
		for i, text := range list.rules {
			ru, name, err := compileRule(text, list.verdict)
			if err != nil {
				return nil, fmt.Errorf("bashpolicy: %s rule %d %q: %v", list.verdict, i+1, text, err)
			}
			if name == "*" {
				p.any = append(p.any, ru)
			} else {
				p.byName[name] = append(p.byName[name], ru)
			}
		}
	}
	return p, nil
}

// outcome parses the value of the key name.
func outcome(name, v string) (tools.Verdict, error) {
	switch v {
	case "", "ask":
		return tools.VerdictAsk, nil
	case "allow":
		return tools.VerdictAllow, nil
	case "deny":
		return tools.VerdictDeny, nil
	}
	return 0, fmt.Errorf("bashpolicy: %q must be \"allow\", \"ask\" or \"deny\", got %q", name, v)
}

// compileRule compiles the rule text with verdict v and returns it with the command name it is
// for ("*" for every command).
func compileRule(text string, v tools.Verdict) (rule, string, error) {
	ws := strings.Fields(text)
	if len(ws) == 0 {
		return rule{}, "", errors.New("empty rule")
	}
	for i, w := range ws {
		if w == "*" && i != len(ws)-1 {
			return rule{}, "", errors.New(`"*" must be the last word`)
		}
		if strings.ContainsAny(w, "'\"\\$`") {
			return rule{}, "", fmt.Errorf("word %q holds a quote, a backslash or a $; rules match words after bash has removed quotes, so write the words bare", w)
		}
	}
	name := ws[0]
	if strings.Contains(name, "/") {
		base := name[strings.LastIndexByte(name, '/')+1:]
		return rule{}, "", fmt.Errorf("name the program by its base name (%q): a path in a system program directory is matched by its base name, any other path is never matched", base)
	}
	r := rule{text: strings.Join(ws, " "), verdict: v, words: ws[1:]}
	if n := len(r.words); n > 0 && r.words[n-1] == "*" {
		r.words, r.rest = r.words[:n-1], true
	}
	if len(ws) == 1 {
		r.rest = true // a rule of one word matches that command with any arguments
	}
	return r, name, nil
}

// match is how a rule matches a simple command.
type match uint8

const (
	noMatch    match = iota
	maybeMatch       // it matches for some values of the words the policy cannot read
	isMatch
)

// match reports whether r matches the simple command ws (ws[0] is the command, already known to
// be r's).
func (r rule) match(ws []word) match {
	result := isMatch
	for i, want := range r.words {
		if i+1 >= len(ws) {
			return shorter(ws[1:])
		}
		w := ws[i+1]
		switch {
		case !w.single:
			return maybeMatch // it may be any number of words: every later position is unknown
		case !w.lit:
			result = maybeMatch
		case w.text != want:
			return noMatch
		}
	}
	if r.rest {
		return result
	}
	extra := ws[len(r.words)+1:]
	for _, w := range extra {
		if w.single {
			return noMatch // at least one word more than the rule has
		}
	}
	if len(extra) > 0 {
		return maybeMatch // words that may expand to nothing
	}
	return result
}

// shorter is the match of a rule longer than the command's words ws: none, unless a word may
// expand to several.
func shorter(ws []word) match {
	for _, w := range ws {
		if !w.single {
			return maybeMatch
		}
	}
	return noMatch
}

// judgeRules returns the finding for the simple command ws, whose program name is name: its
// verdict, the rule that decided and why.
func (p *Policy) judgeRules(name string, ws []word) (v tools.Verdict, r string, why string, unknown bool) {
	var maybeDeny, maybeAllow, ask, allow *rule
	for _, list := range [][]rule{p.byName[name], p.any} {
		for i := range list {
			ru := &list[i]
			m := ru.match(ws)
			switch {
			case m == noMatch:
			case ru.verdict == tools.VerdictDeny && m == isMatch:
				return tools.VerdictDeny, ru.text, fmt.Sprintf("matches the deny rule %q", ru.text), false
			case ru.verdict == tools.VerdictDeny:
				maybeDeny = first(maybeDeny, ru)
			case ru.verdict == tools.VerdictAsk:
				ask = first(ask, ru)
			case m == isMatch:
				allow = first(allow, ru)
			default:
				maybeAllow = first(maybeAllow, ru)
			}
		}
	}
	switch {
	case maybeDeny != nil:
		return p.unknown, maybeDeny.text, fmt.Sprintf("may match the deny rule %q: some of its words are not literal", maybeDeny.text), true
	case ask != nil:
		return tools.VerdictAsk, ask.text, fmt.Sprintf("matches the ask rule %q", ask.text), false
	case allow != nil:
		return tools.VerdictAllow, allow.text, "", false
	case maybeAllow != nil:
		return p.unknown, maybeAllow.text, fmt.Sprintf("may or may not match the allow rule %q: some of its words are not literal", maybeAllow.text), true
	}
	return p.def, "", fmt.Sprintf("matches no rule (the default is %s)", p.def), false
}

func first(have, r *rule) *rule {
	if have != nil {
		return have
	}
	return r
}

// Describe returns the policy in a few sentences for the model, to append to a bash tool's
// description: what is allowed, asked and denied, what happens to the rest and to what the
// policy cannot judge, and what a refusal means.
func (p *Policy) Describe() string {
	var b strings.Builder
	b.WriteString("Commands are checked against a permission policy before they run, on the parsed command: every simple command in it (pipelines, lists, substitutions, `bash -c` strings, the commands run by env, xargs, find -exec and similar) must pass.")
	list := func(label string, rules []string) {
		if len(rules) > 0 {
			fmt.Fprintf(&b, " %s: %s.", label, quoteList(rules))
		}
	}
	list("Allowed", p.rules.Allow)
	list("Asked (a person must approve)", p.rules.Ask)
	list("Denied", p.rules.Deny)
	fmt.Fprintf(&b, " Any other command: %s.", p.verbOf(p.def))
	fmt.Fprintf(&b, " What the policy cannot read (a command name that is not a literal word, a script run by path or by source, a shell fed from a pipe, a syntax error): %s.", p.verbOf(p.unknown))
	b.WriteString(" Writing by redirection outside the workspace is asked.")
	b.WriteString(" A refused call returns an error that says why: do not try to get the same effect another way.")
	return b.String()
}

func (p *Policy) verbOf(v tools.Verdict) string {
	return map[tools.Verdict]string{tools.VerdictAllow: "allowed", tools.VerdictAsk: "asked", tools.VerdictDeny: "denied"}[v]
}

// quoteList returns the rules quoted with backticks and joined with commas, up to a bound that
// keeps a large policy from swamping the tool description.
func quoteList(rules []string) string {
	const most = 40
	var parts []string
	for i, r := range rules {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(rules)-most))
			break
		}
		parts = append(parts, "`"+strings.Join(strings.Fields(r), " ")+"`")
	}
	return strings.Join(parts, ", ")
}
