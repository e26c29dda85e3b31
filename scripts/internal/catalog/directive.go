package catalog

import (
	"fmt"
	"go/ast"
	"regexp"
	"strings"
)

// Directive keys. A directive is a line comment "//catalog:KEY ARG" with
// no space after the slashes, so that go/doc treats it as a directive and
// it never shows in rendered documentation.
const (
	keyService = "service"
	keyEvent   = "event"
	keyMode    = "mode"
)

// Modes are the event modes, in the order messages list them.
var Modes = []string{"emit", "waterfall", "parallel", "serial", "bail"}

const prefix = "//catalog:"

// shape classifies a directive-shaped comment.
type shape int

const (
	shapeDirective shape = iota // //catalog:…, the real thing
	shapeSpaced                 // // catalog:…, a space after the slashes
	shapeCase                   // //Catalog:…, wrong letter case
	shapeNearMiss               // //catalgo:…, a misspelt prefix
)

var shapeRE = regexp.MustCompile(`^//( ?)([A-Za-z][A-Za-z0-9]*):(\S*)`)

// classify looks at the text of one comment (with its slashes) and
// reports whether it is a catalog directive or looks like a misspelt one.
// word is what stands before the colon and after it up to the first
// space, e.g. "catalgo:service".
func classify(text string) (kind shape, word string, ok bool) {
	m := shapeRE.FindStringSubmatch(text)
	if m == nil {
		return 0, "", false
	}
	space, name, rest := m[1] != "", m[2], m[3]
	word = name + ":" + rest
	switch {
	case name == "catalog" && !space:
		return shapeDirective, word, true
	case rest == "":
		// "// catalog: the list…" is prose, not a directive.
		return 0, "", false
	case strings.EqualFold(name, "catalog") && space:
		return shapeSpaced, word, true
	case strings.EqualFold(name, "catalog"):
		return shapeCase, word, true
	case !space && len(name) >= 5 && editDistance(strings.ToLower(name), "catalog") <= 2:
		return shapeNearMiss, word, true
	}
	return 0, "", false
}

func typoProblem(kind shape, word, text string) string {
	fixed := prefix + text[strings.Index(text, ":")+1:]
	switch kind {
	case shapeSpaced:
		return fmt.Sprintf("write the directive with no space after the slashes (%s), or go/doc shows it as prose", firstField(fixed))
	case shapeCase:
		return fmt.Sprintf("directive prefix must be lower case: %s", firstField(fixed))
	default:
		return fmt.Sprintf("unknown directive prefix; did you mean %s?", firstField(fixed))
	}
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// directive is one parsed //catalog: line.
type directive struct {
	Key  string   // "service", "event", "mode", or what was written
	Args []string // the words after the key
	Pos  ast.Node // the comment, for its position
}

// directives returns the //catalog: lines of the comment group g, in order.
func directives(g *ast.CommentGroup) []directive {
	if g == nil {
		return nil
	}
	var out []directive
	for _, c := range g.List {
		if !strings.HasPrefix(c.Text, prefix) {
			continue
		}
		f := strings.Fields(c.Text[len(prefix):])
		d := directive{Pos: c}
		if len(f) > 0 && !strings.HasPrefix(c.Text[len(prefix):], " ") {
			d.Key, d.Args = f[0], f[1:]
		} else {
			d.Args = f
		}
		out = append(out, d)
	}
	return out
}

// withoutDirectives returns g minus its //catalog: lines, so that Text()
// gives the prose even for a directive go/doc would not recognise (such
// as "//catalog:Service", whose upper-case letter makes go/doc keep it).
func withoutDirectives(g *ast.CommentGroup) *ast.CommentGroup {
	if g == nil {
		return nil
	}
	out := &ast.CommentGroup{}
	for _, c := range g.List {
		if !strings.HasPrefix(c.Text, prefix) {
			out.List = append(out.List, c)
		}
	}
	if len(out.List) == 0 {
		return nil
	}
	return out
}

// keyRE is the form of service keys and event names: lower-case words of
// letters, digits and hyphens, separated by slashes.
var keyRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*(/[a-z0-9]+(-[a-z0-9]+)*)*$`)

func validKey(s string) bool { return keyRE.MatchString(s) }

func validEventName(s string) bool { return validKey(s) && strings.Contains(s, "/") }

func validMode(s string) bool {
	for _, m := range Modes {
		if s == m {
			return true
		}
	}
	return false
}

func modeList() string {
	return strings.Join(Modes[:len(Modes)-1], ", ") + " or " + Modes[len(Modes)-1]
}
