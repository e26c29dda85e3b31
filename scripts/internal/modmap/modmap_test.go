package modmap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleMap checks the workspace itself: every import of every package of every module in
// go.work is one its rule allows.
func TestModuleMap(t *testing.T) {
	root := workspaceRoot(t)
	vs, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}
}

// TestCheckFindsPlantedImports proves the check can fail: a tree with forbidden imports planted in
// product code, in a test, in a file for one platform only, and a module with no row.
func TestCheckFindsPlantedImports(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.work":                  "go 1.26.0\n\nuse (\n\t./tool-bash\n\t./bash\n\t./newmod\n)\n",
		"bash/go.mod":              "module github.com/dsh-go/dsh/bash\n",
		"bash/bash.go":             "package bash\n\nimport _ \"github.com/dsh-go/dsh/internal/proctree\"\n",
		"bash/backend/kit.go":      "package backend\n\nimport _ \"github.com/dsh-go/dsh/bash\"\n",
		"bash/testdata/x/x.go":     "package x\n\nimport _ \"example.com/ignored\"\n",
		"tool-bash/go.mod":         "module github.com/dsh-go/dsh/tool-bash\n",
		"tool-bash/ok.go":          "package toolbash\n\nimport (\n\t_ \"fmt\"\n\t_ \"github.com/dsh-go/dsh/bash\"\n\t_ \"github.com/dsh-go/dsh/tools\"\n)\n",
		"tool-bash/bad.go":         "package toolbash\n\nimport _ \"github.com/dsh-go/dsh/bash-local\"\n",
		"tool-bash/only_darwin.go": "package toolbash\n\nimport _ \"github.com/dsh-go/dsh/internal/sandbox\"\n",
		"tool-bash/ok_test.go":     "package toolbash\n\nimport _ \"github.com/dsh-go/dsh/bash-local\"\n",
		"tool-bash/bad_test.go":    "package toolbash_test\n\nimport _ \"github.com/dsh-go/dsh/bash-ssh\"\n",
		"newmod/go.mod":            "module github.com/dsh-go/dsh/newmod\n",
		"newmod/n.go":              "package newmod\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	want := []string{
		"bash/bash.go:3: github.com/dsh-go/dsh/bash imports github.com/dsh-go/dsh/internal/proctree, which product code of module bash may not import",
		"newmod: module has no row in the module map",
		"tool-bash/bad.go:3: github.com/dsh-go/dsh/tool-bash imports github.com/dsh-go/dsh/bash-local, which product code of module tool-bash may not import",
		"tool-bash/bad_test.go:3: github.com/dsh-go/dsh/tool-bash imports github.com/dsh-go/dsh/bash-ssh, which a test of module tool-bash may not import",
		"tool-bash/only_darwin.go:3: github.com/dsh-go/dsh/tool-bash imports github.com/dsh-go/dsh/internal/sandbox, which product code of module tool-bash may not import",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %d:\n got %s\nwant %s…", i, got[i], want[i])
		}
	}
}

func TestAllows(t *testing.T) {
	r, _ := Lookup("bash-ssh")
	for _, c := range []struct {
		path string
		test bool
		want bool
	}{
		{"fmt", false, true},
		{"golang.org/x/crypto/ssh", false, true},
		{"golang.org/x/crypto/ssh/agent", false, true},
		{"golang.org/x/crypto/sshfoo", false, false},
		{"github.com/dsh-go/dsh/bash-ssh/internal/sshdtest", false, true},
		{"github.com/dsh-go/dsh/bash", false, true},
		{"github.com/dsh-go/dsh/bash/bashtest", false, false},
		{"github.com/dsh-go/dsh/bash/bashtest", true, true},
		{"github.com/dsh-go/dsh/bash-local", false, false},
		{"github.com/dsh-go/dsh/bash-local", true, true},
		{"github.com/dsh-go/dsh/internal/sandbox", true, false},
		{"github.com/dsh-go/dsh/bash-sshx", false, false},
	} {
		if got := r.Allows(c.path, c.test); got != c.want {
			t.Errorf("bash-ssh Allows(%q, test=%v) = %v, want %v", c.path, c.test, got, c.want)
		}
	}
}

// workspaceRoot finds the directory holding go.work, upward from the package directory.
func workspaceRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the package directory")
		}
		dir = parent
	}
}
