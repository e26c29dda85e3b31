// Command verify-md-links checks the relative links of the repository's
// Markdown files: every link, image, reference definition and raw-HTML
// <a href> / <img src> must reach an existing file or directory inside the
// root, with the exact path case, and every #fragment into a Markdown file
// must name one of its heading anchors (GitHub's slugs) or an explicit
// <a id> / <a name>. External URLs are skipped; code is not links.
//
// Usage:
//
//	go run ./scripts/verify-md-links [-root DIR] [-json] [PATH ...]
//
// Without PATHs it checks every *.md file under the root that git tracks or
// would track (a plain walk outside git), skipping testdata/ and
// node_modules/. Findings are printed as PATH:LINE:COL: message, sorted, or
// as a JSON array with -json; a one-line summary goes to stderr. It exits 0
// when everything resolves, 1 on findings, 2 on a usage or I/O error. It
// never touches the network.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/links"
)

func main() { os.Exit(links.Main(os.Args[1:], os.Stdout, os.Stderr)) }
