//go:build !unix

package kcluster

// lockFile is a no-op where flock is missing; the cluster runs only on Linux.
func lockFile(string) (func(), error) { return func() {}, nil }
