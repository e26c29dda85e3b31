//go:build unix

package backend

import (
	"os"
	"syscall"
)

// private reports whether the directory fi describes belongs to this process's effective user
// and is open to no one else (mode 0700).
func private(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid() && fi.Mode().Perm() == 0o700
}
