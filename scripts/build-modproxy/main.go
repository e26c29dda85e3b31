// Command build-modproxy builds a file-system module proxy that serves the
// product modules of this repository, as the tree holds them, at their
// release version, so that a release can be tried before it is tagged:
//
//	go run ./scripts/build-modproxy -o /tmp/proxy
//	GOWORK=off GOPROXY=file:///tmp/proxy,https://proxy.golang.org GONOSUMDB=github.com/dsh-go/dsh \
//		go install github.com/dsh-go/dsh/cmd/dsh@v0.1.0
//
// Usage:
//
//	go run ./scripts/build-modproxy [-root DIR] [-version V] (-o DIR | -check | -tags)
//
// Every module of go.work but the tooling in scripts/ is served: @v/list,
// and the version's .info, .mod (go.mod as it is) and .zip (the files git
// tracks or would track, made with golang.org/x/mod/zip). The version is
// -version, or the one the sibling requirements name. First it checks the
// release: every requirement of a sibling names that version, go.work
// replaces each required sibling at that version with its own directory,
// no published go.mod has a replace or exclude, and every file fits in a
// module zip; each problem is a finding (PATH:LINE:COL: message) and
// nothing is written. -check runs only these checks; -tags runs them and
// prints the release's git tags (DIR/VERSION), each module after the
// modules it requires. DIR must not exist or be empty. It exits 0 when
// done, 1 on findings, 2 on a usage or I/O error.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/modproxy"
)

func main() { os.Exit(modproxy.Main(os.Args[1:], os.Stdout, os.Stderr)) }
