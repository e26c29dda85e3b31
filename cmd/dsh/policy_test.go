package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/tools"
)

// dshProc starts `dsh ARGS…` as a real process (the test binary installed as dsh on PATH by
// testscript.Main), with the extra environment env, and connects the SDK's client to it over
// stdio with opts and the session options sopts. Closing the session (at the end of the test)
// closes dsh's stdin, and dsh exits.
func dshProc(t *testing.T, env []string, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions, args ...string) *client {
	t.Helper()
	bin, err := exec.LookPath("dsh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dsh-test", Version: "v0"}, opts).Connect(ctx, &mcp.CommandTransport{Command: cmd}, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("close dsh: %v", err)
		}
	})
	return &client{t: t, cs: cs}
}

// writePolicy writes the policy src to a file and returns its path.
func writePolicy(t *testing.T, src string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// plantFile creates the file name in dir and returns its path.
func plantFile(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

const e2ePolicy = `{"default": "ask", "allow": ["ls", "echo", "cat", "seq"], "ask": ["touch *"], "deny": ["rm", "curl"]}`

// TestPolicyDenies checks, through a real dsh process, that a denied command does not run: the
// file it would have removed is still there, and the model reads why, for each spelling.
func TestPolicyDenies(t *testing.T) {
	dir := t.TempDir()
	keep := plantFile(t, dir, "keep.txt")
	c := dshProc(t, nil, nil, nil, "mcp", "-policy", writePolicy(t, e2ePolicy), "-workdir", dir)
	for _, cmd := range []string{
		"rm keep.txt", "ls && rm keep.txt", "r''m keep.txt", "/bin/rm keep.txt", "env rm keep.txt",
		"echo $(rm keep.txt)", "bash -c 'rm keep.txt'", "find . -name keep.txt -exec rm {} \\;", "ls | xargs rm",
	} {
		res := c.call("bash", bashArgs(cmd, nil))
		got := text(res)
		if !res.IsError || !strings.HasPrefix(got, "Error: the command policy denies this command: ") || !strings.Contains(got, `the deny rule "rm"`) {
			t.Errorf("%q: %q; want the denial naming the rule", cmd, got)
		}
		if !exists(keep) {
			t.Fatalf("%q removed the file", cmd)
		}
	}
	if got := c.bash("cat keep.txt"); got != "keep me\n" {
		t.Errorf("an allowed command: %q", got)
	}
}

// TestPolicyAsks checks the asks through a real dsh process: with a client that can be asked,
// the command runs once the user approves and not when they decline, an approval for the session
// covers the same command again without asking, and this on both the current protocol (the
// client answers the input request) and an older one (dsh asks with ServerSession.Elicit);
// without the elicitation capability the ask is refused with the approval text.
func TestPolicyAsks(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("protocol="+version, func(t *testing.T) {
			dir := t.TempDir()
			var asked atomic.Int32
			var answer atomic.Value
			var message atomic.Value
			opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				message.Store(req.Params.Message)
				return answer.Load().(*mcp.ElicitResult), nil
			}}
			c := dshProc(t, nil, opts, &mcp.ClientSessionOptions{ProtocolVersion: version},
				"mcp", "-policy", writePolicy(t, e2ePolicy), "-workdir", dir)

			answer.Store(&mcp.ElicitResult{Action: "decline"})
			res := c.call("bash", bashArgs("touch declined.txt", nil))
			if !res.IsError || !strings.HasPrefix(text(res), "Error: a person declined this call (`touch declined.txt` matches the ask rule \"touch *\")") {
				t.Errorf("declined: %q", text(res))
			}
			if exists(filepath.Join(dir, "declined.txt")) || asked.Load() != 1 {
				t.Fatalf("declined: the command ran, or the user was asked %d times", asked.Load())
			}
			msg, _ := message.Load().(string)
			for _, want := range []string{"touch declined.txt", `matches the ask rule "touch *"`, "approve it for this session, or decline"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the user was shown %q, without %q", msg, want)
				}
			}

			answer.Store(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}})
			if got := c.bash("touch once.txt && echo made"); got != "made\n" || !exists(filepath.Join(dir, "once.txt")) {
				t.Fatalf("approved once: %q", got)
			}
			c.bash("touch once.txt && echo made") // once means once: asked again
			if asked.Load() != 3 {
				t.Errorf("asked %d times after two approvals for once, want 3", asked.Load())
			}

			answer.Store(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "session"}})
			c.bash("touch session.txt")
			c.bash("touch session.txt")
			if asked.Load() != 4 {
				t.Errorf("asked %d times, want 4: an approval for the session covers the same command", asked.Load())
			}
			answer.Store(&mcp.ElicitResult{Action: "cancel"})
			if res := c.call("bash", bashArgs("touch other.txt", nil)); !res.IsError || asked.Load() != 5 {
				t.Errorf("another command after an approval for the session: %q, asked %d times", text(res), asked.Load())
			}
		})
	}
	t.Run("persistent", func(t *testing.T) {
		dir := t.TempDir()
		opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}, nil
		}}
		c := dshProc(t, nil, opts, nil, "mcp", "-persistent", "-policy", writePolicy(t, e2ePolicy), "-workdir", dir)
		if got := c.bash("touch approved.txt && echo made"); got != "made" || !exists(filepath.Join(dir, "approved.txt")) {
			t.Errorf("approved in the persistent shell: %q", got)
		}
	})
	t.Run("no elicitation capability", func(t *testing.T) {
		dir := t.TempDir()
		c := dshProc(t, nil, nil, nil, "mcp", "-policy", writePolicy(t, e2ePolicy), "-workdir", dir)
		res := c.call("bash", bashArgs("touch made.txt", nil))
		want := "Error: approval required: `touch made.txt` matches the ask rule \"touch *\". A person must approve this call and no one can be asked in this session."
		if !res.IsError || !strings.HasPrefix(text(res), want) {
			t.Errorf("%q\nwant %q…", text(res), want)
		}
		if exists(filepath.Join(dir, "made.txt")) {
			t.Error("the command ran without approval")
		}
	})
}

