package notices

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/scripts/internal/gocmd"
)

// Platform is one build configuration the module graph is listed for.
type Platform struct {
	GOOS, GOARCH string
	CGO          bool
}

func (p Platform) String() string {
	cgo := "0"
	if p.CGO {
		cgo = "1"
	}
	return p.GOOS + "/" + p.GOARCH + " CGO_ENABLED=" + cgo
}

// Platforms are the configurations whose link sets are merged: what any
// of them links counts as shipped, so the notices do not depend on the
// machine that generates them.
var Platforms = func() []Platform {
	var out []Platform
	for _, osArch := range [][2]string{{"darwin", "amd64"}, {"darwin", "arm64"}, {"linux", "amd64"}, {"linux", "arm64"}, {"windows", "amd64"}} {
		for _, cgo := range []bool{false, true} {
			out = append(out, Platform{osArch[0], osArch[1], cgo})
		}
	}
	return out
}()

// listedModule is the module of a listed package, as go list prints it.
type listedModule struct {
	Path    string
	Version string
	Main    bool
	Dir     string
	Replace *listedModule
}

type listedPackage struct {
	ImportPath string
	Standard   bool
	DepOnly    bool
	Module     *listedModule
	Imports    []string
}

// linked is what one or more go list runs found: every non-workspace
// module reached, and whether the non-test code of the workspace modules
// reaches it.
type linked struct {
	modules map[string]*listedModule // by module path
	shipped map[string]bool          // module path → linked by non-test code
}

// listAll lists the packages of the workspace at root on every platform,
// at most two go commands at a time, and merges what they link.
// patterns are the package patterns of the workspace modules (non-test
// roots); tools are the packages named by tool directives, which count
// as tooling.
func listAll(ctx context.Context, root string, patterns, tools []string) (*linked, error) {
	type result struct {
		pkgs []listedPackage
		err  error
	}
	results := make([]result, len(Platforms))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, p := range Platforms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			pkgs, err := goList(ctx, root, p, append(slices.Clone(patterns), tools...))
			results[i] = result{pkgs, err}
		}()
	}
	wg.Wait()
	l := &linked{modules: map[string]*listedModule{}, shipped: map[string]bool{}}
	for i, r := range results {
		if r.err != nil {
			// One explanation covers every platform: they list the same
			// modules.
			if gocmd.LooksMissing(r.err.Error()) {
				if me := gocmd.Explain(ctx, root, gocmd.Env(root, map[string]string{"GOFLAGS": "-mod=readonly"})); me != nil {
					return nil, me
				}
			}
			return nil, fmt.Errorf("go list (%s): %w", Platforms[i], r.err)
		}
		if err := l.merge(r.pkgs); err != nil {
			return nil, fmt.Errorf("go list (%s): %w", Platforms[i], err)
		}
	}
	return l, nil
}

// merge adds the packages of one go list run: every third-party module is
// recorded, and those reached from a non-test package of a workspace
// module through non-test imports are marked shipped.
func (l *linked) merge(pkgs []listedPackage) error {
	byPath := make(map[string]*listedPackage, len(pkgs))
	var roots []string
	for i := range pkgs {
		p := &pkgs[i]
		byPath[p.ImportPath] = p
		if p.Standard || p.Module == nil {
			continue
		}
		if !p.Module.Main {
			m := p.Module
			if prev, ok := l.modules[m.Path]; ok && (prev.Version != m.Version || replaceKey(prev) != replaceKey(m)) {
				return fmt.Errorf("module %s is listed as both %s and %s", m.Path, describe(prev), describe(m))
			}
			l.modules[m.Path] = m
		}
		if p.Module.Main && !p.DepOnly && !isTestVariant(p.ImportPath) {
			roots = append(roots, p.ImportPath)
		}
	}
	seen := map[string]bool{}
	for len(roots) > 0 {
		path := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if seen[path] {
			continue
		}
		seen[path] = true
		p := byPath[path]
		if p == nil {
			continue
		}
		if p.Module != nil && !p.Module.Main {
			l.shipped[p.Module.Path] = true
		}
		roots = append(roots, p.Imports...)
	}
	return nil
}

// isTestVariant reports whether a listed import path is a test package, a
// package recompiled for a test, or a test main.
func isTestVariant(importPath string) bool {
	return strings.Contains(importPath, " [") || strings.HasSuffix(importPath, ".test")
}

func replaceKey(m *listedModule) string {
	if m.Replace == nil {
		return ""
	}
	return m.Replace.Path + "@" + m.Replace.Version
}

func describe(m *listedModule) string {
	s := m.Path + " " + m.Version
	if m.Replace != nil {
		s += " => " + strings.TrimSpace(m.Replace.Path+" "+m.Replace.Version)
	}
	return s
}

// goEnv returns the environment for the go command: the caller's (its
// module proxy fills an empty module cache, as go build would), with the
// workspace pinned to root/go.work, no toolchain switch, read-only module
// files, and the platform p.
func goEnv(root string, p Platform) []string {
	return gocmd.Env(root, map[string]string{
		"GOFLAGS":     "-mod=readonly",
		"GOOS":        p.GOOS,
		"GOARCH":      p.GOARCH,
		"CGO_ENABLED": map[bool]string{false: "0", true: "1"}[p.CGO],
	})
}

// goList runs go list -deps -test on patterns in root for platform p and
// decodes its output. A failure carries the go command's message.
func goList(ctx context.Context, root string, p Platform, patterns []string) ([]listedPackage, error) {
	args := append([]string{"list", "-deps", "-test", "-json=ImportPath,Standard,DepOnly,Module,Imports"}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = goEnv(root, p)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := goMessage(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, errors.New(msg)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(&stdout)
	for {
		var pkg listedPackage
		err := dec.Decode(&pkg)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, pkg)
	}
	return pkgs, nil
}

// goMessage returns the go command's error output without its progress
// lines ("go: downloading …", printed when a module is unpacked from the
// cache) and without "matched no packages" warnings, joined by "; ".
func goMessage(stderr string) string {
	var lines []string
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "go: downloading ") || strings.Contains(line, "matched no packages") {
			continue
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "; ")
}
