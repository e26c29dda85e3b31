package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// tsclientDir holds the scenario of the TypeScript SDK's client and its locked packages.
const tsclientDir = "testdata/tsclient"

// TestTSClient runs testdata/tsclient/scenario.mjs, a client made with the official TypeScript
// MCP SDK, against a dsh built from this tree, over stdio and over HTTP: the SDK validates every
// structured result against its tool's outputSchema, and the scenario compiles every schema with
// ajv in strict mode (draft 2020-12) and walks the tools through their result shapes, progress,
// cancellation and the policy's asks answered by elicitation. It needs node and npm (./test
// installs them); the packages come from the npm registry by `npm ci` into a cache keyed by the
// lock file, and the test is skipped only when npm cannot reach the registry to fill it.
func TestTSClient(t *testing.T) {
	if testing.Short() {
		t.Skip("the TypeScript SDK scenario builds dsh and runs node: not in -short")
	}
	modules := npmModules(t)
	dsh := buildDsh(t)
	t.Run("stdio", func(t *testing.T) {
		runScenario(t, modules, "stdio", dsh, workdir(t))
	})
	t.Run("http", func(t *testing.T) {
		dir := workdir(t)
		policy := filepath.Join(t.TempDir(), "policy.json")
		if err := os.WriteFile(policy, []byte(`{"default":"allow","ask":["touch *"],"deny":["rm"]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		d := startHTTPBinary(t, dsh, nil, "-policy", policy, "-workdir", dir)
		runScenario(t, modules, "http", d.url, aliceToken, dir)
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := d.wait(t); code != 0 {
			t.Errorf("dsh mcp -http after SIGTERM exited %d; stderr:\n%s", code, d.stderr)
		}
	})
}

// workdir returns a fresh directory for the scenario's commands, beside which it writes its
// own files (the policy, a file the sandbox must keep it from writing).
func workdir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runScenario runs node scenario.mjs ARGS… with the installed modules and fails the test when
// a check of the scenario failed.
func runScenario(t *testing.T, modules string, args ...string) {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(tsclientDir, "scenario.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// node resolves the packages from the directory of the script: put a copy beside the cache.
	if err := os.WriteFile(filepath.Join(dir, "scenario.mjs"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"scenario.mjs"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("node scenario.mjs %s:\n%s", args[0], out)
	if err != nil {
		t.Fatalf("the TypeScript SDK scenario failed (%v); the FAIL lines above say which checks", err)
	}
	if !regexp.MustCompile(`(?m)^tsclient: [1-9][0-9]* checks, 0 failed$`).Match(out) {
		t.Fatal("the scenario did not report its checks")
	}
}

// buildDsh builds dsh from this tree (without the race detector, as users build it) and
// returns the binary's path.
func buildDsh(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dsh")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// npmModules returns a node_modules directory holding the packages of testdata/tsclient's lock
// file, installed by `npm ci` into $XDG_CACHE_HOME/dsh-go/npm/HASH (HASH: of package.json and
// package-lock.json) unless an earlier run did.
func npmModules(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: ./test installs it (Debian: apt-get install nodejs npm)", tool)
		}
	}
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(tsclientDir, name))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(cache, "dsh-go", "npm")
	final := filepath.Join(base, hex.EncodeToString(h.Sum(nil))[:16])
	modules := filepath.Join(final, "node_modules")
	if _, err := os.Stat(filepath.Join(final, "installed")); err == nil {
		return modules
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	// Install into a directory of its own and rename it into place: a run that dies midway, or
	// one beside it, never leaves a half-filled cache.
	tmp, err := os.MkdirTemp(base, "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, _ := os.ReadFile(filepath.Join(tsclientDir, name)) // read above
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		if ping, perr := exec.CommandContext(ctx, "npm", "ping").CombinedOutput(); perr != nil {
			t.Skipf("npm cannot reach its registry, so the TypeScript SDK cannot be installed: %v\n%s", perr, ping)
		}
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, "installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, "installed")); serr != nil {
			t.Fatal(err) // not a run beside this one that got there first
		}
	}
	return modules
}
