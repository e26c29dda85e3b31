package rescope

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/modfile"
)

// modSite is one module or package path in a go.mod or go.work line: the
// line, the index of the path among its tokens, and the path as parsed.
type modSite struct {
	line   *modfile.Line
	token  int
	path   string
	detail string
}

// siteIndex returns the token index of the first argument of l: 0 inside
// a block ("require ( path v )"), 1 after the verb otherwise.
func siteIndex(l *modfile.Line) int {
	if l.InBlock {
		return 0
	}
	return 1
}

// goModSites lists the path sites of a parsed go.mod: module, require,
// exclude, tool, and both sides of replace unless the right side is a
// local directory. retract names versions only, ignore names
// directories, and neither is a site.
func goModSites(f *modfile.File) []modSite {
	var out []modSite
	if f.Module != nil {
		out = append(out, modSite{f.Module.Syntax, siteIndex(f.Module.Syntax), f.Module.Mod.Path, "module"})
	}
	for _, r := range f.Require {
		out = append(out, modSite{r.Syntax, siteIndex(r.Syntax), r.Mod.Path, "require"})
	}
	for _, x := range f.Exclude {
		out = append(out, modSite{x.Syntax, siteIndex(x.Syntax), x.Mod.Path, "exclude"})
	}
	for _, t := range f.Tool {
		out = append(out, modSite{t.Syntax, siteIndex(t.Syntax), t.Path, "tool"})
	}
	return append(out, replaceSites(f.Replace)...)
}

// goWorkSites lists the path sites of a parsed go.work: the replace
// statements. A use statement names a directory, which keeps its name.
func goWorkSites(f *modfile.WorkFile) []modSite {
	return replaceSites(f.Replace)
}

func replaceSites(reps []*modfile.Replace) []modSite {
	var out []modSite
	for _, r := range reps {
		i := siteIndex(r.Syntax)
		out = append(out, modSite{r.Syntax, i, r.Old.Path, "replace"})
		if !modfile.IsDirectoryPath(r.New.Path) {
			arrow := i + 1
			if r.Old.Version != "" {
				arrow++
			}
			out = append(out, modSite{r.Syntax, arrow + 1, r.New.Path, "replace target"})
		}
	}
	return out
}

// modEdits returns the edits that rename the sites of a go.mod or go.work
// whose bytes are src, keeping everything else byte for byte. Each path
// keeps its quoting: a quoted path stays quoted.
func modEdits(rel string, src []byte, sites []modSite, rules Rules, cat Category, li lineIndex) ([]edit, error) {
	var edits []edit
	for _, s := range sites {
		to, _, ok := rules.Map(s.path)
		if !ok {
			continue
		}
		off, end, err := lineToken(src, s.line.Start.Byte, s.token)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s", rel, s.line.Start.Line, err)
		}
		raw := src[off:end]
		if got, err := unquoteToken(raw); err != nil || got != s.path {
			return nil, fmt.Errorf("%s:%d: found %q where the parser saw %s", rel, s.line.Start.Line, raw, s.path)
		}
		repl := modfile.AutoQuote(to)
		if raw[0] == '"' {
			repl = strconv.Quote(to)
		}
		line, col := li.pos(off)
		edits = append(edits, edit{off, end, repl, Change{Path: rel, Line: line, Col: col, Category: cat, Detail: s.detail, Old: s.path, New: to}})
	}
	return edits, nil
}

// lineToken returns the byte range of token number n (from 0) of the
// go.mod line that starts at byte start of src, lexing as modfile does:
// quoted strings, single punctuation characters, and runs of other
// printable non-space characters; a "//" comment ends the line.
func lineToken(src []byte, start, n int) (off, end int, err error) {
	i := start
	for k := 0; ; k++ {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r') {
			i++
		}
		if i >= len(src) || src[i] == '\n' || bytes.HasPrefix(src[i:], []byte("//")) {
			return 0, 0, fmt.Errorf("line has no token %d", n+1)
		}
		tokStart := i
		switch c := src[i]; c {
		case '(', ')', '[', ']', '{', '}', ',':
			i++
		case '"', '`':
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' && c == '"' {
					i++
				}
				i++
			}
			if i >= len(src) || src[i] != c {
				return 0, 0, fmt.Errorf("unterminated string")
			}
			i++
		default:
			for i < len(src) && !bytes.HasPrefix(src[i:], []byte("//")) {
				r, size := utf8.DecodeRune(src[i:])
				if r == ' ' || r == '(' || r == ')' || r == '[' || r == ']' || r == '{' || r == '}' || r == ',' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
					break
				}
				i += size
			}
		}
		if k == n {
			return tokStart, i, nil
		}
	}
}

func unquoteToken(raw []byte) (string, error) {
	if len(raw) > 0 && (raw[0] == '"' || raw[0] == '`') {
		return strconv.Unquote(string(raw))
	}
	return string(raw), nil
}
