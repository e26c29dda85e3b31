package docsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripts/internal/gates"
)

// TestTableIsAValidGraph checks doc-sync's own gate table the way Run
// would before starting anything, and that each gate is also a command of
// its own under scripts/.
func TestTableIsAValidGraph(t *testing.T) {
	graph := Graph(Table, "/bin/doc-sync", "/repo")
	if err := gates.Validate(graph); err != nil {
		t.Fatalf("doc-sync's table is not a valid graph: %v", err)
	}
	for i, g := range graph {
		e := Table[i]
		if e.Main == nil {
			t.Errorf("gate %s has no Main", e.Command)
		}
		if g.Path != "/bin/doc-sync" || g.Args[0] != e.Command || g.Dir != "/repo" {
			t.Errorf("gate %s runs %s %q in %s; want doc-sync's binary under the gate's name in the root", e.Command, g.Path, g.Args, g.Dir)
		}
		if got := strings.Join(g.Args[1:3], " "); got != "-root /repo" {
			t.Errorf("gate %s args %q, want -root first", e.Command, g.Args)
		}
		if !strings.HasPrefix(g.Display, "go run ./scripts/"+e.Command) {
			t.Errorf("gate %s displays %q, want the go run command", e.Command, g.Display)
		}
		if _, err := os.Stat(filepath.Join("..", "..", e.Command, "main.go")); err != nil {
			t.Errorf("gate %s has no command folder: %v", e.Command, err)
		}
		if Lookup(e.Command) == nil {
			t.Errorf("Lookup(%q) = nil", e.Command)
		}
	}
	if Lookup("doc-sync") != nil {
		t.Errorf("doc-sync must not dispatch to itself")
	}
}

func TestWorkers(t *testing.T) {
	t.Setenv("DSH_GATE_CONCURRENCY", "")
	if w, _, err := Workers(1); err != nil || w != 1 {
		t.Errorf("Workers(1) = %d, %v; want 1", w, err)
	}
	if w, src, err := Workers(100); err != nil || w < 1 || w > 4 || !strings.Contains(src, "cap 4") {
		t.Errorf("Workers(100) = %d, %q, %v; want 1..4 from the CPU cap", w, src, err)
	}
	t.Setenv("DSH_GATE_CONCURRENCY", "7")
	if w, src, err := Workers(2); err != nil || w != 7 || src != "DSH_GATE_CONCURRENCY" {
		t.Errorf("Workers with DSH_GATE_CONCURRENCY=7 = %d, %q, %v", w, src, err)
	}
	for _, bad := range []string{"0", "-1", "x", "1.5"} {
		t.Setenv("DSH_GATE_CONCURRENCY", bad)
		if _, _, err := Workers(2); err == nil {
			t.Errorf("DSH_GATE_CONCURRENCY=%q accepted", bad)
		}
	}
}
