package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const header = "# Forks\n\n## Manifest\n\n| Directory | Module | Upstream module | Version | Upstream repository | Commit | License |\n|---|---|---|---|---|---|---|\n"

// row is a valid manifest row, whose cells a case may replace.
func row(cells ...string) string {
	def := []string{"`vendor/lib/`", "`example.com/dsh/lib`", "`github.com/up/lib`", "v1.2.3", "https://github.com/up/lib", "`0123abc`", "MIT"}
	for i, c := range cells {
		if c != "" {
			def[i] = c
		}
	}
	return "| " + strings.Join(def, " | ") + " |\n"
}

func TestParseValid(t *testing.T) {
	src := header +
		row() +
		row("vendor/lib/sub", "example.com/dsh/libsub", "github.com/up/lib/sub", "`v1.2.3`", "[repo](https://github.com/up/lib)", "0123abcdef", "MIT, Apache-2.0") +
		"\n## License overrides\n\n| Module | License | Reason |\n|---|---|---|\n" +
		"| `example.com/odd@v1.0.0` | LicenseRef-Odd | Read by hand; the text is MIT with a longer title. |\n" +
		"| example.com/any | MIT | The same for every version, checked on 2026-12-01. |\n"
	m, problems := Parse([]byte(src))
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	want := []Fork{
		{Line: 7, Dir: "vendor/lib", Module: "example.com/dsh/lib", Upstream: "github.com/up/lib", Version: "v1.2.3", Repository: "https://github.com/up/lib", Commit: "0123abc", License: []string{"MIT"}},
		{Line: 8, Dir: "vendor/lib/sub", Module: "example.com/dsh/libsub", Upstream: "github.com/up/lib/sub", Version: "v1.2.3", Repository: "https://github.com/up/lib", Commit: "0123abcdef", License: []string{"MIT", "Apache-2.0"}},
	}
	if len(m.Forks) != len(want) {
		t.Fatalf("forks = %+v, want %+v", m.Forks, want)
	}
	for i := range want {
		if g, w := m.Forks[i], want[i]; g.Line != w.Line || g.Dir != w.Dir || g.Module != w.Module || g.Upstream != w.Upstream ||
			g.Version != w.Version || g.Repository != w.Repository || g.Commit != w.Commit || strings.Join(g.License, ",") != strings.Join(w.License, ",") {
			t.Errorf("fork %d = %+v, want %+v", i, g, w)
		}
	}
	wantO := []Override{
		{Line: 14, Module: "example.com/odd", Version: "v1.0.0", License: "LicenseRef-Odd", Reason: "Read by hand; the text is MIT with a longer title."},
		{Line: 15, Module: "example.com/any", License: "MIT", Reason: "The same for every version, checked on 2026-12-01."},
	}
	if len(m.Overrides) != len(wantO) {
		t.Fatalf("overrides = %+v", m.Overrides)
	}
	for i := range wantO {
		if m.Overrides[i] != wantO[i] {
			t.Errorf("override %d = %+v, want %+v", i, m.Overrides[i], wantO[i])
		}
	}
}

func TestParseEmptyManifest(t *testing.T) {
	m, problems := Parse([]byte(header))
	if len(problems) > 0 || len(m.Forks) != 0 || len(m.Overrides) != 0 {
		t.Fatalf("Parse(empty) = %+v, %v", m, problems)
	}
}

