// Command rescope-vendor renames the vendored forks listed in the manifest
// of vendor/README.md from their upstream module paths to the paths this
// repository publishes them under, or back with -reverse.
//
// Usage:
//
//	go run ./scripts/rescope-vendor [-root DIR] [-apply | -check] [-reverse]
//
// Sites: the module, require, replace, exclude and tool statements of
// every go.mod and the replace statements of go.work (through
// golang.org/x/mod/modfile; a local replace target is a directory and
// stays); quoted import paths and strings in .go files, which are then
// gofmt'd; every Markdown code block; Markdown prose under docs/ only.
// Left alone: directory names, versions, go.sum and go.work.sum (reported
// for regeneration), the README, LICENSE, COPYING, NOTICE, AUTHORS and
// PATENTS files at each fork's root (kept as upstream wrote them), the
// manifest, decision records under docs/rfc/ (they say what was true when
// written), testdata directories, and symlinks. Nested module
// paths are matched longest first, segment by segment.
//
// With no flag it prints what would change (PATH:LINE:COL per site, and
// a count per category on stderr) and writes nothing. -apply writes every
// file and then re-reads the tree to verify that a second -apply would
// change nothing. -check prints each site left to rename and exits 1 when
// there is one. Every problem (the manifest, a file that cannot be read, a
// go.mod or Go file that does not parse) is found before anything is
// written: it exits 2 and writes nothing. Otherwise it exits 0.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/rescope"
)

func main() { os.Exit(rescope.Main(os.Args[1:], os.Stdout, os.Stderr)) }