// launderPolicy allows everything it does not name, so that nothing but the parse and the
// judging of definitions stands between a laundered name and rm.
const launderPolicy = `{"default": "allow", "unknown": "ask", "deny": ["rm"]}`

// TestPolicyPersistentLaundering checks, through a real dsh process serving the persistent
// shell, that a definition made in one call cannot run a denied command in a later one: an
// alias, a function, a variable, a PATH entry, a loaded builtin, a hashed path. After every
// attempt the file rm would have removed is still there, and allowed definitions still work.
func TestPolicyPersistentLaundering(t *testing.T) {
	dir := t.TempDir()
	keep := plantFile(t, dir, "keep.txt")
	c := dshProc(t, nil, nil, nil, "mcp", "-persistent", "-policy", writePolicy(t, launderPolicy), "-workdir", dir)
	steps := []struct {
		define, refused string // the definition, and what its refusal says ("": it is allowed)
		use, useRefused string // the later use, and what its refusal says ("": it runs, harmlessly)
	}{
		{"alias ll='rm -f keep.txt'", `the deny rule "rm"`, "ll", ""},
		{"alias ls='eval'", "approval required", "ls 'rm -f keep.txt'", ""},
		{"alias go='rm -f'", `the deny rule "rm"`, "go keep.txt", ""},
		{`ls() { rm -f "$@"; }`, `the deny rule "rm"`, "ls keep.txt", ""},
		{"function cat { command rm -f keep.txt; }", `the deny rule "rm"`, "cat keep.txt", ""},
		{"x=rm; y=keep.txt", "", "$x -f $y", "approval required"},
		{"mkdir -p bin && printf '#!/bin/sh\\nexec /bin/rm -f \"$@\"\\n' > bin/ls && chmod +x bin/ls", "", "./bin/ls keep.txt", "approval required"},
		{"export PATH=$PWD/bin:$PATH", "approval required", "ls keep.txt", ""},
		{"PATH=bin:$PATH", "approval required", "ls keep.txt", ""},
		{"enable -f ./bin/ls.so ls", "approval required", "ls keep.txt", ""},
		{"hash -p /bin/rm ls", `the deny rule "rm"`, "ls keep.txt", ""},
		{"BASH_ALIASES[ls]='rm -f'", "approval required", "ls keep.txt", ""},
		{"trap 'rm -f keep.txt' DEBUG", `the deny rule "rm"`, "true", ""},
		{"PROMPT_COMMAND='rm -f keep.txt'", `the deny rule "rm"`, "true", ""},
	}
	for _, s := range steps {
		for _, call := range []struct{ cmd, refused string }{{s.define, s.refused}, {s.use, s.useRefused}} {
			res := c.call("bash", bashArgs(call.cmd, nil))
			if refused := res.IsError && strings.HasPrefix(text(res), "Error: "); refused != (call.refused != "") || !strings.Contains(text(res), call.refused) {
				t.Errorf("%q: %q; want refused: %q", call.cmd, text(res), call.refused)
			}
			if !exists(keep) {
				t.Fatalf("%q then %q removed the file", s.define, s.use)
			}
		}
	}
	// Without the policy the same shell runs the alias: the checks above are not vacuous.
	victim := plantFile(t, dir, "victim.txt")
	open := dshProc(t, nil, nil, nil, "mcp", "-persistent", "-workdir", dir)
	open.bash("alias ll='rm -f victim.txt'")
	open.bash("ll")
	if exists(victim) {
		t.Error("without a policy, the alias did not run rm: the shell does not expand aliases and the test proves nothing")
	}
	// The shell still keeps what the policy allows.
	c.bash("alias hello='echo hi'; greet() { echo \"hello $1\"; }; export NAME=dsh")
	if got := c.bash("hello; greet $NAME"); got != "hi\nhello dsh" {
		t.Errorf("allowed definitions: %q", got)
	}
}

