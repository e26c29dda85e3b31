// Command gen-notices writes THIRD_PARTY_NOTICES at the repository root:
// the third-party Go modules that the non-test code of the workspace links
// (shipped, with their full license texts), the modules used only by
// tests and tooling, and the vendored forks of vendor/README.md, each with
// its version and the licenses github.com/google/licensecheck detects in
// its license files.
//
// Usage:
//
//	go run ./scripts/gen-notices [-root DIR] [-check]
//
// The module graph comes from "go list -deps -test" over every workspace
// module, merged across darwin, linux and windows on amd64 and arm64 with
// cgo on and off. The go command fills an empty module cache from the
// module proxy, as go build does; a module it can neither find there nor
// download is an error that names it and says to run "go mod download".
// License policy, fail-closed: a shipped
// module or a fork whose licenses are not all on the allow-list (MIT,
// BSD-2-Clause, BSD-3-Clause, Apache-2.0, ISC, 0BSD, Unlicense, CC0-1.0,
// BlueOak-1.0.0), or whose license files are not recognised, is a finding
// unless the "License overrides" table of vendor/README.md names it with a
// written reason; an override that names nothing is a finding too.
//
// -check compares the file byte for byte with what would be written and
// writes nothing. Findings are printed as PATH:LINE: message (the go.mod
// line that requires the module, or the manifest row). It exits 0 when
// clean, 1 on findings or a stale file (nothing is written), and 2 on a
// problem with the inputs, a module missing from the cache, or an I/O
// error.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/notices"
)

func main() { os.Exit(notices.Main(os.Args[1:], os.Stdout, os.Stderr)) }
