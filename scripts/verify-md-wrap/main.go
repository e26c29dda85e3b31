// Command verify-md-wrap checks that every prose paragraph of the
// repository's Markdown files is written on one physical line. Paragraphs
// in lists, blockquotes and footnotes count; headings, tables, HTML blocks
// and code do not; front matter and ":::" container lines are ignored.
//
// Usage:
//
//	go run ./scripts/verify-md-wrap [-root DIR] [PATH ...]
//
// It finds files as verify-md-links does, prints findings as
// PATH:LINE: message, sorted, with a one-line summary on stderr, and exits
// 0 when clean, 1 on findings, 2 on a usage or I/O error.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/wrap"
)

func main() { os.Exit(wrap.Main(os.Args[1:], os.Stdout, os.Stderr)) }