// TestRedaction checks, through a real dsh process, that the value of a secret the environment
// scrub removes never reaches the model: not in a command's output, not around a truncation
// notice, not in a background task's output.
func TestRedaction(t *testing.T) {
	dir := t.TempDir()
	const secret = "planted-s3cret-value-42"
	if err := os.WriteFile(filepath.Join(dir, "creds"), []byte("token="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := dshProc(t, []string{"DSH_TEST_SERVICE_TOKEN=" + secret}, nil, nil, "mcp", "-workdir", dir)
	const redacted = "[redacted: DSH_TEST_SERVICE_TOKEN]"
	if got := c.bash("cat creds"); got != "token="+redacted+"\n" {
		t.Errorf("output: %q", got)
	}
	got := c.bash("cat creds; seq 1 50000; cat creds")
	if !strings.Contains(got, "[output truncated: ") || strings.Count(got, redacted) != 2 || strings.Contains(got, secret) {
		t.Errorf("truncated output: head %q … tail %q", head(got), tail(got))
	}
	started := text(c.call("bash", bashArgs("cat creds", map[string]any{"run_in_background": true})))
	id := strings.TrimPrefix(started, "started background task ")
	// Each read returns only what is new, so the output may come in a read before the one that
	// reports completion: keep every read.
	var read string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) { // polling the task, bounded
		next := text(c.call("bash_output", `{"task_id":"`+id+`"}`))
		read += next
		if strings.Contains(next, "status: completed") {
			break
		}
	}
	if !strings.Contains(read, "token="+redacted) || strings.Contains(read, secret) {
		t.Errorf("task read: %q", read)
	}
	// Without redaction the value comes through: the check above is not vacuous.
	plain := dshProc(t, []string{"DSH_TEST_SERVICE_TOKEN=" + secret}, nil, nil, "mcp", "-redact=false", "-workdir", dir)
	if got := plain.bash("cat creds"); got != "token="+secret+"\n" {
		t.Errorf("-redact=false: %q", got)
	}
}

func head(s string) string { return s[:min(len(s), 80)] }
func tail(s string) string { return s[max(0, len(s)-80):] }

// TestApproverBindsTheAnswer checks that an answer counts only for the call and the question it
// was given for: replayed with its request state onto another command, another session or
// another approver (another dsh process), it is asked again.
func TestApproverBindsTheAnswer(t *testing.T) {
	a := newApprover()
	d := tools.Decision{Verdict: tools.VerdictAsk, Reason: "asked", Prompt: "Run this command?"}
	call := tools.Call{Name: "bash", Args: json.RawMessage(`{"command":"touch x"}`), Agent: &tools.Agent{Owner: "s1"}}
	accept := mcp.InputResponseMap{approvalInput: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}}
	ask := func(a *approver, call tools.Call, state string) (*askState, tools.Approval, error) {
		st := &askState{canAsk: true, responses: accept, state: state}
		got, err := a.Approve(context.WithValue(context.Background(), approvalKey{}, st), call, d)
		return st, got, err
	}
	first, _, err := ask(a, call, "")
	if !errors.Is(err, errAwaitingApproval) || first.pending == nil || first.pendingState == "" {
		t.Fatalf("first ask: %v, pending %v", err, first.pending)
	}
	if _, got, err := ask(a, call, first.pendingState); err != nil || got != tools.ApproveOnce {
		t.Fatalf("the answer to its own question: %v, %v", got, err)
	}
	other := call
	other.Args = json.RawMessage(`{"command":"touch y"}`)
	otherOwner := call
	otherOwner.Agent = &tools.Agent{Owner: "s2"}
	for name, replay := range map[string]func() (*askState, tools.Approval, error){
		"another command": func() (*askState, tools.Approval, error) { return ask(a, other, first.pendingState) },
		"another session": func() (*askState, tools.Approval, error) { return ask(a, otherOwner, first.pendingState) },
		"another process": func() (*askState, tools.Approval, error) { return ask(newApprover(), call, first.pendingState) },
	} {
		if st, got, err := replay(); !errors.Is(err, errAwaitingApproval) || st.pending == nil || got != tools.Decline {
			t.Errorf("%s: %v, %v; want the question asked again", name, got, err)
		}
	}
	if _, err := a.Approve(context.Background(), call, d); !errors.Is(err, tools.ErrNoApprover) {
		t.Errorf("a call without an MCP client: %v, want ErrNoApprover", err)
	}
}

