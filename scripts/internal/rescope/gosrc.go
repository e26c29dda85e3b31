package rescope

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
)

// isSpaceByte reports whether c ends a quoted token: a path never holds
// white space.
func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// quotedEdits returns an edit for each quoted occurrence of a From path in
// src: a quote (", ` or '), then From, then either the same quote or "/"
// and more characters up to the same quote, with no white space. The quote
// must sit right beside the path, so "x.yml", "x-config" or "cmd/x" do
// not match x. imports holds the offsets of the opening quotes of import
// paths, which are reported as CatImport; the rest are CatQuoted.
func quotedEdits(rel string, src []byte, rules Rules, imports map[int]bool, li lineIndex) []edit {
	var edits []edit
	for i := 0; i < len(src); i++ {
		q := src[i]
		if q != '"' && q != '`' && q != '\'' {
			continue
		}
		j := i + 1
		for j < len(src) && src[j] != q && !isSpaceByte(src[j]) {
			j++
		}
		if j >= len(src) || src[j] != q {
			continue
		}
		tok := string(src[i+1 : j])
		to, r, ok := rules.Map(tok)
		if !ok {
			continue // the next quote may open a token
		}
		cat := CatQuoted
		if imports[i] {
			cat = CatImport
		}
		line, col := li.pos(i + 1)
		edits = append(edits, edit{i + 1, i + 1 + len(r.From), r.To, Change{Path: rel, Line: line, Col: col, Category: cat, Old: tok, New: to}})
		i = j // past the closing quote
	}
	return edits
}

// importOffsets returns the offsets of the opening quotes of the import
// paths of the Go file src.
func importOffsets(rel string, src []byte) (map[int]bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ImportsOnly|parser.SkipObjectResolution)
	if err != nil {
		return nil, goError(err)
	}
	out := map[int]bool{}
	for _, imp := range f.Imports {
		out[fset.Position(imp.Path.Pos()).Offset] = true
	}
	return out, nil
}

// goEdits plans the rename of the Go file src: its quoted paths, then
// gofmt so that import blocks stay sorted. It returns the edits (for the
// report), the new bytes, and an error naming the position when the file
// does not parse before or after the rename. out is nil when nothing
// changes. A file that already uses a To path in an import but is not
// gofmt-clean gets one CatGofmt change, so a rename done by hand is sorted
// too.
func goEdits(rel string, src []byte, rules Rules, li lineIndex) (edits []edit, out []byte, err error) {
	if !containsAny(src, rules, true) && !containsAny(src, rules, false) {
		return nil, nil, nil
	}
	imports, err := importOffsets(rel, src)
	if err != nil {
		return nil, nil, err
	}
	edits = quotedEdits(rel, src, rules, imports, li)
	if len(edits) == 0 {
		if !importsTarget(src, rules, imports) {
			return nil, nil, nil
		}
		formatted, err := format.Source(src)
		if err != nil {
			return nil, nil, goError(err)
		}
		if bytes.Equal(formatted, src) {
			return nil, nil, nil
		}
		line, col := li.pos(0)
		return []edit{{change: Change{Path: rel, Line: line, Col: col, Category: CatGofmt}}}, formatted, nil
	}
	renamed := splice(src, edits)
	formatted, err := format.Source(renamed)
	if err != nil {
		err = goError(err)
		if pe, ok := err.(*posError); ok {
			return nil, nil, &posError{pe.line, pe.col, "does not parse after the rename: " + pe.msg}
		}
		return nil, nil, fmt.Errorf("does not parse after the rename: %w", err)
	}
	return edits, formatted, nil
}

// importsTarget reports whether one of the imports of src (opening quote
// offsets in imports) is a To path.
func importsTarget(src []byte, rules Rules, imports map[int]bool) bool {
	for off := range imports {
		end := bytes.IndexAny(src[off+1:], "\"`")
		if end >= 0 && rules.Targets(string(src[off+1:off+1+end])) {
			return true
		}
	}
	return false
}

// containsAny reports whether src holds the From (or, with from false, the
// To) path of some rule anywhere.
func containsAny(src []byte, rules Rules, from bool) bool {
	for _, r := range rules {
		p := r.To
		if from {
			p = r.From
		}
		if bytes.Contains(src, []byte(p)) {
			return true
		}
	}
	return false
}

// posError is an error at a line and column of a file.
type posError struct {
	line, col int
	msg       string
}

func (e *posError) Error() string { return e.msg }

// goError shortens a go/scanner error list to its first error, keeping
// its position.
func goError(err error) error {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		return &posError{e.Pos.Line, e.Pos.Column, e.Msg}
	}
	return err
}
