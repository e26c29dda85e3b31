// Command verify-rfc checks the decision records in docs/rfc/: each lives
// at docs/rfc/{proposed,implemented,rejected}/yyyy-mm-dd-topic.md, starts
// with "# RFC: <title>", a blank line, a Status: line that agrees with its
// folder and another blank line, and has the sections its status requires
// (Problem first; Alternatives considered always). See docs/AGENTS.md.
//
// Usage:
//
//	go run ./scripts/verify-rfc [-root DIR]
//
// Findings are printed as PATH:LINE: message, sorted, with a one-line
// summary on stderr. It exits 0 when clean, 1 on findings, 2 on a usage or
// I/O error.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/rfc"
)

func main() { os.Exit(rfc.Main(os.Args[1:], os.Stdout, os.Stderr)) }
