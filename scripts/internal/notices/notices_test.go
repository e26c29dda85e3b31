package notices

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"github.com/dsh-go/dsh/scripts/internal/manifest"
	"go.uber.org/goleak"
)

const mitText = `MIT License

Copyright (c) 2024 Example Authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`

const apacheNotice = `Copyright 2024 Example Authors

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
`

func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		ids     string // detected licenses, comma-separated
		files2  string // files kept, in order
		problem string // a substring of the problem, or "" for none
	}{
		{"MIT", map[string]string{"LICENSE": mitText, "README.md": "# x"}, "MIT", "LICENSE", ""},
		{"Apache notice form", map[string]string{"LICENSE.txt": apacheNotice}, "Apache-2.0", "LICENSE.txt", ""},
		{"dual in two files", map[string]string{"LICENSE-MIT": mitText, "LICENSE-APACHE": apacheNotice}, "Apache-2.0,MIT", "LICENSE-APACHE,LICENSE-MIT", ""},
		{"dual in one file", map[string]string{"COPYING": mitText + "\n" + apacheNotice}, "Apache-2.0,MIT", "COPYING", ""},
		{"NOTICE copied, not classified", map[string]string{"LICENSE": apacheNotice, "NOTICE": "Example\nCopyright 2024\n"}, "Apache-2.0", "LICENSE,NOTICE", ""},
		{"CRLF and lower case", map[string]string{"licence.md": strings.ReplaceAll(mitText, "\n", "\r\n")}, "MIT", "licence.md", ""},
		{"source files are not license files", map[string]string{"LICENSE": mitText, "license.go": "package x", "licenses/GPL": "x"}, "MIT", "LICENSE", ""},
		{"unknown text", map[string]string{"LICENSE": "You may use this if you send a postcard.\n"}, "", "LICENSE", "LICENSE: no known license recognised"},
		{"extra clause", map[string]string{"LICENSE": mitText + "\nIn addition, you must not use this software to build anything that flies, swims or sings, and every copy must be printed on recycled paper and signed by hand by the user.\n"}, "", "LICENSE", "LICENSE: only 83% recognised (as MIT)"},
		{"no license file", map[string]string{"NOTICE": "x\n", "README": "MIT"}, "", "NOTICE", "no license file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Detect(writeDir(t, tt.files))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(d.IDs, ","); got != tt.ids {
				t.Errorf("IDs = %q, want %q", got, tt.ids)
			}
			var names []string
			for _, f := range d.Files {
				names = append(names, f.Name)
				if !bytes.HasSuffix(f.Text, []byte("\n")) || bytes.HasSuffix(f.Text, []byte("\n\n")) || bytes.Contains(f.Text, []byte("\r")) {
					t.Errorf("%s: text not normalised: %q", f.Name, f.Text)
				}
			}
			if got := strings.Join(names, ","); got != tt.files2 {
				t.Errorf("files = %q, want %q", got, tt.files2)
			}
			if (tt.problem == "") != (d.Problem == "") || !strings.Contains(d.Problem, tt.problem) {
				t.Errorf("Problem = %q, want one containing %q", d.Problem, tt.problem)
			}
		})
	}
	if _, err := Detect(filepath.Join(t.TempDir(), "gone")); !isNotExist(err) {
		t.Errorf("Detect(missing dir) error = %v, want not-exist", err)
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		d    Detection
		want string
	}{
		{Detection{IDs: []string{"MIT"}}, ""},
		{Detection{IDs: []string{"Apache-2.0", "BSD-3-Clause", "ISC"}}, ""},
		{Detection{IDs: []string{"GPL-3.0", "MIT"}}, "license GPL-3.0 is not on the allow-list"},
		{Detection{IDs: []string{"MIT"}, Problem: "LICENSE: x"}, "license cannot be detected: LICENSE: x"},
	}
	for _, tt := range tests {
		if got := verdict(&tt.d); (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("verdict(%+v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestFindOverride(t *testing.T) {
	os := []manifest.Override{
		{Module: "a.org/x", License: "any"},
		{Module: "a.org/x", Version: "v1.2.0", License: "pinned"},
		{Module: "a.org/y", Version: "v1.0.0", License: "y"},
	}
	tests := []struct{ path, version, want string }{
		{"a.org/x", "v1.2.0", "pinned"},
		{"a.org/x", "v1.3.0", "any"},
		{"a.org/y", "v1.0.0", "y"},
		{"a.org/y", "v1.0.1", ""},
		{"a.org/z", "v1.0.0", ""},
	}
	for _, tt := range tests {
		got := ""
		if o := findOverride(os, tt.path, tt.version); o != nil {
			got = o.License
		}
		if got != tt.want {
			t.Errorf("findOverride(%s, %s) = %q, want %q", tt.path, tt.version, got, tt.want)
		}
	}
}

func mod(path string, main bool) *listedModule {
	return &listedModule{Path: path, Version: "v1.0.0", Main: main, Dir: "/cache/" + path}
}

func TestMergeTiers(t *testing.T) {
	ws := mod("w.org/app", true)
	pkgs := []listedPackage{
		{ImportPath: "fmt", Standard: true},
		{ImportPath: "w.org/app", Module: ws, Imports: []string{"fmt", "a.org/lib"}},
		{ImportPath: "a.org/lib", Module: mod("a.org/lib", false), DepOnly: true, Imports: []string{"b.org/deep"}},
		{ImportPath: "b.org/deep", Module: mod("b.org/deep", false), DepOnly: true},
		{ImportPath: "t.org/testonly", Module: mod("t.org/testonly", false), DepOnly: true},
		{ImportPath: "w.org/app [w.org/app.test]", Module: ws, Imports: []string{"t.org/testonly", "a.org/lib"}},
		{ImportPath: "w.org/app.test", Module: ws, Imports: []string{"w.org/app [w.org/app.test]"}},
		{ImportPath: "g.org/tool/cmd/gen", Module: mod("g.org/tool", false), Imports: []string{"b.org/deep"}},
	}
	l := &linked{modules: map[string]*listedModule{}, shipped: map[string]bool{}}
	if err := l.merge(pkgs); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"a.org/lib": true, "b.org/deep": true, "t.org/testonly": false, "g.org/tool": false}
	if len(l.modules) != len(want) {
		t.Errorf("modules = %v", l.modules)
	}
	for path, shipped := range want {
		if _, ok := l.modules[path]; !ok {
			t.Errorf("%s not listed", path)
		}
		if l.shipped[path] != shipped {
			t.Errorf("%s shipped = %v, want %v", path, l.shipped[path], shipped)
		}
	}
	// Another platform links the test-only module from shipped code.
	more := []listedPackage{
		{ImportPath: "w.org/app", Module: ws, Imports: []string{"t.org/testonly"}},
		{ImportPath: "t.org/testonly", Module: mod("t.org/testonly", false), DepOnly: true},
	}
	if err := l.merge(more); err != nil {
		t.Fatal(err)
	}
	if !l.shipped["t.org/testonly"] {
		t.Error("a module shipped on one platform is not shipped after the merge")
	}
	other := mod("a.org/lib", false)
	other.Version = "v2.0.0"
	if err := l.merge([]listedPackage{{ImportPath: "a.org/lib", Module: other}}); err == nil || !strings.Contains(err.Error(), "listed as both a.org/lib v1.0.0 and a.org/lib v2.0.0") {
		t.Errorf("merge of a second version = %v", err)
	}
}

func TestGoMessage(t *testing.T) {
	in := "go: downloading example.com/x v1.0.0\nwarning: \"a/...\" matched no packages\napp.go:3:2: example.com/y@v1.0.0: module lookup disabled by GOPROXY=off\n"
	want := "app.go:3:2: example.com/y@v1.0.0: module lookup disabled by GOPROXY=off"
	if got := goMessage(in); got != want {
		t.Errorf("goMessage = %q, want %q", got, want)
	}
}

// TestGoEnvPinsWorkspaceAndPlatform checks the go command's environment:
// the workspace, the platform and read-only module files are pinned, and
// the caller's module proxy and checksum database are kept, so that an
// empty module cache is filled as go build fills it.
func TestGoEnvPinsWorkspaceAndPlatform(t *testing.T) {
	t.Setenv("GOPROXY", "https://proxy.example")
	t.Setenv("GOSUMDB", "sum.example")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	env := goEnv("/repo", Platform{"windows", "arm64", true})
	got := map[string][]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = append(got[k], v)
	}
	for k, v := range map[string]string{"GOPROXY": "https://proxy.example", "GOFLAGS": "-mod=readonly", "GOWORK": filepath.Join("/repo", "go.work"), "GOTOOLCHAIN": "local", "GOOS": "windows", "GOARCH": "arm64", "CGO_ENABLED": "1", "GOSUMDB": "sum.example"} {
		if len(got[k]) != 1 || got[k][0] != v {
			t.Errorf("%s = %q, want exactly %q", k, got[k], v)
		}
	}
}

