package backend

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

// SpillDir is a private directory that holds spill files. It is created lazily, on the first spill,
// under Parent (the OS temp dir when empty) with mode 0700 and a random name starting with Prefix
// ("dsh-bash-" when empty), and created again, under a new name, whenever the one it made is gone
// or is no longer its own: deleted (a temp cleaner, `rm -rf /tmp/*` from a command), replaced by
// a symlink or by a directory someone else made, or opened up (its mode is no longer 0700). A
// directory that is not the one it made is never written through: it recognises its own by a
// random token in a file named .dsh-spill-dir inside it. It is safe for concurrent use.
type SpillDir struct {
	// Parent is where the private directory is created. Empty means os.TempDir().
	Parent string
	// Prefix starts the directory's name. Empty means "dsh-bash-".
	Prefix string

	mu      sync.Mutex // guards what follows
	path    string
	token   []byte // the secret in the directory's markFile: what makes it the one made here
	removed bool
	counter atomic.Uint64
}

// markFile holds, in the directory made, a random token that nothing else can know: a directory
// made in its place, even one that reuses its inode number, lacks it.
const markFile = ".dsh-spill-dir"

// Path returns the directory, creating it on first use and again when the one made before is gone
// or no longer its own. It returns an error when no directory can be created, or after Remove.
func (d *SpillDir) Path() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	root, err := d.openLocked()
	if err != nil {
		return "", err
	}
	root.Close()
	return d.path, nil
}

// openLocked returns a handle on the directory made, making a fresh one when the one at d.path is
// not its own. The checks are made on the opened directory itself, and files are created through
// that handle, never through the path, so nothing swapped in after the check is written through.
func (d *SpillDir) openLocked() (*os.Root, error) {
	if d.removed {
		return nil, errors.New("spill directory already removed")
	}
	if root, ok := d.openOwn(); ok {
		return root, nil
	}
	prefix := d.Prefix
	if prefix == "" {
		prefix = "dsh-bash-"
	}
	p, err := os.MkdirTemp(d.Parent, prefix)
	if err != nil {
		return nil, fmt.Errorf("create spill directory: %w", err)
	}
	token := make([]byte, 16)
	root, err := os.OpenRoot(p)
	if err == nil {
		// MkdirTemp already uses 0700 (less the umask); Chmod makes it exactly that.
		err = root.Chmod(".", 0o700)
		if err == nil {
			_, err = rand.Read(token)
		}
		if err == nil {
			err = writeNew(root, markFile, token)
		}
		if err != nil {
			root.Close()
		}
	}
	if err != nil {
		os.RemoveAll(p)
		return nil, fmt.Errorf("create spill directory: %w", err)
	}
	d.path, d.token = p, token
	return root, nil
}

// openOwn opens the directory at d.path and reports whether it is the one made here (it holds the
// token) and still private to this user.
func (d *SpillDir) openOwn() (*os.Root, bool) {
	if d.path == "" {
		return nil, false
	}
	root, err := os.OpenRoot(d.path)
	if err != nil {
		return nil, false
	}
	fi, err := root.Stat(".")
	if err == nil && fi.IsDir() && private(fi) {
		if mark, err := root.ReadFile(markFile); err == nil && bytes.Equal(mark, d.token) {
			return root, true
		}
	}
	root.Close()
	return nil, false
}

// writeNew creates the file name in root, exclusively and private to this user, holding data.
func writeNew(root *os.Root, name string, data []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// Existing returns the directory when it has been created and not removed, or "".
func (d *SpillDir) Existing() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.path
}

// Create opens a new spill file for stream ("stdout" or "stderr") in the directory (made again
// first when it is gone or no longer its own, see SpillDir), named
// dsh-bash-<pid>-<counter>-<12 hex random>-<stream>.log, with O_EXCL and mode 0600 so that nothing
// planted in advance (a symlink included) is ever written through.
func (d *SpillDir) Create(stream string) (*os.File, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("spill name: %w", err)
	}
	name := "dsh-bash-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(d.counter.Add(1), 10) +
		"-" + hex.EncodeToString(rnd[:]) + "-" + stream + ".log"
	d.mu.Lock()
	defer d.mu.Unlock()
	root, err := d.openLocked()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create spill file: %w", err)
	}
	return f, nil
}

// Remove deletes the directory and every spill file in it, if it was ever created and is still its
// own (a directory that took its place is left alone). Later calls to Path and Create fail. It is
// idempotent.
func (d *SpillDir) Remove() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.removed = true
	root, own := d.openOwn()
	p := d.path
	d.path = ""
	if !own {
		return nil // never made, gone already, or not its own to remove
	}
	root.Close()
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("remove spill directory: %w", err)
	}
	return nil
}
