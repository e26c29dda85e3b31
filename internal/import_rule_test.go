package internal_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportRule builds two modules against this one in a workspace of their own: one whose path
// is under github.com/dsh-go/dsh may import the internal packages, any other may not. It is the
// go command's internal rule, checked so that moving this module (or renaming it) cannot open it
// to the world unnoticed.
func TestImportRule(t *testing.T) {
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const program = "package main\n\nimport \"github.com/dsh-go/dsh/internal/envpolicy\"\n\nfunc main() { _ = envpolicy.Default() }\n"
	write("go.work", "go 1.26.0\n\nuse (\n\t./outsider\n\t./insider\n\t"+self+"\n)\n")
	write("outsider/go.mod", "module example.com/outsider\n\ngo 1.26.0\n")
	write("outsider/main.go", program)
	write("insider/go.mod", "module github.com/dsh-go/dsh/insider\n\ngo 1.26.0\n")
	write("insider/main.go", program)
	build := func(module string) (string, error) {
		cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
		cmd.Dir = filepath.Join(dir, module)
		cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"), "GOPROXY=off", "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := build("insider"); err != nil {
		t.Errorf("a module under github.com/dsh-go/dsh cannot import the internal packages: %v\n%s", err, out)
	}
	out, err := build("outsider")
	if err == nil || !strings.Contains(out, "use of internal package github.com/dsh-go/dsh/internal/envpolicy not allowed") {
		t.Errorf("a module outside github.com/dsh-go/dsh built against the internal packages: %v\n%s", err, out)
	}
}
