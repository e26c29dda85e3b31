package catalog

import (
	"go/doc/comment"
	"go/types"
	"strings"
	"unicode"
	"unicode/utf8"
)

// linker returns the catalogue anchor of the Go symbol a doc link names
// (importPath, and for a method recv, and name), or "" when the catalogue
// does not hold it.
type linker func(importPath, recv, name string) string

// Prose renders the Go doc comment text (as returned by
// (*ast.CommentGroup).Text) as Markdown: each paragraph on one physical
// line, lists kept as lists, code blocks fenced, headings in bold, and
// every character that Markdown would otherwise read as markup escaped,
// except spans in backquotes, which stay code. Blocks are separated by a
// blank line; the result has no trailing newline. Doc links such as
// [Executor] are not resolved: they render as code.
func Prose(text string) string { return renderProse(text, nil, nil) }

// renderProse is Prose with doc links resolved against dc and linked
// to catalogue anchors by link.
func renderProse(text string, dc *docContext, link linker) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	p := &comment.Parser{}
	if dc != nil && dc.pkg != nil {
		p.LookupPackage = func(name string) (string, bool) {
			if name == dc.pkg.Name() {
				return "", true
			}
			path, ok := dc.imports[name]
			return path, ok
		}
		p.LookupSym = func(recv, name string) bool {
			scope := dc.pkg.Scope()
			if recv == "" {
				return scope.Lookup(name) != nil
			}
			tn, ok := scope.Lookup(recv).(*types.TypeName)
			if !ok {
				return false
			}
			obj, _, _ := types.LookupFieldOrMethod(tn.Type(), true, dc.pkg, name)
			return obj != nil
		}
	}
	w := &mdWriter{link: link}
	if dc != nil && dc.pkg != nil {
		w.pkgPath = dc.pkg.Path()
	}
	w.blocks(p.Parse(text).Content)
	return strings.Join(w.out, "\n\n")
}

type mdWriter struct {
	pkgPath string
	link    linker
	out     []string // rendered blocks
}

func (w *mdWriter) blocks(bs []comment.Block) {
	for _, b := range bs {
		switch b := b.(type) {
		case *comment.Paragraph:
			if s := w.paragraph(b.Text); s != "" {
				w.out = append(w.out, s)
			}
		case *comment.Heading:
			if s := w.paragraph(b.Text); s != "" {
				w.out = append(w.out, "**"+s+"**")
			}
		case *comment.Code:
			w.out = append(w.out, fence(b.Text))
		case *comment.List:
			w.out = append(w.out, w.list(b))
		}
	}
}

func (w *mdWriter) list(l *comment.List) string {
	var items []string
	for _, it := range l.Items {
		marker := "- "
		if it.Number != "" {
			marker = it.Number + ". "
			if len(it.Number) > 9 { // Markdown list numbers have at most 9 digits
				marker = "- "
			}
		}
		var paras []string
		for _, b := range it.Content {
			if p, ok := b.(*comment.Paragraph); ok {
				if s := w.paragraph(p.Text); s != "" {
					paras = append(paras, s)
				}
			}
		}
		if len(paras) == 0 {
			items = append(items, strings.TrimRight(marker, " "))
			continue
		}
		indent := strings.Repeat(" ", len(marker))
		item := marker + paras[0]
		for _, p := range paras[1:] {
			item += "\n\n" + indent + p
		}
		items = append(items, item)
	}
	sep := "\n"
	if l.BlankBetween() {
		sep = "\n\n"
	}
	return strings.Join(items, sep)
}

// paragraph renders inline text on one line, escaped, with its start made
// safe from block syntax.
func (w *mdWriter) paragraph(ts []comment.Text) string {
	var b strings.Builder
	w.texts(&b, ts)
	return safeStart(strings.TrimSpace(b.String()))
}

func (w *mdWriter) texts(b *strings.Builder, ts []comment.Text) {
	for i, t := range ts {
		switch t := t.(type) {
		case comment.Plain:
			s := oneLine(string(t))
			// A "!" right before a link would make it an image.
			bang := i+1 < len(ts) && strings.HasSuffix(s, "!") && w.startsLink(ts[i+1])
			if bang {
				s = s[:len(s)-1]
			}
			writePlain(b, s)
			if bang {
				b.WriteString("\\!")
			}
		case comment.Italic:
			s := oneLine(string(t))
			if strings.TrimSpace(s) == "" {
				b.WriteString(s)
				continue
			}
			b.WriteString("*")
			escape(b, s)
			b.WriteString("*")
		case *comment.Link:
			w.linkText(b, t)
		case *comment.DocLink:
			w.docLink(b, t)
		}
	}
}

// startsLink reports whether t renders as a Markdown link, "[" first.
func (w *mdWriter) startsLink(t comment.Text) bool {
	switch t := t.(type) {
	case *comment.Link:
		return true
	case *comment.DocLink:
		if w.link == nil {
			return false
		}
		path := t.ImportPath
		if path == "" {
			path = w.pkgPath
		}
		return w.link(path, t.Recv, t.Name) != ""
	}
	return false
}

