// Package cli holds the command-line conventions every doc gate shares: the
// exit codes, the -root flag and how its default is found, and how path
// arguments are turned into root-relative paths.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Exit codes shared by every command.
const (
	ExitClean    = 0 // nothing found
	ExitFindings = 1 // findings, stale output, or a failed gate
	ExitError    = 2 // usage, I/O or configuration error
)

// NewFlagSet returns a flag set named name that reports parse errors
// instead of exiting and writes usage text to stderr. usage is the
// one-line synopsis printed above the flag defaults.
func NewFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// RootFlag registers the -root flag on fs and returns where its value is
// stored. An empty value means "find it with [FindRoot]".
func RootFlag(fs *flag.FlagSet) *string {
	return fs.String("root", "", "repository root (default: the directory holding go.work, found upward from the working directory)")
}

// ResolveRoot returns the absolute, symlink-free repository root: flagValue
// when it is not empty, otherwise the result of [FindRoot] from the working
// directory. It errors when the directory does not exist or is not a
// directory, or when no go.work is found.
func ResolveRoot(flagValue string) (string, error) {
	root := flagValue
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		if root, err = FindRoot(wd); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("root %s: %w", root, err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", fmt.Errorf("root %s: %w", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("root %s: %w", root, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("root %s: not a directory", root)
	}
	return abs, nil
}

// FindRoot returns the nearest directory at or above start that holds a
// go.work file. It errors when there is none up to the file-system root.
func FindRoot(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "go.work")); err == nil && !st.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.work found in %s or any parent directory; pass -root", start)
		}
		dir = parent
	}
}

// RelPaths turns the path arguments args (relative to the working directory
// or absolute) into clean paths relative to root with '/' separators. It
// errors, naming the argument, when one lies outside root.
func RelPaths(root string, args []string) ([]string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range args {
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			// The working directory may reach root through a symlink.
			if real, rerr := filepath.EvalSymlinks(p); rerr == nil {
				rel, err = filepath.Rel(root, real)
			}
		}
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s: outside the root %s", a, root)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// ErrUsage marks an error caused by how the command was called.
var ErrUsage = errors.New("usage")
