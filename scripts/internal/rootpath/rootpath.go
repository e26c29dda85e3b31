// Package rootpath resolves paths under a repository root with their
// symbolic links followed and tells whether they stay inside the root, so
// that a gate never reads, checks or writes outside the tree it was given
// through a link such as "docs/etc -> /etc". A symbolic link that stays
// inside the root is fine.
package rootpath

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// realRoots caches the resolved form of each root.
var realRoots sync.Map // root → string

// Resolve returns the absolute path that rel (root-relative, '/'
// separators) under root names once every symbolic link in it is
// resolved, and whether that path is root itself or lies beneath it (root
// being resolved too). err is the error of resolving either path, from
// filepath.EvalSymlinks (wrapping fs.ErrNotExist for a missing path or a
// dangling link); inside is false when err is set.
func Resolve(root, rel string) (real string, inside bool, err error) {
	realRoot, err := resolveRoot(root)
	if err != nil {
		return "", false, err
	}
	real, err = filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return "", false, err
	}
	if !filepath.IsAbs(real) {
		if real, err = filepath.Abs(real); err != nil {
			return "", false, err
		}
	}
	return real, Within(realRoot, real), nil
}

// ResolveExisting is Resolve for a path that need not exist yet, such as a
// file about to be written: it resolves the deepest part of rel that
// exists (rel itself when it does), since what is created below that can
// only be plain directories and a file. It returns the root-relative part
// it resolved and whether that lies inside root.
func ResolveExisting(root, rel string) (existing string, inside bool, err error) {
	for existing = path.Clean(rel); ; existing = path.Dir(existing) {
		_, inside, err = Resolve(root, existing)
		if !errors.Is(err, fs.ErrNotExist) || existing == "." {
			return existing, inside, err
		}
	}
}

// Within reports whether the absolute, clean path p is dir or lies beneath
// it. Both are taken as they are: no link is resolved.
func Within(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

func resolveRoot(root string) (string, error) {
	if v, ok := realRoots.Load(root); ok {
		return v.(string), nil
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", err
	}
	realRoots.Store(root, real)
	return real, nil
}
