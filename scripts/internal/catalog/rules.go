package catalog

import (
	"fmt"
	"go/token"
	"go/types"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkDoc applies the prose rules to the doc text of the declaration
// declName: there is a doc comment, and it begins with the declared name
// (for a type, optionally after "A", "An" or "The", as go vet's
// conventions allow). It reports whether there was any prose, so that a
// missing comment is one violation, not one per parameter.
func (x *extractor) checkDoc(fset *token.FileSet, pos token.Pos, kind, goName, declName, doc string, isType bool) bool {
	if strings.TrimSpace(doc) == "" {
		x.violate(fset, pos, kind, goName, "has no doc comment; write one that begins with %q", declName)
		return false
	}
	if !beginsWith(doc, declName, isType) {
		x.violate(fset, pos, kind, goName, "doc comment must begin with %q; it begins %q", declName, opening(doc))
	}
	return true
}

// beginsWith reports whether text begins with the word name, after an
// article when article is set.
func beginsWith(text, name string, article bool) bool {
	text = strings.TrimSpace(text)
	if article {
		for _, a := range []string{"A ", "An ", "The "} {
			if rest, ok := strings.CutPrefix(text, a); ok && hasWordPrefix(rest, name) {
				return true
			}
		}
	}
	return hasWordPrefix(text, name)
}

func hasWordPrefix(text, word string) bool {
	rest, ok := strings.CutPrefix(text, word)
	if !ok {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !isWordRune(r)
}

// opening returns the first few words of text, for messages.
func opening(text string) string {
	f := strings.Fields(text)
	if len(f) > 4 {
		f = append(f[:4], "…")
	}
	return strings.Join(f, " ")
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// mentions reports whether text holds name as a whole word: not inside a
// longer identifier, but bare, in backquotes, or before a dot or a
// punctuation mark all count.
func mentions(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if (start == 0 || !isWordRune(before)) && (end == len(text) || !isWordRune(after)) {
			return true
		}
		i = start + 1
	}
}

// returnsRE is a sentence saying what a function returns.
var returnsRE = regexp.MustCompile(`(?i)\b(returns?|reports|yields)\b`)

// checkSignature applies the parameter and result rules to sig, whose
// doc text is doc. exemptNext exempts a trailing next func parameter.
func (x *extractor) checkSignature(fset *token.FileSet, pos token.Pos, kind, goName, doc string, sig *types.Signature, exemptNext bool) {
	params := sig.Params()
	for i := range params.Len() {
		v := params.At(i)
		if i == 0 && isContext(v.Type()) {
			continue // the leading ctx context.Context
		}
		if exemptNext && i == params.Len()-1 && trailingNext(sig) != nil {
			continue
		}
		switch v.Name() {
		case "":
			x.violate(fset, pos, kind, goName, "parameter %d (%s) is unnamed; name it and say what it is in the doc comment", i+1, typeString(v.Type()))
		case "_":
			x.violate(fset, pos, kind, goName, "parameter %d (%s) is named _; name it and say what it is in the doc comment", i+1, typeString(v.Type()))
		default:
			if !mentions(doc, v.Name()) {
				x.violate(fset, pos, kind, goName, "parameter %s is not named in the doc comment", v.Name())
			}
		}
	}
	if !needsReturnSentence(sig) || returnsRE.MatchString(doc) {
		return
	}
	x.violate(fset, pos, kind, goName, "returns %s but the doc comment does not say what (write a sentence with \"returns\", \"reports\" or \"yields\", or name the results)", resultsString(sig))
}

// needsReturnSentence reports whether the results of sig must be described:
// not when there are none or only an error, nor when every result is named.
func needsReturnSentence(sig *types.Signature) bool {
	res := sig.Results()
	switch {
	case res.Len() == 0:
		return false
	case res.Len() == 1 && isError(res.At(0).Type()):
		return false
	}
	for i := range res.Len() {
		if n := res.At(i).Name(); n == "" || n == "_" {
			return true
		}
	}
	return false
}

// checkMode reports a mode that contradicts the signature of an event:
// a waterfall needs a trailing next func parameter and only a waterfall
// may have one; an emit event is fire-and-forget, so it has no results;
// a bail event stops at the first listener that returns a non-zero
// value, so it needs one.
func (x *extractor) checkMode(fset *token.FileSet, pos token.Pos, goName, mode string, sig *types.Signature) {
	next := trailingNext(sig)
	switch {
	case mode == "waterfall" && next == nil:
		x.violate(fset, pos, "event", goName, "has mode waterfall but no trailing next func parameter; a waterfall listener hands on with next(…)")
	case mode != "waterfall" && next != nil:
		x.violate(fset, pos, "event", goName, "has a trailing next func parameter (a waterfall) but mode %s; fix the mode or the signature", mode)
	}
	switch {
	case mode == "emit" && sig.Results().Len() > 0:
		x.violate(fset, pos, "event", goName, "has mode emit but returns %s; an emit event is fire-and-forget and its listeners' results would be dropped", resultsString(sig))
	case mode == "bail" && sig.Results().Len() == 0:
		x.violate(fset, pos, "event", goName, "has mode bail but returns nothing; a bail event stops at the first listener returning a non-zero value")
	}
}

// trailingNext returns the last parameter of sig when it is named next
// and is a function (a func literal type or a named func type).
func trailingNext(sig *types.Signature) *types.Var {
	params := sig.Params()
	if params.Len() == 0 {
		return nil
	}
	v := params.At(params.Len() - 1)
	if v.Name() != "next" {
		return nil
	}
	if _, ok := v.Type().Underlying().(*types.Signature); !ok {
		return nil
	}
	return v
}

func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func isError(t types.Type) bool { return types.Identical(t, types.Universe.Lookup("error").Type()) }

func typeString(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return p.Name() })
}

func resultsString(sig *types.Signature) string {
	res := sig.Results()
	var parts []string
	for i := range res.Len() {
		parts = append(parts, typeString(res.At(i).Type()))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return fmt.Sprintf("(%s)", strings.Join(parts, ", "))
}
