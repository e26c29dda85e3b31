// Package modmap is the workspace's module map as code: for every module, its job, the packages
// its product code may import and what its tests may import besides. TestModuleMap checks every
// package of every module in go.work against it, for each platform the modules build on, the way
// the Go tree's go/build deps test checks the standard library. A new module adds its row here
// when it is born; a change to a rule says why in an RFC.
package modmap

import "strings"

// Prefix is the module path prefix of the workspace.
const Prefix = "github.com/dsh-go/dsh/"

// Rule is one row of the map. Patterns are import paths: a path in the workspace is written
// without Prefix ("bash/backend"), any other in full; a trailing "/..." matches the path and
// everything under it. The standard library and the module's own packages are always allowed.
type Rule struct {
	Dir     string   // the module's directory, relative to the root, "/"-separated
	Job     string   // what the module is for, as the design says
	Imports []string // what its product code may import
	Tests   []string // what its tests may import besides Imports
	Why     string   // where a rule departs from the design's table, the record that says why
}

// Map is the module map, one rule per module of go.work.
var Map = []Rule{
	{Dir: "bash", Job: "the executor seam, the backend kit, the conformance kit",
		Imports: nil},
	{Dir: "internal", Job: "what the modules share with no promise: process trees, env scrub, sandbox, supervisor, leak checks, terminal text",
		Imports: []string{"golang.org/x/sys/...", "github.com/landlock-lsm/go-landlock/...", "go.uber.org/goleak"}},
	{Dir: "bash-local", Job: "the local backend",
		Imports: []string{"bash", "bash/backend", "bash/bashtext", "internal/...", "golang.org/x/sys/...", "github.com/creack/pty"},
		Tests:   []string{"bash/bashtest", "bash/sandboxtest"}},
	{Dir: "bash-ssh", Job: "the remote backend over SSH",
		Imports: []string{"bash", "bash/backend", "internal/envpolicy", "internal/launcher", "golang.org/x/crypto/ssh/..."},
		Tests:   []string{"bash/bashtest", "internal/escapetest", "internal/leaktest", "bash-local"},
		Why:     "docs/rfc/implemented/2026-12-04-remote-launcher.md"},
	{Dir: "bash-k8s", Job: "the seam in Kubernetes pods over pods/exec",
		Imports: []string{"bash", "bash/backend", "internal/...", "k8s.io/..."},
		Tests:   []string{"bash/bashtest", "bash/sandboxtest"}},
	{Dir: "tools", Job: "tool definition, schemas, registry, permission stages, presentation",
		Imports: []string{"github.com/google/jsonschema-go/..."}},
	{Dir: "bash-policy", Job: "allow / ask / deny on the parsed command",
		Imports: []string{"tools", "mvdan.cc/sh/v3/..."}},
	{Dir: "tool-bash", Job: "the model-facing one-shot bash tools over any executor",
		Imports: []string{"bash", "bash/bashtext", "tools", "internal/termtext", "internal/envpolicy"},
		Tests:   []string{"bash-local", "internal/leaktest", "tools/acp"},
		Why:     "docs/rfc/implemented/2026-12-04-module-map-as-a-test.md"},
	{Dir: "tool-bash-persistent", Job: "the persistent bash over one PTY shell per owner",
		Imports: []string{"tools", "internal/...", "github.com/creack/pty", "golang.org/x/sys/...", "bash", "bash/backend", "bash/bashtext"},
		Tests:   []string{"bash-local", "bash/sandboxtest", "go.uber.org/goleak"},
		Why:     "docs/rfc/implemented/2026-12-04-module-map-as-a-test.md"},
	{Dir: "cmd/dsh", Job: "the tools as an MCP server and a CLI",
		Imports: []string{"bash/...", "bash-local/...", "bash-ssh/...", "bash-policy/...", "tools/...", "tool-bash/...", "tool-bash-persistent/...", "internal/...",
			"github.com/modelcontextprotocol/go-sdk/...", "github.com/google/jsonschema-go/...", "golang.org/x/sys/..."},
		Tests: []string{"github.com/rogpeppe/go-internal/..."}},
	{Dir: "scripts", Job: "the doc gates, the catalog, the fork rescoper, notices, the module-proxy builder",
		Imports: []string{"github.com/yuin/goldmark/...", "golang.org/x/tools/...", "golang.org/x/mod/...", "github.com/google/licensecheck"},
		Tests:   []string{"github.com/rogpeppe/go-internal/...", "go.uber.org/goleak"}},
}

// Lookup returns the rule for the module in dir, and whether there is one.
func Lookup(dir string) (Rule, bool) {
	for _, r := range Map {
		if r.Dir == dir {
			return r, true
		}
	}
	return Rule{}, false
}

// Allows reports whether a package of the module of r may import path: in product code when
// test is false, in a test file when it is true.
func (r Rule) Allows(path string, test bool) bool {
	if isStd(path) || within(path, Prefix+r.Dir) {
		return true
	}
	pats := r.Imports
	if test {
		pats = append(append([]string(nil), r.Imports...), r.Tests...)
	}
	for _, p := range pats {
		full := p
		if !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			full = Prefix + p
		}
		if tree, ok := strings.CutSuffix(full, "/..."); ok {
			if within(path, tree) {
				return true
			}
		} else if path == full {
			return true
		}
	}
	return false
}

// within reports whether path is tree or a package under it.
func within(path, tree string) bool {
	return path == tree || strings.HasPrefix(path, tree+"/")
}

// isStd reports whether path names a standard-library package (its first element has no dot).
func isStd(path string) bool {
	return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
}
