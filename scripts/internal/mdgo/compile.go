package mdgo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/gocmd"
	"github.com/dsh-go/dsh/scripts/internal/report"
	"golang.org/x/mod/modfile"
)

// modulePath is the module the programs are compiled in; ".invalid" can
// never be a real module's host.
const modulePath = "mdgo.invalid"

// Compile compiles the programs among blocks against the workspace at
// root with one go command: each program is a package of its own in a
// module outside the tree, added to a copy of root's go.work, so it may
// import any package the workspace can (its modules and their
// dependencies), and nothing is written under root. cgo is off
// (CGO_ENABLED=0), so a block never compiles C or #includes a file. The packages are
// compiled, not linked ("go list -export"), so the build cache serves an
// unchanged program. It returns one finding per compiler or import error,
// at the line and column of the block it comes from. It errors when the
// build cannot be set up or run: a module neither in the module cache nor
// downloadable is a *gocmd.MissingError.
func Compile(ctx context.Context, root string, programs []*Block) ([]report.Finding, error) {
	if len(programs) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "verify-md-go-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := writeWorkspace(root, tmp, programs); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-export", "-json=ImportPath,Error,DepsErrors", "./...")
	cmd.Dir = filepath.Join(tmp, "mod")
	cmd.Env = gocmd.Env(root, map[string]string{"GOWORK": filepath.Join(tmp, "go.work"), "GOFLAGS": "-mod=readonly", "CGO_ENABLED": "0"})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	pkgs, decErr := decode(&stdout)
	var all strings.Builder
	all.WriteString(stderr.String())
	for _, p := range pkgs {
		for _, e := range p.errors() {
			all.WriteString(e.Err + "\n")
		}
	}
	if gocmd.LooksMissing(all.String()) {
		if me := gocmd.Explain(ctx, root, gocmd.Env(root, map[string]string{"GOFLAGS": "-mod=readonly"})); me != nil {
			return nil, me
		}
	}
	if runErr != nil || decErr != nil {
		return nil, fmt.Errorf("go list of the Go blocks: %v: %s", cmp.Or(runErr, decErr), strings.TrimSpace(stderr.String()))
	}
	var findings []report.Finding
	for _, p := range pkgs {
		findings = append(findings, p.findings(programs)...)
	}
	return findings, nil
}

// listed is a package as go list prints it.
type listed struct {
	ImportPath string
	Error      *listError
	DepsErrors []*listError
}

type listError struct {
	Pos string // "b3/block.go:4:2", or empty
	Err string
}

func (p *listed) errors() []*listError {
	if p.Error == nil {
		return p.DepsErrors
	}
	return append([]*listError{p.Error}, p.DepsErrors...)
}

func decode(r io.Reader) ([]*listed, error) {
	var out []*listed
	dec := json.NewDecoder(r)
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, err
		}
		out = append(out, &p)
	}
}

// findings returns the errors of p as findings on the block it was made
// from. A compiler error names its line; an error with no position in
// the block (a dependency that does not compile, say) is reported at the
// block's opening fence.
func (p *listed) findings(programs []*Block) []report.Finding {
	i, err := strconv.Atoi(strings.TrimPrefix(p.ImportPath, modulePath+"/b"))
	if err != nil || i < 0 || i >= len(programs) {
		return nil
	}
	b := programs[i]
	var out []report.Finding
	for _, e := range p.errors() {
		text := e.Err
		if e.Pos != "" {
			text = e.Pos + ": " + text
		}
		out = append(out, compileFindings(text, b)...)
	}
	return out
}

// writeWorkspace writes under tmp a go.work that uses every module of
// root's go.work (by absolute path, with its replaces) and the module
// "mod" holding one package per program, and root's go.work.sum beside
// it.
func writeWorkspace(root, tmp string, programs []*Block) error {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return err
	}
	var w strings.Builder
	goLine := ""
	if wf.Go != nil {
		goLine = "go " + wf.Go.Version + "\n"
	}
	w.WriteString(goLine + "\nuse ./mod\n")
	for _, u := range wf.Use {
		fmt.Fprintf(&w, "use %s\n", modfile.AutoQuote(abs(root, u.Path)))
	}
	for _, r := range wf.Replace {
		newPath := r.New.Path
		if r.New.Version == "" {
			newPath = abs(root, newPath)
		}
		fmt.Fprintf(&w, "replace %s => %s\n", strings.TrimSpace(modfile.AutoQuote(r.Old.Path)+" "+r.Old.Version), strings.TrimSpace(modfile.AutoQuote(newPath)+" "+r.New.Version))
	}
	files := map[string][]byte{
		"go.work":    []byte(w.String()),
		"mod/go.mod": []byte("module " + modulePath + "\n\n" + goLine),
	}
	if sum, err := os.ReadFile(filepath.Join(root, "go.work.sum")); err == nil {
		files["go.work.sum"] = sum
	}
	for i, p := range programs {
		files[fmt.Sprintf("mod/b%d/block.go", i)] = p.Code
	}
	for name, body := range files {
		full := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, body, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func abs(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, filepath.FromSlash(p))
}

// compilerLine matches an error at a position in a block's file:
// "b3/block.go:4:2: msg" (the column may be missing).
var compilerLine = regexp.MustCompile(`^(?:\./)?b\d+/block\.go:(\d+)(?::(\d+))?: (.*)$`)

// compileFindings turns the error text of the go command about block b
// into findings. Indented lines continue the message before them; "#"
// lines name the package and are dropped.
func compileFindings(text string, b *Block) []report.Finding {
	var out []report.Finding
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
			continue
		case (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " ")) && len(out) > 0:
			out[len(out)-1].Message += " " + strings.TrimSpace(line)
			continue
		}
		f := report.Finding{Path: b.Path, Line: b.Line, Col: 1, Message: "Go program does not compile: " + line}
		if m := compilerLine.FindStringSubmatch(line); m != nil {
			l, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			f.Line, f.Col = b.Position(l, max(c, 1))
			f.Message = "Go program does not compile: " + m[3]
		}
		out = append(out, f)
	}
	return out
}

// importsC reports whether the program b imports "C": cgo, which would compile C and could
// #include any file on the machine, its contents then shown in the compiler's errors.
func (b *Block) importsC() bool {
	_, ok := b.cImport()
	return ok
}

// cImport returns the line and column, in b's Code, of b's import "C".
func (b *Block) cImport() (token.Position, bool) {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, "block.go", b.Code, parser.ImportsOnly)
	if f == nil {
		return token.Position{}, false
	}
	for _, spec := range f.Imports {
		if spec.Path.Value == `"C"` {
			return fset.Position(spec.Path.Pos()), true
		}
	}
	return token.Position{}, false
}

// cgoFinding is the finding of a program that imports "C": it is refused, never compiled.
func cgoFinding(b *Block) report.Finding {
	pos, _ := b.cImport()
	line, col := b.Position(pos.Line, pos.Column)
	return report.Finding{Path: b.Path, Line: line, Col: col, Message: `Go program imports "C": cgo blocks are never compiled (C could #include any file into the findings); fence it as text`}
}
