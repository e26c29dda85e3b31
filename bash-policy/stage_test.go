package bashpolicy

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/tools"
)

const stagePolicy = `{"default": "ask", "allow": ["ls", "echo", "cd", "cat"], "ask": ["git push *"], "deny": ["rm"]}`

func bashCall(owner, dir string, args map[string]any) tools.Call {
	b, _ := json.Marshal(args)
	return tools.Call{Name: "bash", Args: b, Agent: &tools.Agent{Owner: owner, Dir: dir}}
}

func TestStageCalls(t *testing.T) {
	ws := t.TempDir()
	s := mustPolicy(t, stagePolicy).Stage(StageConfig{})
	ctx := context.Background()
	tests := []struct {
		name string
		call tools.Call
		want tools.Verdict
		text string // in the reason
	}{
		{"allowed", bashCall("a", ws, map[string]any{"command": "ls"}), tools.VerdictAllow, ""},
		{"denied", bashCall("a", ws, map[string]any{"command": "ls; rm -rf x"}), tools.VerdictDeny,
			"the command policy denies this command: `rm -rf x` matches the deny rule \"rm\". Do not try to get the same effect another way"},
		{"asked", bashCall("a", ws, map[string]any{"command": "git push"}), tools.VerdictAsk, "`git push` matches the ask rule \"git push *\""},
		{"parse failure", bashCall("a", ws, map[string]any{"command": "echo 'x"}), tools.VerdictAsk, "could not be parsed"},
		{"too long", bashCall("a", ws, map[string]any{"command": strings.Repeat("ls; ", MaxCommandBytes/4+1)}), tools.VerdictDeny,
			"the command policy refuses this command: `ls; ls; ls;"},
		{"another tool", tools.Call{Name: "bash_output", Args: json.RawMessage(`{"command":"rm x"}`)}, tools.VerdictAllow, ""},
		{"arguments the tool refuses", tools.Call{Name: "bash", Args: json.RawMessage(`{"command":`)}, tools.VerdictAllow, ""},
		{"command not a string", tools.Call{Name: "bash", Args: json.RawMessage(`{"command":["rm","x"]}`)}, tools.VerdictAllow, ""},
		// The tool decodes the last of duplicate keys: so does the stage.
		{"duplicate keys, last denied", tools.Call{Name: "bash", Args: json.RawMessage(`{"command":"ls","command":"rm x"}`), Agent: &tools.Agent{Dir: ws}},
			tools.VerdictDeny, "rm x"},
		{"workdir outside the workspace", bashCall("a", ws, map[string]any{"command": "echo x > f", "workdir": "/tmp"}), tools.VerdictAsk,
			"writes to /tmp/f, outside the workspace " + ws},
		{"relative workdir inside", bashCall("a", ws, map[string]any{"command": "echo x > f", "workdir": "sub"}), tools.VerdictAllow, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := s.Before(ctx, tt.call)
			if d.Verdict != tt.want || !strings.Contains(d.Reason, tt.text) {
				t.Errorf("%s: %q; want %s holding %q", d.Verdict, d.Reason, tt.want, tt.text)
			}
		})
	}
}

// TestStageAsk checks what a person is shown and what an approval for the session covers.
func TestStageAsk(t *testing.T) {
	ws := t.TempDir()
	s := mustPolicy(t, stagePolicy).Stage(StageConfig{})
	cmd := "git push origin main && echo done > /tmp/out"
	d := s.Before(context.Background(), bashCall("a", ws, map[string]any{"command": cmd}))
	if d.Verdict != tools.VerdictAsk {
		t.Fatalf("%s %q", d.Verdict, d.Reason)
	}
	for _, want := range []string{cmd, `matches the ask rule "git push *"`, "writes to /tmp/out, outside the workspace"} {
		if !strings.Contains(d.Prompt, want) {
			t.Errorf("prompt %q lacks %q", d.Prompt, want)
		}
	}
	again := s.Before(context.Background(), bashCall("b", ws, map[string]any{"command": "git push origin main"}))
	if len(d.Grants) != 2 || !slices.Contains(d.Grants, again.Grants[0]) {
		t.Errorf("grants %q then %q: want the asked push covered by the first approval", d.Grants, again.Grants)
	}
	other := s.Before(context.Background(), bashCall("b", ws, map[string]any{"command": "git push --force origin main"}))
	if slices.Contains(d.Grants, other.Grants[0]) {
		t.Errorf("a different push %q is covered by %q", other.Grants, d.Grants)
	}
}

// TestStagePersistent checks that a persistent stage follows each owner's shell across calls: a
// cd out of the workspace makes a later relative write asked, for that owner only, until it is
// forgotten; a denied call moves nothing; a cd it cannot read makes relative writes unknown.
func TestStagePersistent(t *testing.T) {
	ws := t.TempDir()
	s := mustPolicy(t, stagePolicy).Stage(StageConfig{Persistent: true})
	step := func(owner, cmd string, want tools.Verdict) {
		t.Helper()
		d := s.Before(context.Background(), bashCall(owner, ws, map[string]any{"command": cmd}))
		if d.Verdict != want {
			t.Fatalf("%s: %q: %s %q, want %s", owner, cmd, d.Verdict, d.Reason, want)
		}
	}
	step("a", "echo x > f", tools.VerdictAllow)
	step("a", "cd /tmp; rm x", tools.VerdictDeny) // denied: never runs, moves nothing
	step("a", "echo x > f", tools.VerdictAllow)
	step("a", "cd /tmp", tools.VerdictAllow)
	step("a", "echo x > f", tools.VerdictAsk) // the shell may be in /tmp now
	step("a", "echo x > "+ws+"/f", tools.VerdictAllow)
	step("b", "echo x > f", tools.VerdictAllow) // another owner's shell did not move
	s.Forget("a")
	step("a", "echo x > f", tools.VerdictAllow)
	step("a", `cd "$HOME"`, tools.VerdictAllow)
	d := s.Before(context.Background(), bashCall("a", ws, map[string]any{"command": "echo x > f"}))
	if d.Verdict != tools.VerdictAsk || !strings.Contains(d.Reason, "cannot tell which directory the shell is in") {
		t.Errorf("after an unreadable cd: %s %q", d.Verdict, d.Reason)
	}
}
