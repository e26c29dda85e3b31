package toolbash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

func TestForeground(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	cases := []struct {
		name, command, timeout, want string
	}{
		{"stdout", "echo hello", "", "hello\n"},
		{"no output", "true", "", "(no output)"},
		{"stderr section", "echo out; echo err >&2", "", "out\n[stderr]\nerr\n"},
		{"stderr only", "echo err >&2", "", "[stderr]\nerr\n"},
		{"unterminated stdout before stderr", "printf out; echo err >&2", "", "out\n[stderr]\nerr\n"},
		{"non-zero exit", "echo failing; exit 3", "", "failing\n[exit code: 3]"},
		{"unterminated output before marker", "printf x; exit 7", "", "x\n[exit code: 7]"},
		{"exit without output", "exit 7", "", "(no output)\n[exit code: 7]"},
		{"signal without timeout", "kill -TERM $$", "", "(no output)\n[killed by signal: SIGTERM]"},
		{"timeout", "sleep 60", "100", "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
		{"timeout with trapped exit 0", "trap 'exit 0' TERM; echo armed; sleep 60 & wait", "100", "armed\n[timed out after 100ms]"},
		{"fractional timeout rounds up", "sleep 60", "99.2", "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := fmt.Sprintf(`{"command":%q,"description":"Test command"`, tc.command)
			if tc.timeout != "" {
				args += `,"timeoutMs":` + tc.timeout
			}
			res := h.call(nil, "bash", args+"}")
			if res.IsError || res.Text() != tc.want {
				t.Errorf("got %q (isError %v), want %q", res.Text(), res.IsError, tc.want)
			}
		})
	}
}

func TestForegroundTruncationKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{Limits: bash.Limits{MaxOutputBytes: 100, HeadBytes: 30}})
	text := h.ok(nil, "bash", `{"command":"for i in $(seq -w 1 100); do echo line-0$i; done","description":"Print numbered lines"}`)
	// 100 lines of 10 bytes: the first 30 bytes are kept, the tail holds the last 70.
	re := regexp.MustCompile(`^line-0001\nline-0002\nline-0003\n\[output truncated: (\d+) bytes omitted; full output: (\S+)\]\n(?s:(.*))$`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("result does not have head, truncation line and tail:\n%s", text)
	}
	if m[3] != "line-0094\nline-0095\nline-0096\nline-0097\nline-0098\nline-0099\nline-0100\n" {
		t.Errorf("tail does not end with the last lines: %q", m[3])
	}
	if m[1] != "900" {
		t.Errorf("omitted %s bytes, want 900 (1000 written, 30 head, 70 tail)", m[1])
	}
	spill, err := os.ReadFile(m[2])
	if err != nil {
		t.Fatalf("spill file: %v", err)
	}
	if len(spill) != 1000 || !strings.HasPrefix(string(spill), "line-0001\n") {
		t.Errorf("spill file has %d bytes starting %q, want the whole 1000-byte stream", len(spill), spill[:min(20, len(spill))])
	}
}

