package rescope

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrProblems is returned by [Apply] for a plan that has problems.
var ErrProblems = errors.New("the plan has problems; nothing was written")

// Apply writes every file of the plan p. It writes nothing when p has
// problems or when a file changed on disk since p read it. Each file is
// replaced atomically (a temporary file in its directory, then a rename)
// and keeps its permission bits; if one write fails, the files already
// written get their old bytes back. It returns the number of files
// written, and an error naming the file at fault.
func Apply(p *Plan) (int, error) {
	if len(p.Problems) > 0 {
		return 0, ErrProblems
	}
	for _, f := range p.Files {
		now, err := os.ReadFile(filepath.Join(p.Root, filepath.FromSlash(f.Path)))
		if err != nil {
			return 0, fmt.Errorf("%s: %w; nothing was written", f.Path, unwrap(err))
		}
		if !bytes.Equal(now, f.Old) {
			return 0, fmt.Errorf("%s: changed on disk while planning; nothing was written", f.Path)
		}
	}
	for i, f := range p.Files {
		if err := writeFileFn(p.Root, f.Path, f.New, f.Mode); err != nil {
			restored := 0
			var rerrs []error
			for _, done := range p.Files[:i] {
				if rerr := writeFileFn(p.Root, done.Path, done.Old, done.Mode); rerr != nil {
					rerrs = append(rerrs, fmt.Errorf("restore %s: %w", done.Path, rerr))
				} else {
					restored++
				}
			}
			err = fmt.Errorf("write %s: %w; %d file(s) written before it were restored", f.Path, err, restored)
			return 0, errors.Join(append([]error{err}, rerrs...)...)
		}
	}
	return len(p.Files), nil
}

// writeFileFn is how Apply writes a file; tests replace it to make a
// write fail, which file permissions cannot do for the root user.
var writeFileFn = writeFile

// writeFile replaces the file rel under root with data through a
// temporary file and a rename.
func writeFile(root, rel string, data []byte, mode os.FileMode) error {
	name := filepath.Join(root, filepath.FromSlash(rel))
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".rescope-*")
	if err != nil {
		return unwrap(err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
		os.Remove(tmp.Name())
		return unwrap(err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return unwrap(err)
	}
	return nil
}
