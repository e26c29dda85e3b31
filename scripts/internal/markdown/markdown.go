// Package markdown loads Markdown files for the doc gates: it reads a file,
// rejects what is not text, parses it with goldmark (CommonMark plus GFM and
// footnotes, as GitHub renders it) and maps byte offsets to lines and
// columns. Its helpers give a heading's rendered text, GitHub's heading
// slugs, the HTML tags in raw HTML, and the code fences and HTML blocks that
// are never closed.
package markdown

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"github.com/dsh-go/dsh/scripts/internal/report"
	"github.com/dsh-go/dsh/scripts/internal/rootpath"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// OutsideRoot is the message of the finding on a file that a symbolic link
// leads outside the root.
const OutsideRoot = "a symbolic link leads outside the repository root; not checked"

// MaxFileSize is the largest file the gates read. Anything larger is
// reported instead of parsed, so one stray dump cannot stall a run.
const MaxFileSize = 32 << 20

// md is shared by every parse; goldmark parsers keep no state between
// calls to Parse, so it is safe for concurrent use.
var md = goldmark.New(
	goldmark.WithParser(newParser()),
	goldmark.WithExtensions(append(gfm, extension.Footnote)...),
)

// File is a parsed Markdown file. It is read-only after Parse returns and
// may be shared between goroutines.
type File struct {
	Path string   // relative to the root, '/' separators
	Src  []byte   // the bytes that were parsed
	Doc  ast.Node // the goldmark document

	// Incomplete is set when Parse stopped short of the end of the file's
	// link reference definitions because they would take too long to
	// parse (see refdefs.go), or refused to nest containers deeper than
	// [MaxDepth]: Doc is then not what GitHub shows, and the gates report
	// this finding instead of checking the file.
	Incomplete *report.Finding

	lineStarts []int // byte offset of the start of each line
}

// Parse parses src as the file at path (root-relative, used in findings).
// Parsing never fails: any byte sequence is some Markdown document.
func Parse(path string, src []byte) *File {
	f := &File{Path: path, Src: src}
	f.lineStarts = append(f.lineStarts, 0)
	for i, b := range src {
		if b == '\n' {
			f.lineStarts = append(f.lineStarts, i+1)
		}
	}
	pc := parser.NewContext()
	f.Doc = md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
	if off, ok := pc.Get(deepKey).(int); ok {
		fd := f.Finding(off, fmt.Sprintf("lists and block quotes nest more than %d deep from here on; not checked", MaxDepth))
		fd.Reason = "file"
		f.Incomplete = &fd
	} else if off, ok := pc.Get(incompleteKey).(int); ok {
		fd := f.Finding(off, fmt.Sprintf("the link reference definitions from here on are too costly to parse (a definition, or an unclosed bracket or quote, runs over more than %d lines that start with '['); not checked", refDirect))
		fd.Reason = "file"
		f.Incomplete = &fd
	}
	return f
}

// Position returns the 1-based line and byte column of the byte offset off.
// Offsets outside the source are clamped to it.
func (f *File) Position(off int) (line, col int) {
	off = max(0, min(off, len(f.Src)))
	i := sort.Search(len(f.lineStarts), func(i int) bool { return f.lineStarts[i] > off }) - 1
	return i + 1, off - f.lineStarts[i] + 1
}

// Lines returns the number of lines in the file.
func (f *File) Lines() int { return len(f.lineStarts) }

// Line returns the text of the 1-based line n without its line ending, or
// nil when there is no such line.
func (f *File) Line(n int) []byte {
	if n < 1 || n > len(f.lineStarts) {
		return nil
	}
	start := f.lineStarts[n-1]
	end := len(f.Src)
	if n < len(f.lineStarts) {
		end = f.lineStarts[n] - 1
	}
	return bytes.TrimSuffix(f.Src[start:end], []byte("\r"))
}

// Finding returns a finding at the byte offset off of f.
func (f *File) Finding(off int, msg string) report.Finding {
	line, col := f.Position(off)
	return report.Finding{Path: f.Path, Line: line, Col: col, Message: msg}
}

// Read reads the file rel under root and checks that it is Markdown text.
// It returns the bytes and the findings about the file itself: a file that
// holds a NUL byte is binary and is returned as nil with one finding; a file
// over [MaxFileSize] likewise; so is a file reached through a symbolic link
// that leads outside root, which is never read; invalid UTF-8 gives a
// finding at the first bad byte but the bytes are still returned, so the
// rest of the file is checked. The error is for I/O failures and names the
// file.
func Read(root, rel string) ([]byte, []report.Finding, error) {
	name := filepath.Join(root, filepath.FromSlash(rel))
	// Stat before opening: opening a FIFO or device could block forever.
	if st, err := os.Stat(name); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel, unwrapPath(err))
	} else if st.IsDir() {
		return nil, nil, fmt.Errorf("%s: is a directory", rel)
	} else if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file (%s)", rel, st.Mode().Type())
	}
	// Open what was checked: the path with its links resolved.
	name, inside, err := rootpath.Resolve(root, rel)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel, unwrapPath(err))
	}
	if !inside {
		return nil, []report.Finding{{Path: rel, Reason: "root", Message: OutsideRoot}}, nil
	}
	fh, err := os.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel, unwrapPath(err))
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel, unwrapPath(err))
	}
	if st.Size() > MaxFileSize {
		return nil, []report.Finding{{Path: rel, Line: 1, Reason: "file",
			Message: fmt.Sprintf("file is %d bytes, over the %d-byte limit; not checked", st.Size(), MaxFileSize)}}, nil
	}
	src, err := readAll(fh, st.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel, unwrapPath(err))
	}
	if len(src) > MaxFileSize {
		return nil, []report.Finding{{Path: rel, Line: 1, Reason: "file",
			Message: fmt.Sprintf("file is over the %d-byte limit; not checked", MaxFileSize)}}, nil
	}
	if i := bytes.IndexByte(src, 0); i >= 0 {
		line, col := position(src, i)
		return nil, []report.Finding{{Path: rel, Line: line, Col: col, Reason: "file",
			Message: "binary file (NUL byte); not checked"}}, nil
	}
	var findings []report.Finding
	if !utf8.Valid(src) {
		i := firstInvalid(src)
		line, col := position(src, i)
		findings = append(findings, report.Finding{Path: rel, Line: line, Col: col, Reason: "file",
			Message: fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", src[i])})
	}
	return src, findings, nil
}

func readAll(fh *os.File, size int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, size+1))
	// Read at most one byte past the limit: enough to know it is too big.
	_, err := buf.ReadFrom(io.LimitReader(fh, MaxFileSize+1))
	return buf.Bytes(), err
}

// unwrapPath drops the *PathError wrapper, whose absolute path would repeat
// the root-relative name the caller already prints.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

func firstInvalid(src []byte) int {
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

func position(src []byte, off int) (line, col int) {
	line = 1 + bytes.Count(src[:off], []byte("\n"))
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, off - start + 1
}