func TestParseProblems(t *testing.T) {
	overrides := "\n## License overrides\n\n| Module | License | Reason |\n|---|---|---|\n"
	tests := []struct {
		name string
		src  string
		want string // "LINE: message" of the first problem
	}{
		{"no heading", "# x\n", `1: no "Manifest" heading; the fork manifest is the table under it`},
		{"two headings", header + "\n## Manifest\n", `8: second "Manifest" heading; there must be exactly one`},
		{"no table", "## Manifest\n\ntext\n", `1: no table under the "Manifest" heading (columns: Directory | Module | Upstream module | Version | Upstream repository | Commit | License)`},
		{"wrong header", "## Manifest\n\n| Directory | Module |\n|---|---|\n", `3: the "Manifest" table has columns "Directory | Module"; want "Directory | Module | Upstream module | Version | Upstream repository | Commit | License"`},
		{"short row", header + "| `vendor/lib/` | x |\n", "7: malformed row: 2 cell(s), want 7"},
		{"long row", header + strings.TrimSuffix(row(), "\n") + " extra |\n", "7: malformed row: 8 cell(s), want 7"},
		{"no directory", header + row(" "), "7: row has no directory"},
		{"directory outside vendor", header + row("`third_party/lib/`"), `7: directory "third_party/lib/" is not a clean path vendor/<dir>/`},
		{"unclean directory", header + row("`vendor/../lib/`"), `7: directory "vendor/../lib/" is not a clean path vendor/<dir>/`},
		{"bad module", header + row("", "`Example.com/x`"), "7: module path: malformed module path"},
		{"no upstream", header + row("", "", " "), "7: row has no upstream module path"},
		{"bad version", header + row("", "", "", "v1.2"), `7: version "v1.2" is not a canonical semantic version such as v1.2.3`},
		{"major mismatch", header + row("", "example.com/dsh/lib/v2", "github.com/up/lib/v2", "v1.2.3"), "7: version v1.2.3 does not match the major version of upstream module github.com/up/lib/v2"},
		{"http url", header + row("", "", "", "", "http://github.com/up/lib"), `7: upstream repository "http://github.com/up/lib" is not an https:// URL`},
		{"bad commit", header + row("", "", "", "", "", "`ABC1234`"), `7: commit "ABC1234" is not a lower-case hexadecimal commit id (7 to 64 digits)`},
		{"bad license", header + row("", "", "", "", "", "", "MIT or GPL"), `7: license "MIT or GPL" is not a comma-separated list of SPDX identifiers`},
		{"same paths", header + row("", "`github.com/up/lib`"), "7: module path and upstream module path are both github.com/up/lib; a fork must be rescoped"},
		{"duplicate directory", header + row() + row("", "example.com/dsh/b", "github.com/up/b"), "8: directory vendor/lib is already listed on line 7"},
		{"duplicate upstream", header + row() + row("`vendor/b/`", "example.com/dsh/b"), "8: module path github.com/up/lib is already mapped on line 7"},
		{"chain", header + row() + row("`vendor/b/`", "example.com/dsh/b", "example.com/dsh/lib"), "8: module path example.com/dsh/lib is already mapped on line 7"},
		{"scoped under upstream", header + row("", "github.com/up/lib/fork"), "7: module github.com/up/lib/fork lies under upstream path github.com/up/lib (line 7), so a second rename would change it again"},
		{"upstream under scoped", header + row("", "github.com/up"), "7: upstream path github.com/up/lib lies under module github.com/up (line 7), so a reverse rename would change it again"},
		{"suffix dropped", header + row("", "example.com/dsh/lib", "github.com/up/lib/v3", "v3.0.0"), `7: upstream github.com/up/lib/v3 has major version suffix "/v3" but module example.com/dsh/lib has ""; a /vN suffix must map to the same /vN`},
		{"override without reason", header + overrides + "| example.com/x | MIT | fine |\n", `12: override for example.com/x needs a written reason (a sentence, not "fine")`},
		{"override bad version", header + overrides + "| example.com/x@latest | MIT | It is fine, really fine. |\n", `12: override version "latest" is not a canonical semantic version`},
		{"override no license", header + overrides + "| example.com/x |  | It is fine, really fine. |\n", "12: override for example.com/x names no license"},
		{"override twice", header + overrides + "| example.com/x | MIT | It is fine, really fine. |\n| example.com/x | MIT | It is fine, really fine. |\n", "13: override for example.com/x is already given on line 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Parse([]byte(tt.src))
			if m != nil {
				t.Errorf("manifest = %+v, want nil with problems", m)
			}
			if len(problems) == 0 {
				t.Fatalf("no problem; want %q", tt.want)
			}
			var got []string
			for _, p := range problems {
				if p.Path != File {
					t.Errorf("problem path %q, want %q", p.Path, File)
				}
				got = append(got, strings.TrimPrefix(p.String(), File+":"))
			}
			found := false
			for _, g := range got {
				if strings.HasPrefix(g, tt.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("problems = %q\nwant one starting %q", got, tt.want)
			}
		})
	}
}

func TestUnder(t *testing.T) {
	tests := []struct {
		p, prefix string
		want      bool
	}{
		{"a/b", "a/b", true},
		{"a/b/c", "a/b", true},
		{"a/bc", "a/b", false},
		{"a", "a/b", false},
		{"a/b.c", "a/b", false},
		{"", "", true},
	}
	for _, tt := range tests {
		if got := Under(tt.p, tt.prefix); got != tt.want {
			t.Errorf("Under(%q, %q) = %v, want %v", tt.p, tt.prefix, got, tt.want)
		}
	}
}

