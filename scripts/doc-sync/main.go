// Command doc-sync runs every documentation gate of the repository in
// parallel and reports one line per gate and a summary: verify-md-links,
// verify-md-wrap and verify-rfc today; the catalog, rescope and notices
// checks join the same table (see scripts/internal/docsync).
//
// Usage:
//
//	go run ./scripts/doc-sync [-root DIR]
//
// Each gate runs as a child process in its own process group; its output
// is kept and replayed only when it fails. SIGINT and SIGTERM are
// forwarded to the running gates, and every child is waited for. The
// environment variable DSH_GATE_CONCURRENCY sets how many gates run at once
// (default min(gates, 4, CPUs)); DSH_GATE_VERBOSE=1 also replays the output
// of passing gates. It exits 0 when every gate passed, 1 when one failed or
// was skipped, 2 on a usage or setup error.
package main

import (
	"os"

	"github.com/dsh-go/dsh/scripts/internal/docsync"
)

func main() { os.Exit(docsync.Main(os.Args, os.Stdout, os.Stderr)) }
