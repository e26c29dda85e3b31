package gocmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEnvOverridesAndKeeps(t *testing.T) {
	t.Setenv("GOPROXY", "https://proxy.example")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	env := Env("/repo", map[string]string{"GOFLAGS": "-mod=readonly", "CGO_ENABLED": "0"})
	got := map[string][]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = append(got[k], v)
	}
	for k, v := range map[string]string{
		"GOPROXY": "https://proxy.example", "GOFLAGS": "-mod=readonly", "CGO_ENABLED": "0",
		"GOWORK": filepath.Join("/repo", "go.work"), "GOTOOLCHAIN": "local",
	} {
		if !slices.Equal(got[k], []string{v}) {
			t.Errorf("%s = %q, want exactly %q", k, got[k], v)
		}
	}
}

func TestLooksMissing(t *testing.T) {
	tests := []struct {
		msg  string
		want bool
	}{
		{"app.go:3:2: example.com/y@v1.0.0: module lookup disabled by GOPROXY=off", true},
		{"a.go:17:2: module lookup disabled by GOPROXY=off", true},
		{`example.com/y@v1.0.0: Get "https://proxy.golang.org/example.com/y/@v/v1.0.0.zip": dial tcp: lookup proxy.golang.org: no such host`, true},
		{"example.com/y@v1.0.0: reading file:///p/example.com/y/@v/v1.0.0.info: no such file or directory", true},
		{"no required module provides package example.com/z; to add it: go get example.com/z", false},
		{"app.go:1:1: expected 'package', found 'EOF'", false},
		{"missing go.sum entry for module providing package example.com/y", false},
	}
	for _, tt := range tests {
		if got := LooksMissing(tt.msg); got != tt.want {
			t.Errorf("LooksMissing(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

func TestMissingErrorLines(t *testing.T) {
	e := &MissingError{Root: "/r", Modules: []Missing{{"a.org/x", "v1.0.0", "module lookup disabled by GOPROXY=off"}}}
	want := []string{
		"module a.org/x v1.0.0 is not in the module cache and could not be downloaded: module lookup disabled by GOPROXY=off",
		"fill the module cache with `go mod download` in /r (it needs the module proxy, GOPROXY, to be reachable), then run again",
	}
	if got := e.Lines(); !slices.Equal(got, want) {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	if e.Error() != strings.Join(want, "; ") {
		t.Errorf("Error = %q", e.Error())
	}
}

// TestExplain runs the go command on a workspace that requires three
// modules with the network off: one unpacked in the module cache (with no
// zip, as after a cache trimmed by hand), two absent. Only the absent ones
// are named, sorted; a workspace with nothing missing gets nil.
func TestExplain(t *testing.T) {
	root := t.TempDir()
	cache := filepath.Join(root, "modcache")
	files := map[string]string{
		"go.work":    "go 1.26\n\nuse ./app\n",
		"app/go.mod": "module example.com/app\n\ngo 1.26\n\nrequire (\n\texample.com/here v1.0.0\n\texample.com/zgone v1.1.0\n\texample.com/gone v1.0.0\n)\n",
		"app/app.go": "package app\n",
		"modcache/cache/download/example.com/here/@v/v1.0.0.mod": "module example.com/here\n\ngo 1.21\n",
		"modcache/example.com/here@v1.0.0/go.mod":                "module example.com/here\n\ngo 1.21\n",
		"other/go.work":  "go 1.26\n\nuse ./m\n",
		"other/m/go.mod": "module example.com/m\n\ngo 1.26\n",
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
	t.Setenv("GOMODCACHE", cache)
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOFLAGS", "-modcacherw")
	me := Explain(t.Context(), root, Env(root, nil))
	if me == nil {
		t.Fatal("Explain = nil, want the two absent modules")
	}
	var got []string
	for _, m := range me.Modules {
		got = append(got, m.Path+" "+m.Version+": "+m.Reason)
	}
	want := []string{
		"example.com/gone v1.0.0: module lookup disabled by GOPROXY=off",
		"example.com/zgone v1.1.0: module lookup disabled by GOPROXY=off",
	}
	if !slices.Equal(got, want) || me.Root != root {
		t.Errorf("Explain = %q in %s, want %q in %s", got, me.Root, want, root)
	}
	other := filepath.Join(root, "other")
	if me := Explain(t.Context(), other, Env(other, nil)); me != nil {
		t.Errorf("Explain on a workspace with nothing missing = %v, want nil", me)
	}
}

// TestDownloadNamesWhatItCouldNotFetch asks for two versions with the
// network off and an empty module cache: both are named, and the command
// that retries them is given.
func TestDownloadNamesWhatItCouldNotFetch(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GOMODCACHE", filepath.Join(dir, "modcache"))
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-modcacherw")
	err := Download(t.Context(), dir, Env(dir, map[string]string{"GOWORK": "off"}), []string{"example.com/b@v1.0.0", "example.com/a@v0.2.0"})
	me, ok := err.(*MissingError)
	if !ok {
		t.Fatalf("Download = %v, want a *MissingError", err)
	}
	want := []string{
		"module example.com/a v0.2.0 is not in the module cache and could not be downloaded: module lookup disabled by GOPROXY=off",
		"module example.com/b v1.0.0 is not in the module cache and could not be downloaded: module lookup disabled by GOPROXY=off",
		"fill the module cache with `go mod download example.com/a@v0.2.0 example.com/b@v1.0.0` (it needs the module proxy, GOPROXY, to be reachable), then run again",
	}
	if got := me.Lines(); !slices.Equal(got, want) {
		t.Errorf("Lines = %q\nwant %q", got, want)
	}
	if err := Download(t.Context(), dir, Env(dir, map[string]string{"GOWORK": "off"}), nil); err != nil {
		t.Errorf("Download of nothing = %v", err)
	}
}
