package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's transcripts are replayed so that they cannot drift from the wire: a block fenced
// as ```jsonrpc is a session (">" lines the client writes, "<" lines dsh answers), a block fenced
// as ```console a shell session ("$ " lines are run by bash, in order, the others are their
// output). In what the README shows dsh writing, "…" stands for anything.

// readmeBlocks returns the text of every block of README.md fenced with info.
func readmeBlocks(t *testing.T, info string) []string {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for line := range strings.Lines(string(data)) {
		switch trimmed := strings.TrimRight(line, "\n"); {
		case cur == nil && trimmed == "```"+info:
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("README.md has no block fenced as %s", info)
	}
	return blocks
}

// elided returns a pattern for want in which "…" matches anything.
func elided(want string) *regexp.Regexp {
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`(?s)^` + strings.Join(parts, ".*") + `$`)
}

// readmeProject returns a workspace holding the README's example project: go.mod and main.go.
func readmeProject(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module example.com/p\n\ngo 1.26\n", "main.go": "package main\n\nfunc main() {}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestREADMETranscripts replays the README's sessions against dsh's stdio transport and its
// shell sessions against the dsh binary, comparing what dsh writes with what the README shows.
// It waits for nothing but what the README's text says happened in between: a completion notice
// shown in a response is waited for in the session's queue before the request is sent.
func TestREADMETranscripts(t *testing.T) {
	for _, block := range readmeBlocks(t, "jsonrpc") {
		replaySession(t, block)
	}
	for _, block := range readmeBlocks(t, "console") {
		replayShell(t, block)
	}
}

func replaySession(t *testing.T, block string) {
	srv := testServer(t, config{Workdir: readmeProject(t)})
	sc, cc := socketPair(t)
	if _, err := srv.connect(t.Context(), lineTransport(sc, sc, maxLine, 0, nil)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(cc)
	lines := strings.Split(strings.TrimRight(block, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		sent, ok := strings.CutPrefix(lines[i], "> ")
		if !ok {
			t.Fatalf("README line %q: want a line the client writes first", lines[i])
		}
		var want []string
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "< ") {
			i++
			want = append(want, strings.TrimPrefix(lines[i], "< "))
		}
		for _, w := range want {
			if strings.Contains(w, "finished [status:") {
				waitNotice(t, srv)
			}
		}
		if _, err := io.WriteString(cc, sent+"\n"); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			_ = cc.SetReadDeadline(time.Now().Add(20 * time.Second))
			got, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("after %s: %v", sent, err)
			}
			if got = strings.TrimSuffix(got, "\n"); !elided(w).MatchString(got) {
				t.Errorf("after %s\ndsh wrote: %s\nREADME:    %s", sent, got, w)
			}
		}
	}
}

// waitNotice waits until a session of srv has a completion notice queued.
func waitNotice(t *testing.T, srv *server) {
	t.Helper()
	queued := func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		for _, st := range srv.sessions {
			st.mu.Lock()
			n := len(st.notices)
			st.mu.Unlock()
			if n > 0 {
				return true
			}
		}
		return false
	}
	if !eventually(20*time.Second, queued) {
		t.Fatal("the completion notice the README shows never came")
	}
}

func replayShell(t *testing.T, block string) {
	var script, want []string
	for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			script = append(script, cmd)
		} else {
			want = append(want, line)
		}
	}
	cmd := exec.Command("bash", "-c", strings.Join(script, "\n"))
	cmd.Dir = readmeProject(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("the shell session wrote %d lines, the README shows %d:\n%s", len(got), len(want), out)
	}
	for i := range want {
		if !elided(want[i]).MatchString(got[i]) {
			t.Errorf("the shell session wrote: %s\nREADME:                %s", got[i], want[i])
		}
		if strings.HasPrefix(got[i], "{") && !json.Valid([]byte(got[i])) {
			t.Errorf("not a JSON-RPC message: %s", got[i])
		}
	}
}
