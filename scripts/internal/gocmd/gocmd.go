// Package gocmd is how the gates run the go command: in the workspace of
// the repository root, with the caller's module proxy, so that an empty
// module cache is filled the way "go build" fills it, and with one clear
// error when a module is neither in the module cache nor downloadable:
// which module, why, and the command that fills the cache.
package gocmd

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/module"
)

// Env returns the environment for a go command run in the workspace at
// root: the caller's, with GOWORK pinned to root/go.work, no toolchain
// switch (GOTOOLCHAIN=local), and every KEY=VALUE of set in place of the
// caller's value. The module proxy, the checksum database and the module
// cache stay the caller's.
func Env(root string, set map[string]string) []string {
	all := map[string]string{"GOWORK": filepath.Join(root, "go.work"), "GOTOOLCHAIN": "local"}
	maps.Copy(all, set)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := all[k]; !ok {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(all)) {
		env = append(env, k+"="+all[k])
	}
	return env
}

// Missing is a module the go command needs but could neither find in the
// module cache nor download.
type Missing struct {
	Path, Version string
	Reason        string // the go command's words, e.g. "module lookup disabled by GOPROXY=off"
}

// MissingError names the modules a gate could not load and says how to
// fill the module cache: run Command ("go mod download" when empty) in
// Root (the repository root the gate ran on; anywhere when empty).
type MissingError struct {
	Root    string
	Command string
	Modules []Missing // sorted by path and version
}

// Lines returns the error as lines: one per missing module, then the
// command to run.
func (e *MissingError) Lines() []string {
	var out []string
	for _, m := range e.Modules {
		out = append(out, fmt.Sprintf("module %s %s is not in the module cache and could not be downloaded: %s", m.Path, m.Version, m.Reason))
	}
	cmd := cmp.Or(e.Command, "go mod download")
	where := ""
	if e.Root != "" {
		where = " in " + e.Root
	}
	return append(out, fmt.Sprintf("fill the module cache with `%s`%s (it needs the module proxy, GOPROXY, to be reachable), then run again", cmd, where))
}

func (e *MissingError) Error() string { return strings.Join(e.Lines(), "; ") }

// PrintMissing writes the lines of err to w, each after "name: ", and
// reports true, when err is or wraps a *MissingError; otherwise it writes
// nothing and reports false. A gate that writes files passes written to
// add that nothing was written.
func PrintMissing(w io.Writer, name string, err error, written bool) bool {
	var me *MissingError
	if !errors.As(err, &me) {
		return false
	}
	for _, l := range me.Lines() {
		fmt.Fprintf(w, "%s: %s\n", name, l)
	}
	if written {
		fmt.Fprintf(w, "%s: nothing was written.\n", name)
	}
	return true
}

// missingShapes are what the go command says when a module it needs is
// not in the cache and cannot be fetched: the network is off or
// unreachable, or the proxy does not have it.
var missingShapes = []string{
	"module lookup disabled", "GOPROXY=off", "not in the module cache", "cannot find module providing package",
	"dial tcp", "no such host", "connection refused", "network is unreachable", "i/o timeout",
	"TLS handshake", "unrecognized import path", "404 Not Found", "410 Gone", "reading file://",
}

// LooksMissing reports whether msg, an error message of the go command,
// may come from a module that is neither in the module cache nor
// downloadable. It is a first sieve: [Explain] gives the answer.
func LooksMissing(msg string) bool {
	for _, s := range missingShapes {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// downloaded is one object of "go mod download -json".
type downloaded struct {
	Path, Version, Error string
}

// goErrorLine matches the go command's "go: PATH@VERSION: reason" lines.
var goErrorLine = regexp.MustCompile(`(?m)^go: ([^\s@]+)@(v[^\s:]+): (.+)$`)

// Explain runs "go mod download -json" in the workspace at root with the
// environment env (as the failed command had it) and returns a
// *MissingError naming every module the workspace needs that is not
// unpacked in the module cache and could not be downloaded. It returns
// nil when there is none, or when the go command's answer cannot be read:
// the failure then had another cause, and the caller's error stands.
func Explain(ctx context.Context, root string, env []string) *MissingError {
	mods, ok := download(ctx, root, env, nil)
	if !ok || len(mods) == 0 {
		return nil
	}
	cache, err := modCache(ctx, root, env)
	if err != nil {
		return nil
	}
	mods = slices.DeleteFunc(mods, func(m Missing) bool { return unpacked(cache, m.Path, m.Version) })
	if len(mods) == 0 {
		return nil
	}
	return &MissingError{Root: root, Modules: mods}
}

// Download fills the module cache with the module versions mods
// ("path@version") by running "go mod download" in dir with the
// environment env. It returns a *MissingError naming each one it could
// not download, with the command that retries them, or nil when all are
// in the cache. It errors when the go command fails without saying which
// module it could not download.
func Download(ctx context.Context, dir string, env, mods []string) error {
	if len(mods) == 0 {
		return nil
	}
	missing, ok := download(ctx, dir, env, mods)
	switch {
	case !ok:
		return fmt.Errorf("go mod download failed and named no module")
	case len(missing) == 0:
		return nil
	}
	var retry []string
	for _, m := range missing {
		retry = append(retry, m.Path+"@"+m.Version)
	}
	return &MissingError{Command: "go mod download " + strings.Join(retry, " "), Modules: missing}
}

// download runs "go mod download -json" with the arguments args in dir
// and returns the modules it could not download, sorted. ok is false when
// it failed without naming one.
func download(ctx context.Context, dir string, env, args []string) (mods []Missing, ok bool) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"mod", "download", "-json"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if cmd.Run() == nil {
		return nil, true
	}
	seen := map[string]bool{}
	add := func(path, version, reason string) {
		key := path + "@" + version
		if seen[key] {
			return
		}
		seen[key] = true
		mods = append(mods, Missing{Path: path, Version: version, Reason: strings.TrimPrefix(reason, key+": ")})
	}
	dec := json.NewDecoder(&stdout)
	for {
		var d downloaded
		if err := dec.Decode(&d); err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, false
			}
			break
		}
		if d.Error != "" {
			add(d.Path, d.Version, d.Error)
		}
	}
	for _, m := range goErrorLine.FindAllStringSubmatch(stderr.String(), -1) {
		add(m[1], m[2], m[3])
	}
	slices.SortFunc(mods, func(a, b Missing) int {
		return strings.Compare(a.Path+"@"+a.Version, b.Path+"@"+b.Version)
	})
	return mods, len(mods) > 0
}

// unpacked reports whether the module path@version has its source tree
// in the module cache at cache: the go command can then build from it
// even when its zip file is gone.
func unpacked(cache, path, version string) bool {
	dir, err := module.EscapePath(path)
	if err != nil {
		return false
	}
	v, err := module.EscapeVersion(version)
	if err != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(cache, filepath.FromSlash(dir)+"@"+v))
	return err == nil && st.IsDir()
}

// modCache returns the module cache directory the go command uses with
// the environment env.
func modCache(ctx context.Context, root string, env []string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMODCACHE")
	cmd.Dir = root
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", errors.New("go env GOMODCACHE is empty")
	}
	return dir, nil
}
