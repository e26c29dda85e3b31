package kcluster

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Images the cluster imports into its containerd: PauseImage is the pod sandbox (catatonit in
// pause mode, which also reaps as PID 1 of a shared process namespace) and has no shell;
// SandboxImage holds bash, coreutils, setsid and ps with the libraries they load, copied from
// this host.
const (
	PauseImage   = "localhost/dsh-pause:v1"
	SandboxImage = "localhost/dsh-sandbox:v1"
)

// imageFile is one file of a root file system built from host files.
type imageFile struct {
	name string // path inside the image, without the leading slash
	mode int64
	typ  byte
	data []byte
	link string
}

// rootfs collects host files into an image root file system.
type rootfs struct {
	files map[string]imageFile
}

func newRootfs() *rootfs { return &rootfs{files: map[string]imageFile{}} }

func (r *rootfs) dir(name string, mode int64) {
	name = strings.Trim(name, "/")
	if name == "" || name == "." {
		return
	}
	if _, ok := r.files[name]; ok {
		return
	}
	r.dir(filepath.Dir(name), 0o755)
	r.files[name] = imageFile{name: name, mode: mode, typ: tar.TypeDir}
}

func (r *rootfs) file(name string, mode int64, data []byte) {
	name = strings.Trim(name, "/")
	r.dir(filepath.Dir(name), 0o755)
	r.files[name] = imageFile{name: name, mode: mode, typ: tar.TypeReg, data: data}
}

func (r *rootfs) symlink(name, target string) {
	name = strings.Trim(name, "/")
	r.dir(filepath.Dir(name), 0o755)
	r.files[name] = imageFile{name: name, mode: 0o777, typ: tar.TypeSymlink, link: target}
}

// hostFile copies the host file at path (symbolic links followed) to the same path in the image,
// with the libraries ldd names for it.
func (r *rootfs) hostFile(path string, withLibs bool) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("kcluster: image file %s: %w", path, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("kcluster: image file %s: %w", path, err)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return fmt.Errorf("kcluster: image file %s: %w", path, err)
	}
	r.file(real, int64(st.Mode().Perm()), data)
	// The name asked for, under its real parent (the merged-/usr links of base cover the rest).
	if parent, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		if alias := filepath.Join(parent, filepath.Base(path)); alias != real {
			r.symlink(alias, real)
		}
	}
	if !withLibs {
		return nil
	}
	out, err := exec.Command("ldd", real).Output()
	if err != nil {
		return nil // a static executable or a script: nothing to add
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		var lib string
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			lib = f[2]
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			lib = f[0]
		}
		if lib == "" {
			continue
		}
		if err := r.hostFile(lib, false); err != nil {
			return err
		}
	}
	return nil
}

// layer returns the root file system as an uncompressed tar.
func (r *rootfs) layer() ([]byte, error) {
	names := make([]string, 0, len(r.files))
	for n := range r.files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		f := r.files[n]
		h := &tar.Header{Name: f.name, Mode: f.mode, Typeflag: f.typ, Linkname: f.link, Format: tar.FormatPAX}
		if f.typ == tar.TypeDir {
			h.Name += "/"
		}
		if f.typ == tar.TypeReg {
			h.Size = int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if f.typ == tar.TypeReg {
			if _, err := tw.Write(f.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeArchive writes r as a one-layer image named ref, in the docker save format that
// ctr images import reads, to path.
func (r *rootfs) writeArchive(path, ref string, entrypoint []string) error {
	layer, err := r.layer()
	if err != nil {
		return fmt.Errorf("kcluster: image %s: %w", ref, err)
	}
	sum := sha256.Sum256(layer)
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config": map[string]any{
			"Entrypoint": entrypoint,
			"Env":        []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"},
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + hex.EncodeToString(sum[:])}},
	})
	if err != nil {
		return err
	}
	manifest, err := json.Marshal([]map[string]any{{"Config": "config.json", "RepoTags": []string{ref}, "Layers": []string{"layer.tar"}}})
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("kcluster: %w", err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, e := range []struct {
		name string
		data []byte
	}{{"config.json", config}, {"layer.tar", layer}, {"manifest.json", manifest}} {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data))}); err != nil {
			return err
		}
		if _, err := io.Copy(tw, bytes.NewReader(e.data)); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// base adds what every image has: the merged-/usr links of the host, /etc/passwd and /etc/group
// (root, nobody and dsh 1000), /tmp and /workspace.
func (r *rootfs) base() {
	for _, d := range []string{"/bin", "/lib", "/lib64", "/sbin"} {
		if t, err := os.Readlink(d); err == nil {
			r.symlink(d, t)
		}
	}
	r.file("/etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\ndsh:x:1000:1000:dsh:/workspace:/bin/bash\n"))
	r.file("/etc/group", 0o644, []byte("root:x:0:\nnobody:x:65534:\ndsh:x:1000:\n"))
	r.dir("/tmp", 0o1777)
	r.dir("/workspace", 0o777)
	r.dir("/root", 0o700)
	for _, d := range []string{"/proc", "/sys", "/dev", "/etc", "/run"} {
		r.dir(d, 0o755)
	}
}

// buildImages writes the pause and sandbox image archives into dir and returns their paths.
func buildImages(dir string) (pause, sandbox string, err error) {
	p := newRootfs()
	p.base()
	if err := p.hostFile("/usr/bin/catatonit", false); err != nil {
		return "", "", fmt.Errorf("%w (install catatonit)", err)
	}
	pause = filepath.Join(dir, "pause.tar")
	if err := p.writeArchive(pause, PauseImage, []string{"/usr/bin/catatonit", "-P"}); err != nil {
		return "", "", err
	}
	s := newRootfs()
	s.base()
	out, err := exec.Command("dpkg", "-L", "coreutils").Output()
	if err != nil {
		return "", "", fmt.Errorf("kcluster: dpkg -L coreutils: %w", err)
	}
	bins := []string{"/bin/bash", "/usr/bin/setsid", "/usr/bin/ps", "/usr/bin/catatonit"}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "/usr/bin/") || strings.HasPrefix(l, "/bin/") {
			if st, err := os.Stat(l); err == nil && st.Mode().IsRegular() {
				bins = append(bins, l)
			}
		}
	}
	for _, b := range bins {
		if err := s.hostFile(b, true); err != nil {
			return "", "", err
		}
	}
	s.symlink("/usr/bin/sh", "bash")
	sandbox = filepath.Join(dir, "sandbox.tar")
	if err := s.writeArchive(sandbox, SandboxImage, []string{"/usr/bin/catatonit", "-P"}); err != nil {
		return "", "", err
	}
	return pause, sandbox, nil
}
