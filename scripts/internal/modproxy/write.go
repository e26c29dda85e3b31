package modproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-go/dsh/scripts/internal/gocmd"
	"github.com/dsh-go/dsh/scripts/internal/workspace"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// info is the .info file of a module version, as a module proxy serves it.
type info struct {
	Version string
	Time    time.Time
}

// Write writes the module proxy of rel into dir: for every module, in the
// layout of the GOPROXY protocol, @v/list naming the version, and the
// version's .info (with the time stamp), .mod (the go.mod as the tree
// holds it) and .zip. dir must not exist or be empty; the proxy is built
// in a temporary directory beside it and moved into place only when it is
// complete, so on any error nothing is left behind.
func Write(rel *Release, dir string, stamp time.Time) error {
	if err := Vacant(dir); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".build-modproxy-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for _, m := range rel.Modules {
		if err := writeModule(tmp, module.Version{Path: m.Path(), Version: rel.Version}, m.Data, rel.Files[m.Path()], stamp); err != nil {
			return fmt.Errorf("%s: %w", m.Path(), err)
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	done = true
	return nil
}

// Vacant returns an error unless dir does not exist or is an empty
// directory.
func Vacant(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s exists and is not empty; remove it or name another directory", dir)
	}
	return nil
}

// writeModule writes the files of the module version mv under the proxy
// root.
func writeModule(root string, mv module.Version, gomod []byte, files []zip.File, stamp time.Time) error {
	escPath, err := module.EscapePath(mv.Path)
	if err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(mv.Version)
	if err != nil {
		return err
	}
	vdir := filepath.Join(root, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(vdir, escVersion)
	inf, err := json.Marshal(info{Version: mv.Version, Time: stamp.UTC()})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{filepath.Join(vdir, "list"): []byte(mv.Version + "\n"), base + ".info": inf, base + ".mod": gomod} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return err
		}
	}
	return writeZip(base+".zip", mv, files)
}

func writeZip(name string, mv module.Version, files []zip.File) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := zip.Create(f, mv, files); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Stamp returns the time to give the versions built from the tree at
// root: the committer time of its HEAD commit, or now outside git.
func Stamp(root string) time.Time {
	out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%cI").Output()
	if err == nil {
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out))); err == nil {
			return t
		}
	}
	return time.Now()
}

// FillCache puts the third-party module versions that rel's modules
// require into the go command's module cache, downloading those it lacks
// as go build would, so that the cache's download directory can serve a
// consumer of the proxy offline (a second GOPROXY entry). The versions
// are those the go.mod files name, which a consumer outside the workspace
// selects, not the higher ones the workspace may select. A version it
// cannot download is a *gocmd.MissingError.
func FillCache(ctx context.Context, ws *workspace.Workspace, rel *Release) error {
	mods := ThirdParty(ws, rel)
	if len(mods) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "build-modproxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	return gocmd.Download(ctx, dir, gocmd.Env(ws.Root, map[string]string{"GOWORK": "off", "GOFLAGS": ""}), mods)
}
