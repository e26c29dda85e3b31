package bashpolicy

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// word is one word of a simple command as far as the policy can know it before bash runs.
//
// text is the word after quote removal (backslashes, quotes and ANSI-C quoting resolved); it is
// meaningful only when lit is set, that is when the word holds no expansion, glob or tilde whose
// value depends on the shell's state. single is set when the word is exactly one field whatever
// its value: a literal word, or a quoted expansion such as "$x"; an unquoted expansion or a glob
// may become any number of fields. src is the word as written, for messages.
type word struct {
	text   string
	src    string
	lit    bool
	single bool
}

// unknownWord is a word of unknown value and field count, such as the arguments xargs appends.
func unknownWord(src string) word { return word{src: src} }

// maxBraceWords bounds the words one brace expansion may produce before the policy gives up on
// the command: {1..100000} is not a command a policy needs to read word by word.
const maxBraceWords = 64

// words resolves the words of a simple command as written in src, with brace expansion done the
// way bash does it before anything else. It returns false when a brace expansion is too large to
// follow.
func words(src string, args []*syntax.Word) ([]word, bool) {
	out := make([]word, 0, len(args))
	for _, w := range args {
		if !mayBrace(w) {
			out = append(out, resolve(src, w))
			continue
		}
		split := *w // SplitBraces rewrites the word it is given; the tree stays as parsed
		if !syntax.SplitBraces(&split) {
			out = append(out, resolve(src, w))
			continue
		}
		n := 0
		for x, err := range expand.BracesSeq(nil, &split) {
			n++
			if err != nil || n > maxBraceWords {
				return nil, false
			}
			r := resolve(src, x)
			r.src = sourceOf(src, w) // every expanded word is reported as the word written
			out = append(out, r)
		}
	}
	return out, true
}

// mayBrace reports whether the word w has an unquoted "{", the start of any brace expansion.
func mayBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// resolve returns what the policy knows of the word w of src.
func resolve(src string, w *syntax.Word) word {
	r := word{src: sourceOf(src, w), lit: true, single: true}
	quoted := false
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if hasGlob(p.Value) {
				r.lit, r.single = false, false
			}
			if strings.ContainsRune(p.Value, '\\') {
				quoted = true
			}
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				r.lit = false // the home directory of the user bash runs as
			}
		case *syntax.SglQuoted:
			quoted = true
		case *syntax.DblQuoted:
			quoted = true
			if p.Dollar { // $"…" is translated through the locale's message catalog
				r.lit = false
			}
			for _, in := range p.Parts {
				if _, ok := in.(*syntax.Lit); !ok {
					r.lit = false
				}
				if pe, ok := in.(*syntax.ParamExp); ok && multiField(pe) {
					r.single = false
				}
			}
		case *syntax.ProcSubst:
			r.lit = false // a /dev/fd path: one field
		default: // unquoted parameter, command or arithmetic expansion, extended glob
			r.lit, r.single = false, false
		}
	}
	if !r.lit {
		return r
	}
	if !quoted && len(w.Parts) == 1 {
		r.text = w.Parts[0].(*syntax.Lit).Value
		return r
	}
	if text, ok := plainText(w); ok {
		r.text = text
		return r
	}
	fields, err := expand.Fields(&expand.Config{}, w)
	if err != nil || len(fields) != 1 {
		r.lit = false
		return r
	}
	r.text = fields[0]
	return r
}

// plainText returns the value of the literal word w when no part of it needs more than its
// quotes removed (no backslash, no ANSI-C quoting), and false otherwise.
func plainText(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsRune(p.Value, '\\') {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, in := range p.Parts {
				l, ok := in.(*syntax.Lit)
				if !ok || strings.ContainsRune(l.Value, '\\') {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// multiField reports whether the quoted expansion p may still be several fields: "$@",
// "${a[@]}", "${!prefix@}".
func multiField(p *syntax.ParamExp) bool {
	if p.Param != nil && p.Param.Value == "@" {
		return true
	}
	if p.Names != 0 {
		return true
	}
	if w, ok := p.Index.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") {
		return true
	}
	return false
}

// hasGlob reports whether the unquoted literal s holds a pattern character that bash would
// expand against file names: an unescaped * or ?, or an unescaped [ with a ] after it.
func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// sourceOf returns the text of node n in src, or "" when n's positions do not fall in src.
func sourceOf(src string, n syntax.Node) string {
	start, end := n.Pos().Offset(), n.End().Offset()
	if !n.Pos().IsValid() || !n.End().IsValid() || start > end || end > uint(len(src)) {
		return ""
	}
	return src[start:end]
}

// systemDirs are the directories whose programs the policy names by their base name: /bin/rm is
// rm. They belong to the system, not to the workspace, so a file there is the program its name
// says.
var systemDirs = map[string]bool{
	"/bin": true, "/sbin": true,
	"/usr/bin": true, "/usr/sbin": true,
	"/usr/local/bin": true, "/usr/local/sbin": true,
}

// programName returns the name the rules know the command word name by, and true: the name
// itself when it holds no slash, its base name when it is a path into one of the systemDirs. Any
// other path (./ls, a file in /tmp, a copy in the workspace) is not a program the policy knows,
// and programName returns false.
func programName(name string) (string, bool) {
	if !strings.Contains(name, "/") {
		return name, name != ""
	}
	if !path.IsAbs(name) {
		return "", false
	}
	dir, base := path.Split(path.Clean(name))
	if base == "" || base == "." || base == ".." || !systemDirs[strings.TrimSuffix(dir, "/")] {
		return "", false
	}
	return base, true
}