func TestRenderIsStable(t *testing.T) {
	d := &Detection{IDs: []string{"MIT"}, Files: []TextFile{{Name: "LICENSE", Text: []byte("MIT text\n"), IDs: []string{"MIT"}}}}
	r := &Result{Modules: []Module{
		{Path: "a.org/x", Version: "v1.0.0", Shipped: true, Detection: d},
		{Path: "b.org/t", Version: "v0.1.0", Replace: "../t", Detection: &Detection{Problem: "no license file"}},
	}}
	out := string(r.Render())
	for _, want := range []string{
		"VENDORED FORKS\n\nNone.\n\nSHIPPED MODULES\n\na.org/x v1.0.0\n    License: MIT\n\nUSED ONLY BY TESTS AND TOOLING\n\nb.org/t v0.1.0\n    Replaced by: ../t\n    License: unknown (no license file)\n\nLICENSE TEXTS\n",
		"\na.org/x v1.0.0: LICENSE (MIT)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Render lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "b.org/t v0.1.0: ") {
		t.Error("a test-only module's license text is reproduced")
	}
	if !bytes.Equal(r.Render(), r.Render()) {
		t.Error("Render is not deterministic")
	}
}

// TestRepositoryNoticesFresh is the gate on this repository: the
// committed THIRD_PARTY_NOTICES is what gen-notices writes today, and no
// shipped module breaks the license policy. It reads the real module
// cache, so the modules must have been downloaded (building the tests
// does that).
func TestRepositoryNoticesFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the whole workspace on ten platforms")
	}
	root, err := cli.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-root", root, "-check"}, &stdout, &stderr); code != cli.ExitClean {
		t.Fatalf("gen-notices -check on the repository: exit %d\n%s%s\nRegenerate with: go run ./scripts/gen-notices", code, &stdout, &stderr)
	}
}

func TestGenerateRejectsBadInputs(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no go.work", map[string]string{}, "go.work: cannot read: no such file or directory"},
		{"go.work does not parse", map[string]string{"go.work": "go 1.26\nuses x\n"}, "go.work:2: does not parse: unknown directive: uses"},
		{"go.mod missing", map[string]string{"go.work": "go 1.26\nuse ./app\n"}, "app/go.mod: cannot read: no such file or directory"},
		{"go.mod without module", map[string]string{"go.work": "go 1.26\nuse ./app\n", "app/go.mod": "go 1.26\n"}, "app/go.mod: has no module statement"},
		{"manifest problem", map[string]string{"go.work": "go 1.26\n", "vendor/README.md": "# x\n"}, `vendor/README.md:1: no "Manifest" heading`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(t.Context(), writeDir(t, tt.files))
			var problems Problems
			if !errors.As(err, &problems) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Generate = %v, want Problems starting %q", err, tt.want)
			}
		})
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