func (w *mdWriter) linkText(b *strings.Builder, l *comment.Link) {
	if l.Auto && autolinkSafe(l.URL) {
		b.WriteString("<" + l.URL + ">")
		return
	}
	var inner strings.Builder
	w.texts(&inner, l.Text)
	if strings.TrimSpace(inner.String()) == "" || !destinationSafe(l.URL) {
		b.WriteString(inner.String())
		return
	}
	b.WriteString("[" + inner.String() + "](" + escapeDestination(l.URL) + ")")
}

func (w *mdWriter) docLink(b *strings.Builder, l *comment.DocLink) {
	var plain strings.Builder
	for _, t := range l.Text {
		plain.WriteString(textOf(t))
	}
	s := oneLine(plain.String())
	code := codeSpan(s)
	if w.link != nil {
		path := l.ImportPath
		if path == "" {
			path = w.pkgPath
		}
		if anchor := w.link(path, l.Recv, l.Name); anchor != "" {
			b.WriteString("[" + code + "](#" + anchor + ")")
			return
		}
	}
	b.WriteString(code)
}

// textOf returns the plain text of t.
func textOf(t comment.Text) string {
	switch t := t.(type) {
	case comment.Plain:
		return string(t)
	case comment.Italic:
		return string(t)
	case *comment.Link:
		var s strings.Builder
		for _, x := range t.Text {
			s.WriteString(textOf(x))
		}
		return s.String()
	case *comment.DocLink:
		var s strings.Builder
		for _, x := range t.Text {
			s.WriteString(textOf(x))
		}
		return s.String()
	}
	return ""
}

// oneLine turns the line breaks of a paragraph into spaces.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// codeSpan returns s as a Markdown code span, with delimiters longer than
// any backquote run inside and padding when s starts or ends with one.
// An empty or blank s is escaped text instead (a code span cannot hold it).
func codeSpan(s string) string {
	if strings.TrimSpace(s) == "" {
		var b strings.Builder
		escape(&b, s)
		return b.String()
	}
	n := longestRun(s, '`') + 1
	d := strings.Repeat("`", n)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || (strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ")) {
		return d + " " + s + " " + d
	}
	return d + s + d
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// writePlain writes plain doc text: a span between two backquote runs of
// the same length stays a code span, the rest is escaped.
func writePlain(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			j := strings.IndexByte(s[i:], '`')
			if j < 0 {
				j = len(s) - i
			}
			escapeAt(b, s, i, i+j)
			i += j
			continue
		}
		n := 1
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		if end := closingRun(s, i+n, n); end >= 0 && strings.TrimSpace(s[i+n:end]) != "" {
			b.WriteString(s[i : end+n])
			i = end + n
			continue
		}
		for range n {
			b.WriteString("\\`")
		}
		i += n
	}
}

// closingRun returns the index of the next run of exactly n backquotes in
// s at or after from, or -1.
func closingRun(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := 1
		for i+m < len(s) && s[i+m] == '`' {
			m++
		}
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func escape(b *strings.Builder, s string) { escapeAt(b, s, 0, len(s)) }

// escapeAt writes s[from:to] with Markdown's inline markup escaped. The
// whole of s is consulted to see whether an underscore is inside a word
// (where it is never emphasis).
func escapeAt(b *strings.Builder, s string, from, to int) {
	for i := from; i < to; {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\\', '*', '[', ']', '<', '>', '&', '~', '`', '|':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '_':
			before, _ := utf8.DecodeLastRuneInString(s[:i])
			after, _ := utf8.DecodeRuneInString(s[i+1:])
			if i > 0 && i+1 < len(s) && isAlnum(before) && isAlnum(after) {
				b.WriteByte('_')
			} else {
				b.WriteString("\\_")
			}
		case utf8.RuneError:
			if size == 1 {
				b.WriteString(s[i : i+1])
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// safeStart escapes what would make a line start a block other than a
// paragraph: a heading, a list item, a thematic break, a setext underline.
func safeStart(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '#', '-', '+', '=':
		return "\\" + s
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return s[:i] + "\\" + s[i:]
	}
	return s
}

// fence returns code as a fenced block whose fence is longer than any
// backquote run in it.
func fence(code string) string {
	code = strings.TrimSuffix(code, "\n")
	f := strings.Repeat("`", max(3, longestRun(code, '`')+1))
	return f + "\n" + code + "\n" + f
}

// autolinkSafe reports whether url can be written as <url>.
func autolinkSafe(url string) bool {
	if url == "" || !strings.Contains(url, ":") {
		return false
	}
	for _, r := range url {
		if r <= ' ' || r == '<' || r == '>' || r == 0x7f {
			return false
		}
	}
	return true
}

func destinationSafe(url string) bool {
	for _, r := range url {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	return url != ""
}

// escapeDestination escapes what would end a link destination early.
func escapeDestination(url string) string {
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`, `<`, `\<`, `>`, `\>`)
	return r.Replace(url)
}
