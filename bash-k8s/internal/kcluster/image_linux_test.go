package kcluster

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSandboxImageRuns builds the images, unpacks the sandbox image's layer and runs the kit's
// commands in it under chroot: a missing library or tool fails here, not inside a pod.
func TestSandboxImageRuns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	dir := t.TempDir()
	pause, sandbox, err := buildImages(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pause); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	layer, ref := readArchive(t, sandbox)
	if ref != SandboxImage {
		t.Errorf("archive names %q, want %q", ref, SandboxImage)
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	untar(t, layer, root)
	out, err := exec.Command("chroot", root, "/bin/bash", "-c", "seq -f 'line-%06g' 1 2; setsid -f true; env K=V printenv K; command -v ps >/dev/null && echo ps").CombinedOutput()
	if err != nil {
		t.Fatalf("bash in the sandbox image: %v\n%s", err, out)
	}
	if want := "line-000001\nline-000002\nV\nps\n"; string(out) != want {
		t.Errorf("bash in the sandbox image wrote %q, want %q", out, want)
	}
}

func readArchive(t *testing.T, path string) (layer []byte, ref string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return layer, ref
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		switch h.Name {
		case "layer.tar":
			layer = data
		case "manifest.json":
			var m []struct{ RepoTags []string }
			if err := json.Unmarshal(data, &m); err != nil || len(m) != 1 || len(m[0].RepoTags) != 1 {
				t.Fatalf("manifest.json %s: %v", data, err)
			}
			ref = m[0].RepoTags[0]
		}
	}
}

func untar(t *testing.T, layer []byte, root string) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, os.FileMode(h.Mode)&os.ModePerm)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, p)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, data, os.FileMode(h.Mode)&os.ModePerm)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
