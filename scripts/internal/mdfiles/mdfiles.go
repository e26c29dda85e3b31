// Package mdfiles finds the Markdown files the doc gates check: every
// "*.md" file under the root that git tracks or would track (untracked but
// not ignored), or every one found by a plain walk when the root is not in a
// git work tree, skipping "testdata" and "node_modules" directories. Files
// reached twice through symlinks are checked once.
package mdfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// skipDirs are directory names whose contents are never sources.
var skipDirs = map[string]bool{"testdata": true, "node_modules": true, ".git": true}

// Skipped reports whether the root-relative slash path rel lies in a
// directory the gates never read as a source.
func Skipped(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if skipDirs[part] {
			return true
		}
	}
	return false
}

// Find returns the root-relative slash paths of the Markdown files to
// check, sorted. With no paths it searches all of root; otherwise each path
// (root-relative, '/' separators) names a file, which is taken as it is, or a
// directory, which is searched like the root. Files that resolve through
// symlinks to a file already listed are dropped, the first in sorted order
// winning. Problems with single files or directories (unreadable, broken or
// looping symlinks, a named path that does not exist) do not stop the search:
// they come back as errors, each naming its path, beside the files found.
func Find(root string, paths []string) ([]string, []error) {
	var files []string
	var errs []error
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		p = path.Clean(p)
		st, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, pathErr(err)))
			continue
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		found, ferrs := search(root, p)
		files = append(files, found...)
		errs = append(errs, ferrs...)
	}
	slices.Sort(files)
	files = slices.Compact(files)
	return dedupe(root, files, errs)
}

// search lists the Markdown files under the root-relative directory dir.
func search(root, dir string) ([]string, []error) {
	if files, ok := gitFiles(root, dir); ok {
		return files, nil
	}
	return walk(root, dir)
}

// gitFiles asks git for tracked and untracked-but-not-ignored "*.md" files
// under dir. ok is false when git is missing or root is not in a work tree.
func gitFiles(root, dir string) (files []string, ok bool) {
	cmd := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", dir)
	cmd.Stderr = nil
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	for _, rel := range bytes.Split(out, []byte{0}) {
		r := string(rel)
		if r == "" || !strings.HasSuffix(r, ".md") || Skipped(r) {
			continue
		}
		// The index may still list a file deleted from the work tree.
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(r))); err != nil {
			continue
		}
		files = append(files, r)
	}
	return files, true
}

// walk is the fallback outside git: every "*.md" entry under dir that is a
// file or a symlink. It does not follow directory symlinks, so symlink loops
// cannot trap it.
func walk(root, dir string) ([]string, []error) {
	var files []string
	var errs []error
	base := filepath.Join(root, filepath.FromSlash(dir))
	_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rel, pathErr(err)))
			return nil // WalkDir skips the unreadable directory itself
		}
		if d.IsDir() {
			if p != base && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") && (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0) {
			files = append(files, rel)
		}
		return nil
	})
	return files, errs
}

// dedupe drops files whose real path was already seen and reports files
// whose symlinks cannot be resolved.
func dedupe(root string, files []string, errs []error) ([]string, []error) {
	seen := make(map[string]bool, len(files))
	out := files[:0]
	for _, f := range files {
		real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, pathErr(err)))
			continue
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, f)
	}
	return out, errs
}

// pathErr drops the *PathError wrapper, whose absolute path would repeat
// the root-relative name the caller prints.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
