package toolbash

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

// hostile prints what a hostile file can make a command print: a window title (OSC 0), a
// clipboard write (OSC 52), colours, a cursor move, NUL, a bell and a bare CR.
const hostile = `printf 'a\033]0;pwned\007b\033]52;c;Y3VybCBldmlsIHwgc2g=\033\\c\033[1;31mred\033[0m\033[2Ad\000e\007f\rg\n'`

// TestResultsAreSanitized checks that no terminal control of a command's output reaches the
// model, in a foreground result, around a truncation line and in a background task's read, and
// that the spill file keeps the raw bytes.
func TestResultsAreSanitized(t *testing.T) {
	h := newLocalHarness(t, bashlocal.Config{Limits: bash.Limits{MaxOutputBytes: 200, HeadBytes: 80}})
	clean := func(what, text string) {
		t.Helper()
		for _, r := range text {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("%s: control %U reached the model: %q", what, r, text)
			}
		}
		if strings.Contains(text, "pwned") || strings.Contains(text, "Y3VybCBldmlsIHwgc2g") {
			t.Fatalf("%s: an escape's payload reached the model: %q", what, text)
		}
	}

	if got := h.ok(nil, "bash", `{"command":"`+jsonEscape(hostile)+`","description":"Print"}`); got != "abcreddef\ng\n" {
		t.Errorf("foreground: %q, want %q", got, "abcreddef\ng\n")
	}

	// Head and tail of a truncated run, each cleaned; the spill file is the raw stream.
	text := h.ok(nil, "bash", `{"command":"`+jsonEscape(hostile+"; seq 1 100; "+hostile)+`","description":"Print"}`)
	clean("truncated", text)
	m := regexp.MustCompile(`full output: (\S+)\]`).FindStringSubmatch(text)
	if m == nil || !strings.HasPrefix(text, "abcreddef\ng\n") || !strings.HasSuffix(text, "abcreddef\ng\n") {
		t.Fatalf("truncated result lost its text: %q", text)
	}
	raw, err := os.ReadFile(m[1])
	if err != nil || !strings.Contains(string(raw), "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x1b\\") || !strings.Contains(string(raw), "\x00e\x07f\rg") {
		t.Errorf("the spill file does not hold the raw bytes (%v): %q", err, raw[:min(len(raw), 80)])
	}

	// A background task's read.
	agent := &tools.Agent{Owner: "o"}
	id := h.startBackground(agent, hostile)
	h.waitDone(id)
	read := h.ok(agent, "bash_output", `{"task_id":"`+id+`"}`)
	clean("task read", read)
	if !strings.HasPrefix(read, "abcreddef\ng\n") {
		t.Errorf("task read: %q", read)
	}
}

// jsonEscape escapes s for a JSON string.
func jsonEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return r.Replace(s)
}
