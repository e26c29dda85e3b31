//go:build unix

package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpillDirMadeAgain checks that a spill directory that is gone or no longer the executor's
// own is never written through and that a fresh private one takes its place, as a temp cleaner,
// a command (`rm -rf /tmp/*`) or another user could leave it.
func TestSpillDirMadeAgain(t *testing.T) {
	tests := []struct {
		name string
		// replace does something to the spill directory dir and returns a directory that must
		// receive no further spill file ("" for none).
		replace func(t *testing.T, dir string) (decoy string)
	}{
		{"deleted", func(t *testing.T, dir string) string {
			must(t, os.RemoveAll(dir))
			return ""
		}},
		{"replaced by a symlink to a directory", func(t *testing.T, dir string) string {
			decoy := t.TempDir()
			must(t, os.Chmod(decoy, 0o700))
			must(t, os.RemoveAll(dir))
			must(t, os.Symlink(decoy, dir))
			return decoy
		}},
		{"replaced by another directory of the same user", func(t *testing.T, dir string) string {
			must(t, os.RemoveAll(dir))
			must(t, os.Mkdir(dir, 0o700))
			return dir
		}},
		{"opened to other users", func(t *testing.T, dir string) string {
			must(t, os.Chmod(dir, 0o777))
			return dir
		}},
		{"replaced by another user's directory", func(t *testing.T, dir string) string {
			if os.Geteuid() != 0 {
				// Only root can make it, and only root would write into it: as any other user
				// the write fails anyway.
				t.Skip("needs root to give a directory to another user")
			}
			must(t, os.RemoveAll(dir))
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chown(dir, 65534, 65534))
			return dir
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &SpillDir{Parent: t.TempDir()}
			first, err := d.Create("stdout")
			if err != nil {
				t.Fatal(err)
			}
			first.Close()
			old := filepath.Dir(first.Name())
			decoy := tc.replace(t, old)
			var before []string
			if decoy != "" {
				before = list(t, decoy)
			}

			f, err := d.Create("stderr")
			if err != nil {
				t.Fatalf("Create after the directory was %s: %v", tc.name, err)
			}
			defer f.Close()
			dir := filepath.Dir(f.Name())
			if dir == old || d.Existing() != dir {
				t.Errorf("spill file %s, Existing %q: want a fresh directory, not %s", f.Name(), d.Existing(), old)
			}
			if st, err := os.Lstat(dir); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
				t.Errorf("fresh directory %s: %v, %v; want a directory of mode 0700", dir, st, err)
			}
			if _, err := f.WriteString("x"); err != nil {
				t.Errorf("write the spill file: %v", err)
			}
			if decoy != "" {
				if names := list(t, decoy); len(names) != len(before) {
					t.Errorf("written through the %s: %v, where there was %v", tc.name, names, before)
				}
			}
			if err := d.Remove(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(dir); !os.IsNotExist(err) {
				t.Errorf("the fresh directory survived Remove: %v", err)
			}
		})
	}
}

// TestSpillDirRemoveSparesAReplacement checks that Remove leaves alone a directory that took the
// place of the spill directory, and the files in it.
func TestSpillDirRemoveSparesAReplacement(t *testing.T) {
	d := &SpillDir{Parent: t.TempDir()}
	dir, err := d.Path()
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.RemoveAll(dir))
	must(t, os.Mkdir(dir, 0o700))
	keep := filepath.Join(dir, "someone-elses")
	must(t, os.WriteFile(keep, []byte("x"), 0o600))
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("Remove deleted a directory it did not make: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}
