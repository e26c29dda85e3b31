//go:build !unix

package backend

import "os"

// private reports true: this system has no Unix owner or mode bits to compare; the directory is
// still recognised by its identity (os.SameFile).
func private(os.FileInfo) bool { return true }