// write creates files (path → content) under a new temporary directory.
func write(t *testing.T, files map[string]string) string {
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

func TestCheckTree(t *testing.T) {
	work := "go 1.26.0\n\nuse (\n\t./app\n\t./vendor/lib\n)\n"
	good := map[string]string{
		"go.work":            work,
		"vendor/README.md":   header + row(),
		"vendor/lib/go.mod":  "module github.com/up/lib\n",
		"vendor/lib/x/go.go": "package x\n",
		"app/go.mod":         "module example.com/app\n",
	}
	tests := []struct {
		name   string
		change map[string]string // added or replaced files; "" deletes
		want   []string
	}{
		{"clean", nil, nil},
		{"scoped module line", map[string]string{"vendor/lib/go.mod": "module example.com/dsh/lib\n"}, nil},
		{"wrong module", map[string]string{"vendor/lib/go.mod": "module example.com/other\n"},
			[]string{"vendor/lib/go.mod:1: declares module example.com/other, but the manifest row on vendor/README.md:7 maps github.com/up/lib to example.com/dsh/lib"}},
		{"go.mod does not parse", map[string]string{"vendor/lib/go.mod": "module a\nrequire (\n"},
			[]string{"vendor/lib/go.mod:3: does not parse: syntax error (unterminated block started at vendor/lib/go.mod:2:1)"}},
		{"no go.mod", map[string]string{"vendor/lib/go.mod": ""},
			[]string{"vendor/README.md:7: fork vendor/lib has no readable go.mod: no such file or directory"}},
		{"missing directory", map[string]string{"vendor/lib/go.mod": "", "vendor/lib/x/go.go": ""},
			[]string{"vendor/README.md:7: directory vendor/lib/ does not exist"}},
		{"not a workspace module", map[string]string{"go.work": "go 1.26.0\n\nuse ./app\n"},
			[]string{`vendor/README.md:7: fork vendor/lib is not a workspace module: add "use ./vendor/lib" to go.work`}},
		{"stray directory and nested module", map[string]string{"vendor/other/a.go": "package a\n", "vendor/lib/sub/go.mod": "module github.com/up/lib/sub\n"},
			[]string{"vendor/lib/sub/go.mod: module directory vendor/lib/sub/ has no row in the manifest (vendor/README.md)", "vendor/other: is in vendor/ but has no row in the manifest (vendor/README.md)"}},
		{"go.work does not parse", map[string]string{"go.work": "go 1.26.0\nuses x\n"},
			[]string{"go.work:2: does not parse: unknown directive: uses"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range good {
				files[k] = v
			}
			for k, v := range tt.change {
				if v == "" {
					delete(files, k)
				} else {
					files[k] = v
				}
			}
			root := write(t, files)
			m, problems := Load(root)
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			var got []string
			for _, f := range m.CheckTree(root) {
				got = append(got, f.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("CheckTree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestLoadMissingIsEmpty(t *testing.T) {
	root := write(t, map[string]string{"go.work": "go 1.26.0\n"})
	m, problems := Load(root)
	if len(problems) > 0 || len(m.Forks) != 0 {
		t.Fatalf("Load = %+v, %v", m, problems)
	}
	if problems := m.CheckTree(root); len(problems) > 0 {
		t.Fatalf("CheckTree = %v", problems)
	}
	if err := os.MkdirAll(filepath.Join(root, "vendor", "README.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, problems := Load(root); len(problems) != 1 || !strings.Contains(problems[0].Message, "cannot read the fork manifest") {
		t.Fatalf("Load(directory) = %v", problems)
	}
}

// FuzzParse: any bytes give either a manifest or problems, never a panic,
// and every problem points at a line of the input.
func FuzzParse(f *testing.F) {
	f.Add([]byte(header + row()))
	f.Add([]byte(header + row() + row("`vendor/b/`", "example.com/dsh/b", "github.com/up/b")))
	f.Add([]byte(header + "| `vendor/lib/` | x |\n"))
	f.Add([]byte("## Manifest\n\n| a | b |\n|--|--|\n| \\| | ` | ` |\n"))
	f.Add([]byte(header + "\n## License overrides\n\n| Module | License | Reason |\n|---|---|---|\n| m@v1.0.0 | MIT | a b c |\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, problems := Parse(src)
		if (m == nil) == (len(problems) == 0) {
			t.Fatalf("manifest %v with %d problem(s)", m, len(problems))
		}
		lines := bytes.Count(src, []byte("\n")) + 1
		for _, p := range problems {
			if p.Line < 0 || p.Line > lines {
				t.Errorf("problem %q: line outside the input (%d lines)", p, lines)
			}
		}
		if m != nil {
			for _, fk := range m.Forks {
				if !strings.HasPrefix(fk.Dir, "vendor/") || Under(fk.Module, fk.Upstream) || Under(fk.Upstream, fk.Module) {
					t.Errorf("accepted an invalid row: %+v", fk)
				}
			}
		}
	})
}