func TestWorkdir(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	for _, d := range []string{"a", "b", "a/sub"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tmp, _ := filepath.EvalSymlinks(os.TempDir())
	here, _ := os.Getwd()
	one, two := newSession("one", filepath.Join(root, "a")), newSession("two", filepath.Join(root, "b"))
	cases := []struct {
		name    string
		agent   *tools.Agent
		workdir string
		want    string
	}{
		{"session cwd is the default", one.agent, "", filepath.Join(root, "a")},
		{"another session runs in its own dir", two.agent, "", filepath.Join(root, "b")},
		{"absolute workdir overrides", one.agent, tmp, tmp},
		{"relative workdir joins the session cwd", one.agent, "sub", filepath.Join(root, "a/sub")},
		{"relative workdir is cleaned", one.agent, "sub/../../b", filepath.Join(root, "b")},
		{"no agent: executor default", nil, "", here},
		{"agent without dir: executor default", &tools.Agent{Owner: "x"}, "", here},
	}
	for _, tc := range cases {
		args := `{"command":"pwd -P","description":"Show directory"`
		if tc.workdir != "" {
			args += fmt.Sprintf(`,"workdir":%q`, tc.workdir)
		}
		got := h.ok(tc.agent, "bash", args+"}")
		if want, _ := filepath.EvalSymlinks(tc.want); got != want+"\n" {
			t.Errorf("%s: pwd %q, want %q", tc.name, got, want+"\n")
		}
	}
}

func TestInfrastructureErrors(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	missing := filepath.Join(t.TempDir(), "missing")
	res := h.fail(nil, "bash", fmt.Sprintf(`{"command":"pwd","description":"Show directory","workdir":%q}`, missing))
	if res.Code != "ENOENT" || !strings.HasPrefix(res.Text(), "Error: ") || !strings.Contains(res.Text(), "no such file or directory") || !strings.Contains(res.Text(), missing) {
		t.Errorf("missing workdir: %q code %q", res.Text(), res.Code)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = h.callCtx(ctx, nil, "bash", `{"command":"echo never","description":"Never runs"}`)
	if !res.IsError || !strings.Contains(res.Text(), "aborted") {
		t.Errorf("pre-cancelled call: %+v", res)
	}
}

func TestAbortRunningCommand(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the command is provably running.
		for {
			if _, err := os.Stat(marker); err == nil {
				cancel()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	res := h.callCtx(ctx, nil, "bash", fmt.Sprintf(`{"command":"touch %s; sleep 60","description":"Wait"}`, marker))
	if !res.IsError || res.Text() != "Error: tool call aborted" || res.Code != tools.CodeAborted || !errors.Is(res.Err, context.Canceled) {
		t.Errorf("aborted run: %+v", res)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("abort took %v", took)
	}
}

func TestArgumentErrors(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	cases := []struct{ name, args, want string }{
		{"no command", `{"description":"d"}`, `Error: invalid arguments: missing required property "command"`},
		{"numeric command", `{"command":1,"description":"d"}`, `Error: invalid arguments: "command" must be a string`},
		{"no description", `{"command":"ls"}`, `Error: invalid arguments: missing required property "description"`},
		{"numeric description", `{"command":"ls","description":2}`, `Error: invalid arguments: "description" must be a string`},
		{"string timeoutMs", `{"command":"ls","description":"d","timeoutMs":"100"}`, `Error: invalid arguments: "timeoutMs" must be a number`},
		{"numeric workdir", `{"command":"ls","description":"d","workdir":3}`, `Error: invalid arguments: "workdir" must be a string`},
		{"string run_in_background", `{"command":"ls","description":"d","run_in_background":"yes"}`, `Error: invalid arguments: "run_in_background" must be a boolean`},
		{"everything wrong at once", `{"timeoutMs":null,"workdir":[]}`, `Error: invalid arguments: missing required property "command"; missing required property "description"; "timeoutMs" must be a number; "workdir" must be a string`},
		{"not an object", `["ls"]`, `Error: invalid arguments: "arguments" must be an object`},
		{"malformed JSON", `{"command":"ls"`, `Error: invalid arguments: "arguments" must be valid JSON: unexpected end of JSON input`},
		{"blank command", `{"command":"  \n","description":"d"}`, `Error: invalid command: expected a non-empty string`},
		{"NUL in command", `{"command":"echo a\u0000b","description":"d"}`, `Error: invalid command: contains a NUL byte at offset 6; a command cannot carry NUL (write it with printf '\0' instead)`},
		{"blank description", `{"command":"ls","description":" "}`, `Error: invalid description: expected a non-empty string`},
		{"negative timeout", `{"command":"ls","description":"d","timeoutMs":-1}`, `Error: invalid timeoutMs: expected a positive number, got -1`},
		{"zero timeout", `{"command":"ls","description":"d","timeoutMs":0}`, `Error: invalid timeoutMs: expected a positive number, got 0`},
		{"infinite timeout", `{"command":"ls","description":"d","timeoutMs":1e400}`, `Error: invalid arguments: "timeoutMs" must be a finite JSON number`},
		{"output: missing task_id", `{}`, `Error: invalid arguments: missing required property "task_id"`},
		{"output: numeric task_id", `{"task_id":1}`, `Error: invalid arguments: "task_id" must be a string`},
		{"output: empty task_id", `{"task_id":""}`, `Error: invalid task_id: expected a string, got ""`},
		{"output: unknown task", `{"task_id":"bash-999"}`, `Error: unknown bash task "bash-999"`},
		{"kill: missing task_id", `{}`, `Error: invalid arguments: missing required property "task_id"`},
		{"kill: empty task_id", `{"task_id":""}`, `Error: invalid task_id: expected a string, got ""`},
		{"kill: unknown task", `{"task_id":"nope"}`, `Error: unknown bash task "nope"`},
	}
	for _, tc := range cases {
		tool := "bash"
		if rest, ok := strings.CutPrefix(tc.name, "output: "); ok {
			tool, tc.name = "bash_output", rest
		} else if rest, ok := strings.CutPrefix(tc.name, "kill: "); ok {
			tool, tc.name = "bash_kill", rest
		}
		res := h.call(nil, tool, tc.args)
		if !res.IsError || res.Text() != tc.want {
			t.Errorf("%s %s: got %q (isError %v), want %q", tool, tc.name, res.Text(), res.IsError, tc.want)
		}
	}
	if tasks := h.ex.List(); len(tasks) != 0 {
		t.Errorf("argument errors started %d tasks", len(tasks))
	}
}

func TestHugeTimeoutIsCapped(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	if got := h.ok(nil, "bash", `{"command":"echo ok","description":"d","timeoutMs":1e300}`); got != "ok\n" {
		t.Errorf("got %q", got)
	}
}
