package backend

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// SpillDir is a private directory that holds spill files. It is created lazily, on the first spill,
// under Parent (the OS temp dir when empty) with mode 0700 and a random name starting with Prefix
// ("dsh-bash-" when empty). It is safe for concurrent use.
type SpillDir struct {
	// Parent is where the private directory is created. Empty means os.TempDir().
	Parent string
	// Prefix starts the directory's name. Empty means "dsh-bash-".
	Prefix string

	mu      sync.Mutex
	path    string
	removed bool
	counter atomic.Uint64
}

// Path returns the directory, creating it on first use. It returns an error when the directory
// cannot be created or after Remove.
func (d *SpillDir) Path() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.removed {
		return "", fmt.Errorf("spill directory already removed")
	}
	if d.path != "" {
		return d.path, nil
	}
	prefix := d.Prefix
	if prefix == "" {
		prefix = "dsh-bash-"
	}
	p, err := os.MkdirTemp(d.Parent, prefix)
	if err != nil {
		return "", fmt.Errorf("create spill directory: %w", err)
	}
	// MkdirTemp already uses 0700; Chmod guards against an unusual umask-free filesystem.
	if err := os.Chmod(p, 0o700); err != nil {
		os.Remove(p)
		return "", fmt.Errorf("create spill directory: %w", err)
	}
	d.path = p
	return p, nil
}

// Existing returns the directory when it has been created and not removed, or "".
func (d *SpillDir) Existing() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.path
}

// Create opens a new spill file for stream ("stdout" or "stderr") in the directory, named
// dsh-bash-<pid>-<counter>-<12 hex random>-<stream>.log, with O_EXCL and mode 0600 so that nothing
// planted in advance (a symlink included) is ever written through.
func (d *SpillDir) Create(stream string) (*os.File, error) {
	dir, err := d.Path()
	if err != nil {
		return nil, err
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("spill name: %w", err)
	}
	name := "dsh-bash-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(d.counter.Add(1), 10) +
		"-" + hex.EncodeToString(rnd[:]) + "-" + stream + ".log"
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create spill file: %w", err)
	}
	return f, nil
}

// Remove deletes the directory and every spill file in it, if it was ever created. Later calls to
// Path and Create fail. It is idempotent.
func (d *SpillDir) Remove() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.removed = true
	if d.path == "" {
		return nil
	}
	p := d.path
	d.path = ""
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("remove spill directory: %w", err)
	}
	return nil
}
