package links

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/scripts/internal/rootpath"
)

// tree answers "does this root-relative path exist, and with which case?"
// from cached directory listings, so that case is compared exactly on every
// file system and each directory is read once per run. It is safe for
// concurrent use.
type tree struct {
	root string
	dirs sync.Map // root-relative dir ("." for the root) -> *listing
}

type listing struct {
	once  sync.Once
	names map[string]os.DirEntry
	fold  map[string][]string // lower-cased name -> names on disk
	err   error
}

func (t *tree) list(dir string) *listing {
	v, _ := t.dirs.LoadOrStore(dir, &listing{})
	l := v.(*listing)
	l.once.Do(func() {
		entries, err := os.ReadDir(filepath.Join(t.root, filepath.FromSlash(dir)))
		if err != nil {
			l.err = err
			return
		}
		l.names = make(map[string]os.DirEntry, len(entries))
		l.fold = make(map[string][]string, len(entries))
		for _, e := range entries {
			l.names[e.Name()] = e
			k := strings.ToLower(e.Name())
			l.fold[k] = append(l.fold[k], e.Name())
		}
	})
	return l
}

// resolved is what the tree knows about one root-relative path.
type resolved struct {
	exists bool
	isDir  bool
	// actual is the path with the case found on disk, as far as it could
	// be followed.
	actual string
	// caseDiffers is set when some component exists only with another case.
	caseDiffers bool
	// outside is set when the symbolic link actual leads outside the root;
	// nothing beyond it is looked at.
	outside bool
	// parent is the deepest existing directory on the way (with on-disk
	// case), and missing the first component not found in it.
	parent, missing string
}

// resolve looks up the clean root-relative path rel ("." for the root).
func (t *tree) resolve(rel string) resolved {
	if rel == "." || rel == "" {
		return resolved{exists: true, isDir: true, actual: "."}
	}
	var r resolved
	dir := "."
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		l := t.list(dir)
		if l.err != nil {
			r.parent, r.missing = dir, part
			return r
		}
		e, ok := l.names[part]
		if !ok {
			alts := l.fold[strings.ToLower(part)]
			if len(alts) == 0 {
				r.parent, r.missing = dir, part
				r.actual = join(dir, part)
				return r
			}
			r.caseDiffers = true
			part = alts[0]
			e = l.names[part]
		}
		dir = join(dir, part)
		last := i == len(parts)-1
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			real, inside, err := rootpath.Resolve(t.root, dir)
			var st os.FileInfo
			if err == nil && inside {
				st, err = os.Stat(real)
			}
			if err != nil { // broken or looping symlink
				r.parent, r.missing = path.Dir(dir), part
				r.actual = dir
				return r
			}
			if !inside {
				r.outside, r.actual = true, dir
				return r
			}
			isDir = st.IsDir()
		}
		if !last && !isDir {
			r.parent, r.missing = path.Dir(dir), parts[i+1]
			r.actual = dir
			return r
		}
		if last {
			r.exists, r.isDir = true, isDir
		}
	}
	r.actual = dir
	return r
}

// names returns the entries of the root-relative directory dir.
func (t *tree) names(dir string) []string {
	l := t.list(dir)
	out := make([]string, 0, len(l.names))
	for n := range l.names {
		out = append(out, n)
	}
	return out
}

func join(dir, name string) string {
	if dir == "" || dir == "." {
		return name
	}
	return dir + "/" + name
}
