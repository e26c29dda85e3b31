// Command verify-md-figures checks that every measured figure quoted in
// the repository's Markdown names the command that produced it: a time
// per operation, a throughput, a speed-up, or a duration the text says
// was measured, backed by a command in a code span or code block of the
// same paragraph, item or table row, of the nearest paragraph or code
// block before it in its section, or of the code block right after it.
// The precise rule is in the package comment of
// scripts/internal/figures.
//
// Usage:
//
//	go run ./scripts/verify-md-figures [-root DIR] [PATH ...]
//
// It exits 0 when every figure names its command, 1 on findings, 2 on a
// usage or I/O error.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/figures"
)

func main() { os.Exit(figures.Main(os.Args[1:], os.Stdout, os.Stderr)) }
