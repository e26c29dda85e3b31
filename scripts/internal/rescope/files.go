package rescope

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/manifest"
)

// kind is what a file is to the rescoper.
type kind int

const (
	skip     kind = iota
	goMod         // go.mod
	goWork        // go.work
	goSum         // go.sum or go.work.sum: never rewritten, only reported
	goSource      // *.go
	mdFile        // *.md
)

// skipDirs are directory names whose contents are never rewritten: test
// fixtures say what they say on purpose, as Go's own tools assume.
var skipDirs = map[string]bool{"testdata": true, "node_modules": true, ".git": true}

// classify returns what the root-relative slash path rel is. forkDirs are
// the fork directories, whose own README and LICENSE stay as upstream
// wrote them.
func classify(rel string, forkDirs []string) kind {
	if inSkipDir(rel) {
		return skip
	}
	if rel == manifest.File || strings.HasPrefix(rel, "docs/rfc/") {
		// The manifest states both names on purpose; decision records
		// say what was true when they were written.
		return skip
	}
	base := path.Base(rel)
	if slices.Contains(forkDirs, path.Dir(rel)) && upstreamOwned(base) {
		return skip
	}
	switch {
	case base == "go.mod":
		return goMod
	case base == "go.work":
		return goWork
	case base == "go.sum" || base == "go.work.sum":
		return goSum
	case strings.HasSuffix(base, ".go"):
		return goSource
	case strings.HasSuffix(base, ".md"):
		return mdFile
	}
	return skip
}

// inSkipDir reports whether the root-relative slash path rel lies in a
// directory the rescoper never reads.
func inSkipDir(rel string) bool {
	for _, part := range strings.Split(path.Dir(rel), "/") {
		if skipDirs[part] {
			return true
		}
	}
	return false
}

// symlinkProblem returns why the listed path rel under root, of kind k,
// stops the rename, or "". The rescoper never follows a symbolic link (so
// a rename never writes outside the root), so a link in place of a file
// it reads, or of a directory that may hold such files, would leave them
// unchecked while -check reports no residue.
func symlinkProblem(root, rel string, k kind) string {
	name := filepath.Join(root, filepath.FromSlash(rel))
	if st, err := os.Lstat(name); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return ""
	}
	if k != skip {
		return "is a symbolic link; rescope-vendor never follows one, so what it points to is not checked: make it a regular file"
	}
	if st, err := os.Stat(name); err == nil && st.IsDir() && !inSkipDir(rel) {
		return "is a symbolic link to a directory; rescope-vendor never follows one, so the files in it are not checked: make it a real directory"
	}
	return ""
}

// symlinkOn returns the first component of the root-relative slash path
// dir under root that is a symbolic link ("vendor", "vendor/lib"), or "".
func symlinkOn(root, dir string) string {
	cur := ""
	for _, part := range strings.Split(dir, "/") {
		cur = path.Join(cur, part)
		if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(cur))); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return cur
		}
	}
	return ""
}

// upstreamOwned reports whether a file named base at a fork's root is one
// the fork keeps as upstream wrote it.
func upstreamOwned(base string) bool {
	u := strings.ToUpper(base)
	for _, p := range []string{"README", "LICENSE", "LICENCE", "COPYING", "NOTICE", "AUTHORS", "PATENTS"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// listFiles returns the root-relative slash paths of the files under root
// that git tracks or would track (untracked but not ignored), or of every
// file found by a walk when root is not in a git work tree, sorted.
func listFiles(root string) ([]string, error) {
	if files, ok := gitFiles(root); ok {
		return files, nil
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(files)
	return files, err
}

func gitFiles(root string) ([]string, bool) {
	cmd := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return nil, false
	}
	var files []string
	for _, f := range bytes.Split(out.Bytes(), []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	slices.Sort(files)
	return slices.Compact(files), true
}

// maxFileSize is the largest file the rescoper reads.
const maxFileSize = 32 << 20

// readFile reads the regular file rel under root. ok is false, with a nil
// error, when the file is gone or is not a regular file (a symlink is
// never followed, so a rename never writes outside the root).
func readFile(root, rel string) (data []byte, mode fs.FileMode, ok bool, err error) {
	name := filepath.Join(root, filepath.FromSlash(rel))
	st, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, unwrap(err)
	}
	if !st.Mode().IsRegular() {
		return nil, 0, false, nil
	}
	if st.Size() > maxFileSize {
		return nil, 0, false, errors.New("file is over the 32 MiB limit")
	}
	data, err = os.ReadFile(name)
	if err != nil {
		return nil, 0, false, unwrap(err)
	}
	return data, st.Mode().Perm(), true, nil
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
