// Command verify-md-go compiles the Go programs quoted in the
// repository's Markdown: every fenced block whose language is "go" and
// whose code starts (past comments) with a package clause. Each block is
// a package of its own in a module outside the tree that joins the
// workspace of go.work, so it may import any package the workspace can,
// and all of them are compiled by one go build. Blocks without a package
// clause are fragments and are left alone; fence code that is not meant
// to compile as text.
//
// Usage:
//
//	go run ./scripts/verify-md-go [-root DIR] [PATH ...]
//
// Without PATHs every Markdown file under the root is read (see
// verify-md-links). Each compiler error is a finding at the line and
// column of the block it comes from. It exits 0 when every program
// compiles, 1 on findings, 2 on a usage or I/O error or a module that is
// neither in the module cache nor downloadable.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/mdgo"
)

func main() { os.Exit(mdgo.Main(os.Args[1:], os.Stdout, os.Stderr)) }
