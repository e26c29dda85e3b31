package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-go/dsh/tools"
)

// TestToolsCarryTitleAndHints checks, for both providers, that every tool brings its own title
// and all four hints, and that its MCP definition states every one of them: dsh keeps no table
// of its own to fill a gap.
func TestToolsCarryTitleAndHints(t *testing.T) {
	for _, persistent := range []bool{false, true} {
		t.Run(fmt.Sprintf("persistent=%v", persistent), func(t *testing.T) {
			ts, err := newToolset(config{Persistent: persistent, Workdir: t.TempDir(), Logger: testLogger}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ts.close(context.Background())
			list := ts.provider.Tools()
			if len(list) == 0 {
				t.Fatal("the provider has no tools")
			}
			for _, tool := range list {
				if tool.Title == "" || tool.Annotations == nil {
					t.Errorf("%s: title %q, annotations %+v; want both set by its package", tool.Name, tool.Title, tool.Annotations)
					continue
				}
				b, err := json.Marshal(mcpTool(tool))
				if err != nil {
					t.Fatal(err)
				}
				var def struct {
					Title       string
					Annotations map[string]any
				}
				if err := json.Unmarshal(b, &def); err != nil {
					t.Fatal(err)
				}
				want := map[string]any{
					"title":           tool.Title,
					"readOnlyHint":    tool.Annotations.ReadOnlyHint,
					"destructiveHint": tool.Annotations.DestructiveHint,
					"idempotentHint":  tool.Annotations.IdempotentHint,
					"openWorldHint":   tool.Annotations.OpenWorldHint,
				}
				if def.Title != tool.Title || fmt.Sprint(def.Annotations) != fmt.Sprint(want) {
					t.Errorf("%s: MCP title %q, annotations %v; want %q, %v", tool.Name, def.Title, def.Annotations, tool.Title, want)
				}
			}
		})
	}
}

// recordingProvider passes every call to the provider it wraps and reports each Release once
// it has returned.
type recordingProvider struct {
	tools.Provider
	released chan string
}

func (p *recordingProvider) Release(owner string) error {
	err := p.Provider.Release(owner)
	p.released <- owner
	return err
}

// TestDisconnectReleasesTheOwner checks, for both providers, that a session that disconnects is
// released through the provider, once, with its own owner token, and that when Release has
// returned the session's background process is gone while the other session's still runs.
func TestDisconnectReleasesTheOwner(t *testing.T) {
	for _, persistent := range []bool{false, true} {
		t.Run(fmt.Sprintf("persistent=%v", persistent), func(t *testing.T) {
			srv := testServer(t, config{Persistent: persistent})
			rec := &recordingProvider{Provider: srv.tools.provider, released: make(chan string, 4)}
			srv.tools.provider = rec // before any session connects
			a := connect(t, srv)
			ownerA := srv.ownerTokens()
			b := connect(t, srv)
			if len(ownerA) != 1 || len(srv.ownerTokens()) != 2 {
				t.Fatalf("owners %v, then %v; want one per session", ownerA, srv.ownerTokens())
			}
			dir := t.TempDir()
			pids := map[*client]int{}
			for name, c := range map[string]*client{"a": a, "b": b} {
				job := "echo $$ > " + filepath.Join(dir, name) + "; exec sleep 300"
				if persistent {
					c.bash("bash -c '" + job + "' >/dev/null 2>&1 &")
				} else {
					c.startBackground(job)
				}
				pids[c] = readPID(t, filepath.Join(dir, name))
			}

			if err := a.cs.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case owner := <-rec.released:
				if owner != ownerA[0] {
					t.Errorf("released %q, want the disconnected session's owner %q", owner, ownerA[0])
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the disconnected session was never released")
			}
			if alive(pids[a]) {
				t.Errorf("the disconnected session's process %d is alive after Release returned", pids[a])
			}
			if !alive(pids[b]) {
				t.Errorf("the other session's process %d died", pids[b])
			}
			if got := b.bash("echo still here"); got != "still here\n" && got != "still here" {
				t.Errorf("the other session after the disconnect: %q", got)
			}
			select {
			case owner := <-rec.released:
				t.Errorf("a second Release(%q) while b is connected", owner)
			default:
			}
		})
	}
}

// ownerTokens returns the owner tokens of the sessions connected to s.
func (s *server) ownerTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for owner := range s.owners {
		out = append(out, owner)
	}
	return out
}
