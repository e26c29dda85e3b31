package bashpolicy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/dsh-go/dsh/tools"
)

// TestParseErrors checks that every malformed policy is refused with an error that names the
// problem and, for a rule, the rule.
func TestParseErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"empty file", ``, `want one JSON object`},
		{"null", `null`, `want one JSON object`},
		{"array", `["ls"]`, `want one JSON object`},
		{"not JSON", `{"allow": [ls]}`, `not valid JSON: invalid character 'l'`},
		{"truncated", `{"allow": ["ls"]`, `not valid JSON: unexpected EOF`},
		{"trailing data", `{"allow": ["ls"]} {}`, `unexpected data after the JSON object`},
		{"unknown key", `{"alow": ["ls"]}`, `unknown key "alow"; the keys are default, unknown, allow, ask and deny`},
		{"list as a string", `{"allow": "ls"}`, `"allow" must be a list of strings`},
		{"outcome as a number", `{"default": 1}`, `"default" must be a string`},
		{"bad default", `{"default": "maybe"}`, `"default" must be "allow", "ask" or "deny", got "maybe"`},
		{"bad unknown", `{"unknown": "Ask"}`, `"unknown" must be "allow", "ask" or "deny", got "Ask"`},
		{"empty rule", `{"allow": ["ls", "  "]}`, `allow rule 2 "  ": empty rule`},
		{"star not last", `{"deny": ["git * push"]}`, `deny rule 1 "git * push": "*" must be the last word`},
		{"star first", `{"ask": ["* push"]}`, `ask rule 1 "* push": "*" must be the last word`},
		{"path as the name", `{"allow": ["/usr/bin/git status"]}`, `allow rule 1 "/usr/bin/git status": name the program by its base name ("git")`},
		{"quotes", `{"allow": ["git commit -m \"wip\""]}`, `allow rule 1 "git commit -m \"wip\"": word "\"wip\"" holds a quote`},
		{"expansion", `{"deny": ["rm $HOME"]}`, `deny rule 1 "rm $HOME": word "$HOME" holds a quote, a backslash or a $`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "bashpolicy: ") {
				t.Errorf("Parse(%s) = %v, want an error holding %q", tt.src, err, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(file, []byte(`{"deny": ["git * x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(file)
	if want := "bashpolicy: policy file " + file + `: deny rule 1 "git * x": "*" must be the last word`; err == nil || err.Error() != want {
		t.Errorf("Load = %v, want %q", err, want)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Load(missing) = %v", err)
	}
	if err := os.WriteFile(file, []byte(`{"default": "deny", "allow": ["ls"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Decide("ls; make", Where{Workspace: dir}); d.Action != tools.VerdictDeny {
		t.Errorf("default deny: %v", d.Action)
	}
}

// TestRuleMatch is the rule grammar: words matched from the start, "*" for the rest, one word
// for any arguments, and a word the policy cannot read making a match uncertain.
func TestRuleMatch(t *testing.T) {
	tests := []struct {
		rule, cmd string
		want      match
	}{
		{"ls", "ls", isMatch},
		{"ls", "ls -la /", isMatch},
		{"git status", "git status", isMatch},
		{"git status", "git status -s", noMatch},
		{"git status", "git", noMatch},
		{"git status", "git log", noMatch},
		{"git diff *", "git diff", isMatch},
		{"git diff *", "git diff a b c", isMatch},
		{"git diff *", "git dif", noMatch},
		{"git push *", "git $x", maybeMatch},          // $x may be "push origin"
		{"git push *", `git "$x" origin`, maybeMatch}, // "$x" is one word, maybe "push"
		{"git push *", `git "$x"`, maybeMatch},
		{"git status", "git status $x", maybeMatch},   // $x may be nothing
		{"git status", `git status "$x"`, noMatch},    // "$x" is one word, even when empty
		{"git status", "git status *.go", maybeMatch}, // a glob may match no file… or stay
		{"git push *", `git "$x" "$y"`, maybeMatch},   //
		{"git reset --hard *", `git "$x" --soft`, noMatch},
		{"*", "anything at all", isMatch},
		{"go test *", "go test ./...", isMatch},
		{"go test *", "go vet ./...", noMatch},
	}
	for _, tt := range tests {
		ru, _, err := compileRule(tt.rule, tools.VerdictAllow)
		if err != nil {
			t.Fatal(err)
		}
		ws := parseWords(t, tt.cmd)
		if got := ru.match(ws); got != tt.want {
			t.Errorf("rule %q on %q: %v, want %v", tt.rule, tt.cmd, got, tt.want)
		}
	}
}

// parseWords returns the words of the one simple command src.
func parseWords(t *testing.T, src string) []word {
	t.Helper()
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		t.Fatal(err)
	}
	ws, ok := words(src, f.Stmts[0].Cmd.(*syntax.CallExpr).Args)
	if !ok {
		t.Fatalf("%q: brace expansion too large", src)
	}
	return ws
}
