package modproxy

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripts/internal/workspace"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

func TestInferVersion(t *testing.T) {
	req := func(v string) requirement {
		return requirement{req: &modfile.Require{Mod: module.Version{Path: "example.com/a", Version: v}}}
	}
	tests := []struct {
		name string
		reqs []requirement
		want string
	}{
		{"none", nil, ""},
		{"one", []requirement{req("v0.1.0")}, "v0.1.0"},
		{"most common wins", []requirement{req("v0.2.0"), req("v0.1.0"), req("v0.1.0")}, "v0.1.0"},
		{"highest on a tie", []requirement{req("v0.1.0"), req("v0.10.0"), req("v0.9.0"), req("v0.10.0"), req("v0.9.0")}, "v0.10.0"},
	}
	for _, tt := range tests {
		if got := inferVersion(tt.reqs); got != tt.want {
			t.Errorf("%s: inferVersion = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPrefix(t *testing.T) {
	mod := func(p string) *workspace.Module {
		return &workspace.Module{File: &modfile.File{Module: &modfile.Module{Mod: module.Version{Path: p}}}}
	}
	tests := []struct {
		paths []string
		want  string
	}{
		{nil, ""},
		{[]string{"github.com/dsh-go/dsh/bash"}, "github.com/dsh-go/dsh/bash"},
		{[]string{"github.com/dsh-go/dsh/bash", "github.com/dsh-go/dsh/bash-local", "github.com/dsh-go/dsh/cmd/dsh"}, "github.com/dsh-go/dsh"},
		{[]string{"example.com/a", "example.org/a"}, ""},
	}
	for _, tt := range tests {
		rel := &Release{}
		for _, p := range tt.paths {
			rel.Modules = append(rel.Modules, mod(p))
		}
		if got := prefix(rel); got != tt.want {
			t.Errorf("prefix(%q) = %q, want %q", tt.paths, got, tt.want)
		}
	}
}

// TestTags checks the push order: a module after every module of the
// release it requires, path order otherwise, and a cycle does not hang.
func TestTags(t *testing.T) {
	mod := func(dir, p string, reqs ...string) *workspace.Module {
		f := &modfile.File{Module: &modfile.Module{Mod: module.Version{Path: p}}}
		for _, r := range reqs {
			f.Require = append(f.Require, &modfile.Require{Mod: module.Version{Path: r, Version: "v1.0.0"}})
		}
		return &workspace.Module{Dir: dir, File: f}
	}
	tests := []struct {
		name string
		mods []*workspace.Module
		want []string
	}{
		{"dependencies first", []*workspace.Module{
			mod("a", "x/a", "x/c"), mod("b", "x/b"), mod("c", "x/c", "x/b", "golang.org/x/sys"), mod("d/e", "x/d/e", "x/a"),
		}, []string{"b/v1.0.0", "c/v1.0.0", "a/v1.0.0", "d/e/v1.0.0"}},
		{"a cycle keeps path order", []*workspace.Module{mod("a", "x/a", "x/b"), mod("b", "x/b", "x/a")}, []string{"a/v1.0.0", "b/v1.0.0"}},
		{"a module at the root", []*workspace.Module{mod(".", "x")}, []string{"v1.0.0"}},
	}
	for _, tt := range tests {
		got := Tags(&Release{Version: "v1.0.0", Modules: tt.mods})
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: Tags = %q, want %q", tt.name, got, tt.want)
		}
	}
}
