// Command gen-catalog writes docs/catalog.md, the catalogue of the
// workspace's services and events, from the Go doc comments of every
// module of go.work, and gates the doc comments it reads: each catalogued
// declaration must have a doc comment that begins with its name, names its
// parameters and says what it returns; events need a mode that fits their
// signature; directives must be well formed. See scripts/internal/catalog
// for the directives and the rules.
//
// Usage:
//
//	go run ./scripts/gen-catalog [-root DIR] [-check] [-o docs/catalog.md]
//
// Violations are printed as PATH:LINE: KIND NAME: PROBLEM, sorted, all of
// them at once, and nothing is written. With -check the page is rendered
// in memory and compared byte for byte with the file; each stale entry is
// printed as PATH:LINE: stale: …, with the command that regenerates the
// page on stderr. The output path is relative to the root. It exits 0 when
// the page was written or is up to date, 1 on violations or a stale page,
// and 2 on a usage error, a missing go.work, a package that does not
// type-check, or an unreadable or unwritable page.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/catalog"
)

func main() { os.Exit(catalog.Main(os.Args[1:], os.Stdout, os.Stderr)) }