// TestUnsandboxedIsAsked checks, through a real dsh process with a sandbox, that a call asking
// to run outside it is put to the client's user with the command and the model's reason: on a
// decline nothing runs, on an approval the command runs unconfined (a write the sandbox denies
// succeeds), and the approval covers that call only.
func TestUnsandboxedIsAsked(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	var shown atomic.Value
	var answer atomic.Value
	opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		shown.Store(req.Params.Message)
		return answer.Load().(*mcp.ElicitResult), nil
	}}
	c := dshProc(t, nil, opts, nil, "mcp", "-sandbox", "workspace-write", "-workdir", ws)
	target := filepath.Join(outside, "made.txt")
	args := func(command string) string {
		b, _ := json.Marshal(map[string]any{"command": command, "description": "Write outside", "sandbox": "off", "justification": "the build writes there"})
		return string(b)
	}

	if res := c.call("bash", bashArgs("touch "+target, nil)); !strings.Contains(text(res), "[sandbox: ") || exists(target) {
		t.Fatalf("inside the sandbox the write was not denied: %q", text(res))
	}
	answer.Store(&mcp.ElicitResult{Action: "decline"})
	if res := c.call("bash", args("touch "+target)); !res.IsError || exists(target) {
		t.Fatalf("declined: %q, file made %v", text(res), exists(target))
	}
	msg, _ := shown.Load().(string)
	for _, want := range []string{"outside the sandbox", "touch " + target, "the build writes there"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the user was shown %q, without %q", msg, want)
		}
	}
	answer.Store(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}})
	if res := c.call("bash", args("touch "+target+" && echo done")); res.IsError || text(res) != "done\n" || !exists(target) {
		t.Fatalf("approved: %q, file made %v", text(res), exists(target))
	}
	// The model cannot smuggle the approval: the next call is asked again.
	answer.Store(&mcp.ElicitResult{Action: "decline"})
	other := filepath.Join(outside, "other.txt")
	if res := c.call("bash", args("touch "+other)); !res.IsError || exists(other) {
		t.Errorf("a second unsandboxed call ran on the first approval: %q", text(res))
	}
}
