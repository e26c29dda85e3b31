// Package kcluster builds and runs a real Kubernetes control plane and node on loopback for the
// bash-k8s tests: kube-apiserver and kubelet built from k8s.io/kubernetes module source, etcd,
// containerd and runc from the host, certificates made with openssl.
package kcluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// Version is the Kubernetes release the cluster is built from; the staging modules (client-go,
// api, apimachinery, ...) are pinned to the matching v0 release StagingVersion.
const (
	Version        = "v1.37.2"
	StagingVersion = "v0.37.2"
)

// Binaries names the built executables.
type Binaries struct {
	APIServer string
	Kubelet   string
}

// CacheDir is where the built binaries and the scratch module live: $DSH_K8S_CACHE when set,
// else the user cache directory under dsh-go/kubernetes/Version.
func CacheDir() (string, error) {
	if d := os.Getenv("DSH_K8S_CACHE"); d != "" {
		return filepath.Join(d, Version), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("kcluster: no cache directory (set DSH_K8S_CACHE): %w", err)
	}
	return filepath.Join(base, "dsh-go", "kubernetes", Version), nil
}

// Build returns kube-apiserver and kubelet for Version, building them when the cache holds none
// for this Go toolchain. The build runs in a scratch module requiring k8s.io/kubernetes with a
// replace to StagingVersion for each staging module; the Go build cache makes a rebuild cheap.
// Concurrent callers (several test binaries) wait for one build under a lock file. Progress
// lines go to log (nil for none).
func Build(ctx context.Context, log io.Writer) (Binaries, error) {
	if log == nil {
		log = io.Discard
	}
	dir, err := CacheDir()
	if err != nil {
		return Binaries{}, err
	}
	binDir := filepath.Join(dir, "bin")
	bins := Binaries{APIServer: filepath.Join(binDir, "kube-apiserver"), Kubelet: filepath.Join(binDir, "kubelet")}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return bins, fmt.Errorf("kcluster: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, "build.lock"))
	if err != nil {
		return bins, err
	}
	defer unlock()
	stamp := filepath.Join(binDir, "stamp")
	want := Version + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got, err := os.ReadFile(stamp); err == nil && string(got) == want && exists(bins.APIServer) && exists(bins.Kubelet) {
		return bins, nil
	}
	src := filepath.Join(dir, "src")
	if err := writeScratch(ctx, src, log); err != nil {
		return bins, err
	}
	ldflags := "-s -w -X k8s.io/component-base/version.gitVersion=" + Version +
		" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=" + minor(Version)
	for _, b := range []struct{ pkg, out string }{
		{"k8s.io/kubernetes/cmd/kubelet", bins.Kubelet},
		{"k8s.io/kubernetes/cmd/kube-apiserver", bins.APIServer},
	} {
		fmt.Fprintf(log, "kcluster: go build %s (cold: minutes; warm build cache: seconds)\n", b.pkg)
		tmp := b.out + ".tmp"
		if err := run(ctx, src, log, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", tmp, b.pkg); err != nil {
			return bins, err
		}
		if err := os.Rename(tmp, b.out); err != nil {
			return bins, fmt.Errorf("kcluster: %w", err)
		}
	}
	if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
		return bins, fmt.Errorf("kcluster: %w", err)
	}
	return bins, nil
}

func minor(v string) string {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) < 2 {
		return "0"
	}
	return parts[1]
}

var stagingReplace = regexp.MustCompile(`^\s*(?:replace\s+)?(k8s\.io/[A-Za-z0-9._/-]+)\s+=>\s+\./staging/`)

// writeScratch writes the scratch module into src and tidies it.
func writeScratch(ctx context.Context, src string, log io.Writer) error {
	if err := os.MkdirAll(src, 0o755); err != nil {
		return fmt.Errorf("kcluster: %w", err)
	}
	fmt.Fprintf(log, "kcluster: downloading k8s.io/kubernetes@%s\n", Version)
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "k8s.io/kubernetes@"+Version)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Stdout = &out
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kcluster: go mod download k8s.io/kubernetes@%s: %w (is the Go module proxy reachable?)", Version, err)
	}
	var info struct{ GoMod, Error string }
	if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.GoMod == "" {
		return fmt.Errorf("kcluster: go mod download gave no go.mod for k8s.io/kubernetes@%s: %s %v", Version, info.Error, err)
	}
	upstream, err := os.ReadFile(info.GoMod)
	if err != nil {
		return fmt.Errorf("kcluster: %w", err)
	}
	goLine := "go 1.25"
	var staging []string
	sc := bufio.NewScanner(bytes.NewReader(upstream))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "go ") {
			goLine = strings.TrimSpace(line)
		}
		if m := stagingReplace.FindStringSubmatch(line); m != nil {
			staging = append(staging, m[1])
		}
	}
	if len(staging) == 0 {
		return errors.New("kcluster: k8s.io/kubernetes go.mod names no staging module; the recipe no longer fits this release")
	}
	var mod strings.Builder
	fmt.Fprintf(&mod, "module dsh-kubernetes-build\n\n%s\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n", goLine, Version)
	for _, m := range staging {
		fmt.Fprintf(&mod, "\t%s => %s %s\n", m, m, StagingVersion)
	}
	mod.WriteString(")\n")
	tools := "//go:build tools\n\npackage tools\n\nimport (\n\t_ \"k8s.io/kubernetes/cmd/kube-apiserver\"\n\t_ \"k8s.io/kubernetes/cmd/kubelet\"\n)\n"
	old, _ := os.ReadFile(filepath.Join(src, "go.mod"))
	if !bytes.HasPrefix(old, []byte(mod.String())) || !exists(filepath.Join(src, "go.sum")) {
		if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(mod.String()), 0o644); err != nil {
			return fmt.Errorf("kcluster: %w", err)
		}
		if err := os.WriteFile(filepath.Join(src, "tools.go"), []byte(tools), 0o644); err != nil {
			return fmt.Errorf("kcluster: %w", err)
		}
		fmt.Fprintln(log, "kcluster: go mod tidy of the scratch module")
		if err := run(ctx, src, log, "go", "mod", "tidy"); err != nil {
			return err
		}
	}
	return nil
}

func run(ctx context.Context, dir string, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	var tail bytes.Buffer
	cmd.Stdout = io.MultiWriter(log, &tail)
	cmd.Stderr = io.MultiWriter(log, &tail)
	if err := cmd.Run(); err != nil {
		t := tail.String()
		if len(t) > 4000 {
			t = t[len(t)-4000:]
		}
		return fmt.Errorf("kcluster: %s %s in %s: %w\n%s", name, strings.Join(args, " "), dir, err, t)
	}
	return nil
}

func exists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
