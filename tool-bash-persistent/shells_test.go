//go:build linux

package persistentbash

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/tools"
)

func TestSchemaAndDescription(t *testing.T) {
	checkLeaks(t)
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	tool := s.Tool()
	want := `{"type":"object","properties":{"command":{"type":"string","description":"The bash command to run. Relative path is preferred in the command."}},"required":["command"]}`
	if tool.Name != "bash" || string(tool.Parameters) != want || tool.Description != DefaultDescription {
		t.Fatalf("got %s %q %s", tool.Name, tool.Description, tool.Parameters)
	}
	custom, err := New(Config{Description: "Run it."})
	if err != nil {
		t.Fatal(err)
	}
	defer custom.Close(context.Background())
	if custom.Tool().Description != "Run it." {
		t.Fatalf("description %q", custom.Tool().Description)
	}
}

func TestConfigErrors(t *testing.T) {
	checkLeaks(t)
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative timeout", Config{Timeout: -time.Second}, "persistentbash: Timeout must be positive, got -1s"},
		{"negative output cap", Config{MaxOutputChars: -5}, "persistentbash: MaxOutputChars must be positive, got -5"},
		{"negative grace", Config{KillGrace: -1}, "persistentbash: KillGrace must not be negative, got -1ns"},
		{"blank description", Config{Description: "  \n"}, "persistentbash: Description must be non-empty when set"},
		{"relative workdir", Config{Workdir: "rel/dir"}, `persistentbash: Workdir must be absolute, got "rel/dir"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.cfg)
			if err == nil {
				s.Close(context.Background())
				t.Fatal("accepted")
			}
			if err.Error() != c.want {
				t.Fatalf("got %q, want %q", err, c.want)
			}
		})
	}
}

func TestCallView(t *testing.T) {
	checkLeaks(t)
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	v, ok := s.Tool().PresentCall(json.RawMessage(`{"command":"pwd"}`))
	if !ok || v.Terminal == nil || v.Terminal.Command != "pwd" {
		t.Fatalf("got %+v %v", v, ok)
	}
	if _, ok := s.Tool().PresentCall(json.RawMessage(`{"cmd":"pwd"}`)); ok {
		t.Fatal("malformed arguments presented")
	}
}

func TestResultView(t *testing.T) {
	checkLeaks(t)
	seven, zero := 7, 0
	facts := func(text string, f Facts) tools.Result {
		r, err := withFacts(text, f)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name   string
		result tools.Result
		want   tools.ResultView
		ok     bool
	}{
		{"success", facts("hi", Facts{Outcome: "completed", ExitCode: &zero}), tools.ResultView{Terminal: &tools.TerminalResult{Output: "hi", ExitCode: &zero}}, true},
		{"exit code", facts("out\n[exit code: 7]", Facts{Outcome: "completed", ExitCode: &seven, Trailer: 1}), tools.ResultView{Terminal: &tools.TerminalResult{Output: "out", ExitCode: &seven}}, true},
		{"exit code only", facts("[exit code: 7]", Facts{Outcome: "completed", ExitCode: &seven, Trailer: 1}), tools.ResultView{Terminal: &tools.TerminalResult{Output: "", ExitCode: &seven}}, true},
		{"a forged marker line from a command that exits 0", facts("x\n[exit code: 7]", Facts{Outcome: "completed", ExitCode: &zero}), tools.ResultView{Terminal: &tools.TerminalResult{Output: "x\n[exit code: 7]", ExitCode: &zero}}, true},
		{"reset", facts("bye\n[shell exited: code 0]\n"+ResetText, Facts{Outcome: "shell-exited", Reset: true, Trailer: 2}), tools.ResultView{Terminal: &tools.TerminalResult{Output: "bye\n[shell exited: code 0]\n" + ResetText}}, true},
		{"timed out", facts("Your command timed out…\n"+ResetText, Facts{Outcome: "timed-out", Reset: true, Trailer: 1}), tools.ResultView{Terminal: &tools.TerminalResult{Output: "Your command timed out…\n" + ResetText, TimedOut: true}}, true},
		{"error", tools.ErrorResult(errors.New("boom")), tools.ResultView{Content: []tools.Content{tools.ConsoleBlock("Error: boom")}}, true},
		{"text without facts", tools.Text("out\n[exit code: 7]"), tools.ResultView{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := presentResult(Args{Command: "x"}, c.result)
			if ok != c.ok {
				t.Fatalf("presented %v, want %v", ok, c.ok)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(c.want)
			if string(gj) != string(wj) {
				t.Fatalf("got %s, want %s", gj, wj)
			}
		})
	}
}

func TestBadCalls(t *testing.T) {
	h := newHarness(t, Config{})
	cases := []struct {
		name, owner, args, want string
	}{
		{"no agent", "", `{"command":"true"}`, "Error: bash requires an owning agent session"},
		{"empty command", "a", `{"command":""}`, "Error: command must be a non-empty string"},
		{"whitespace command", "a", `{"command":" \n\t "}`, "Error: command must be a non-empty string"},
		{"NUL in command", "a", `{"command":"echo a\u0000b"}`, "Error: command contains a NUL byte at offset 6; bash cannot receive it"},
		{"missing command", "a", `{}`, `Error: invalid arguments: missing required property "command"`},
		{"wrong type", "a", `{"command":7}`, `Error: invalid arguments: "command" must be a string`},
		{"not an object", "a", `["ls"]`, `Error: invalid arguments: "arguments" must be an object`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call := tools.Call{ID: "1", Name: ToolName, Args: json.RawMessage(c.args)}
			if c.owner != "" {
				call.Agent = &tools.Agent{Owner: c.owner}
			}
			r := h.reg.Execute(context.Background(), call)
			if !r.IsError || r.Text() != c.want {
				t.Fatalf("got %q (error %v), want %q", r.Text(), r.IsError, c.want)
			}
		})
	}
	if n := len(h.s.owners); n != 0 {
		t.Fatalf("%d shells started by bad calls", n)
	}
}

func TestStatePersistsPerOwner(t *testing.T) {
	h := newHarness(t, Config{})
	h.expect("a", "export KEEP=loader && mkdir nested && cd nested", "")
	h.expect("a", "f() { echo \"f:$1\"; }; f x", "f:x")
	h.expect("a", "echo \"cwd=$PWD keep=$KEEP\"; f y", "cwd="+h.dir+"/nested keep=loader\nf:y")
	// Another owner has its own shell, in the workspace, without a's state.
	h.expect("b", "echo \"cwd=$PWD keep=${KEEP:-unset}\"; type f >/dev/null 2>&1 || echo no f", "cwd="+h.dir+" keep=unset\nno f")
	h.expect("a", "false", "[exit code: 1]")
	h.expect("a", "echo out; exit_in_subshell() { (exit 7); }; exit_in_subshell", "out\n[exit code: 7]")
	h.expect("a", "cat <<'EOF'\nalpha\nbeta\nEOF", "alpha\nbeta")
	h.expect("a", "x='line one'\ny=\"it's fine\"\necho \"$x:$y\"", "line one:it's fine")
	h.expect("a", "printf '%s|%s' \"a\tb\" \"c\x03d\" | od -An -c | tr -s ' '", " a \\t b | c 003 d")
}

func TestAgentDirectory(t *testing.T) {
	h := newHarness(t, Config{})
	abs := t.TempDir()
	ctx := context.Background()
	if r := h.callCtx(ctx, "abs", abs, "pwd"); r.Text() != abs {
		t.Fatalf("absolute agent dir: %q", r.Text())
	}
	if err := os.Mkdir(filepath.Join(h.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := h.callCtx(ctx, "rel", "sub", "pwd"); r.Text() != filepath.Join(h.dir, "sub") {
		t.Fatalf("relative agent dir: %q", r.Text())
	}
	if r := h.callCtx(ctx, "missing", filepath.Join(abs, "nope"), "pwd"); !r.IsError || !strings.HasPrefix(r.Text(), "Error: persistent bash shell did not start: ") {
		t.Fatalf("missing dir: %q", r.Text())
	}
}

func TestCredentialsAreScrubbed(t *testing.T) {
	t.Setenv("MY_API_TOKEN", "secret-1")
	t.Setenv("DB_PASSWORD", "secret-2")
	t.Setenv("DSH_INTERNAL", "secret-3")
	t.Setenv("KEPT_KEY", "visible")
	t.Setenv("PLAIN_VALUE", "plain")
	h := newHarness(t, Config{KeepEnv: []string{"KEPT_KEY"}, Env: map[string]string{"EXTRA": "x", "PAGER": "less"}})
	h.expect("a", "env | grep -c secret-", "0\n[exit code: 1]")
	h.expect("a", "echo $KEPT_KEY $PLAIN_VALUE $EXTRA $PAGER $TERM $NO_COLOR $GIT_TERMINAL_PROMPT $DSH_SHELL", "visible plain x less dumb 1 0 persistent")
}

func TestLongOutputIsClipped(t *testing.T) {
	h := newHarness(t, Config{MaxOutputChars: 1000})
	r := h.call("a", "seq 1 100000")
	text := r.Text()
	if !strings.HasPrefix(text, "1\n2\n3\n") || !strings.HasSuffix(text, "\n99999\n100000") {
		t.Fatalf("head or tail missing: %.30q … %.30q", text, text[len(text)-30:])
	}
	if !strings.Contains(text, "\n[output clipped: 587895 characters (99764 lines) omitted") || strings.Count(text, "[output clipped") != 1 {
		t.Fatalf("no clip notice: %q", text)
	}
	if strings.Contains(text, "__DSH_") || strings.Contains(text, "dsh> ") {
		t.Fatal("marker or prompt in the result")
	}
}

func TestExitExecAndSignals(t *testing.T) {
	h := newHarness(t, Config{})
	h.expect("a", "cd /tmp && export GONE=1", "")
	// A nested shell is a program waiting for input: it ends at end-of-file, and ours goes on.
	h.expect("a", "KEEP=1; PS1='inner> ' bash --norc --noprofile; echo $KEEP", "inner> exit\n1\n"+StdinEOFText)
	// A shell replaced by exec is such a program too, and the shell is gone once it ends.
	h.expect("a", "exec env PS1='inner> ' bash --norc --noprofile", "inner> exit\n"+StdinEOFText+"\n[shell exited: code 0]\n"+ResetText)
	h.expect("a", "echo ${GONE:-unset} $PWD", h.notice("the shell exited with code 0")+"unset "+h.dir)
	h.expect("a", "echo bye; exit 3", "bye\nexit\n[shell exited: code 3]\n"+ResetText)
	// The next call starts a fresh shell in the workspace.
	h.expect("a", "echo ${GONE:-unset} $PWD", h.notice("the shell exited with code 3")+"unset "+h.dir)
	h.expect("a", "kill -KILL $$", "[shell killed by signal: SIGKILL]\n"+ResetText)
	h.expect("a", "echo fresh", h.notice("the shell was killed by SIGKILL")+"fresh")
}

func TestStdinWaitAndContinuation(t *testing.T) {
	// A dead wait would end in the timeout text instead of the answers below.
	h := newHarness(t, Config{Timeout: 10 * time.Second})
	// Incomplete commands are answered by bash at once (the command is one word given to
	// eval, so the shell never waits for more lines), and the shell's state is kept.
	h.expect("a", "KEEP=yes", "")
	h.expect("a", "echo \"unclosed", "bash: unexpected EOF while looking for matching `\"'\n[exit code: 2]")
	h.expect("a", "if true; then echo x", "bash: syntax error: unexpected end of file\n[exit code: 2]")
	h.expect("a", "echo trailing \\", "trailing \\")
	if r := h.call("a", "cat <<EOF\nbody"); !strings.HasSuffix(r.Text(), "delimited by end-of-file (wanted `EOF')\nbody") {
		t.Fatalf("unterminated here-document: %q", r.Text())
	}
	h.expect("a", "echo $KEEP", "yes")
	h.expect("a", "KEEP=yes; cat; echo after", "after\n"+StdinEOFText)
	h.expect("a", "read -r x; echo \"x=$x\"", "x=\n"+StdinEOFText)
	h.expect("a", "read -r x", StdinEOFText+"\n[exit code: 1]")
	h.expect("a", "echo $KEEP", "yes")
}

// TestLostShellIsReset checks that a shell which can no longer be followed is reset at once with
// the reason in plain words, and that the next call runs in a fresh shell instead of waiting
// for the timeout.
func TestLostShellIsReset(t *testing.T) {
	h := newHarness(t, Config{Timeout: 10 * time.Second}) // a hang would end in the timeout text
	cases := []struct{ command, want, reason string }{
		{"echo before; exec >/dev/null 2>&1", "before\n" + RedirectedText, "output redirected"},
		{"exec >log 2>&1", RedirectedText, "output redirected"},
		{"builtin() { :; }", UnreportedPromptText, "prompt not reported"},
		{"shopt -s extdebug; trap false DEBUG", UnreportedPromptText, "prompt not reported"},
		{"suspend -f", StoppedText, "shell stopped"},
		{"kill -STOP $$", StoppedText, "shell stopped"},
	}
	for _, c := range cases {
		h.expect("a", "export KEEP=1", "")
		h.expect("a", c.command, c.want+"\n"+ResetText)
		h.expect("a", "echo ${KEEP:-unset}", h.notice("the shell could no longer be followed ("+c.reason+")")+"unset")
	}
	// enable -n printf silences the prompt marker only: the shell waiting in its line editor
	// after the end marker is its prompt, and the state is kept.
	h.expect("a", "export KEEP=1; enable -n printf", "")
	h.expect("a", "echo $KEEP", "1")
}

func TestTimeoutResetsTheShell(t *testing.T) {
	h := newHarness(t, Config{Timeout: 500 * time.Millisecond})
	h.expect("a", "cd / && export GONE=1", "")
	r := h.call("a", "echo partial; sleep 30")
	want := "Your command timed out after 1 seconds. Below is partial output:\npartial\n" + ResetText
	if r.IsError || r.Text() != want {
		t.Fatalf("got %q, want %q", r.Text(), want)
	}
	h.expect("a", "echo ${GONE:-unset} $PWD", h.notice("the previous command timed out after 1 seconds")+"unset "+h.dir)
}

func TestCancellation(t *testing.T) {
	h := newHarness(t, Config{})
	h.expect("a", "export GONE=1", "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() { done <- h.callCtx(ctx, "a", "", "touch started; sleep 30") }()
	waitFor(t, "the command to start", func() bool { _, err := os.Stat(filepath.Join(h.dir, "started")); return err == nil })
	cancel()
	r := <-done
	if !r.IsError || r.Code != tools.CodeAborted || r.Text() != "Error: context canceled" {
		t.Fatalf("got %q code %q", r.Text(), r.Code)
	}
	h.expect("a", "echo ${GONE:-unset}", h.notice(CancelledCause)+"unset")

	// A call cancelled before it runs starts nothing.
	pre, cancelPre := context.WithCancel(context.Background())
	cancelPre()
	if r := h.callCtx(pre, "fresh-owner", "", "true"); !r.IsError || r.Code != tools.CodeAbortedBeforeDispatch {
		t.Fatalf("pre-cancelled: %q %q", r.Text(), r.Code)
	}
	if _, ok := h.s.owners["fresh-owner"]; ok {
		t.Fatal("a pre-cancelled call created a shell slot")
	}
}

func TestCallsOfOneOwnerRunInArrivalOrder(t *testing.T) {
	h := newHarness(t, Config{})
	gate := filepath.Join(h.dir, "gate")
	log := filepath.Join(h.dir, "log")
	var wg sync.WaitGroup
	results := make([]tools.Result, 4)
	wg.Go(func() {
		results[0] = h.call("a", "touch running; while [ ! -e "+gate+" ]; do sleep 0.01; done; echo 0 >> "+log)
	})
	waitFor(t, "the first call to run", func() bool { _, err := os.Stat(filepath.Join(h.dir, "running")); return err == nil })
	for i := 1; i < 4; i++ {
		wg.Go(func() { results[i] = h.call("a", "echo "+strconv.Itoa(i)+" >> "+log) })
		waitFor(t, "call "+strconv.Itoa(i)+" to queue", func() bool { return h.s.waiting("a") == i })
	}
	// A queued call that is cancelled leaves the queue without running.
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan tools.Result, 1)
	go func() { cancelled <- h.callCtx(ctx, "a", "", "echo cancelled >> "+log) }()
	waitFor(t, "the cancellable call to queue", func() bool { return h.s.waiting("a") == 4 })
	cancel()
	if r := <-cancelled; !r.IsError {
		t.Fatalf("cancelled queued call: %q", r.Text())
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	data, _ := os.ReadFile(log)
	if string(data) != "0\n1\n2\n3\n" {
		t.Fatalf("order %q", data)
	}
	for i, r := range results {
		if r.IsError || r.Text() != "" {
			t.Fatalf("call %d: %q", i, r.Text())
		}
	}
}

func TestOwnersRunInParallel(t *testing.T) {
	h := newHarness(t, Config{Timeout: 10 * time.Second})
	flag := filepath.Join(h.dir, "flag")
	var wg sync.WaitGroup
	var ra, rb tools.Result
	// a can only finish after b ran: serialising the owners would time a out.
	wg.Go(func() { ra = h.call("a", "while [ ! -e "+flag+" ]; do sleep 0.01; done; echo a done") })
	wg.Go(func() { rb = h.call("b", "touch "+flag+"; echo b done") })
	wg.Wait()
	if ra.Text() != "a done" || rb.Text() != "b done" {
		t.Fatalf("a %q, b %q", ra.Text(), rb.Text())
	}
}

func TestReleaseAndCloseStopEverything(t *testing.T) {
	h := newHarness(t, Config{})
	h.expect("a", "KEEP=1", "")
	child := h.stubbornChild("a")
	// A call still running when its owner is released ends with the shell-exit result.
	done := make(chan tools.Result, 1)
	go func() { done <- h.call("a", "touch busy; sleep 300") }()
	waitFor(t, "the running call", func() bool { _, err := os.Stat(filepath.Join(h.dir, "busy")); return err == nil })
	if err := h.s.Release("a"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !strings.HasPrefix(r.Text(), "[shell killed by signal: SIGHUP]") || !strings.HasSuffix(r.Text(), ResetText) {
		t.Fatalf("running call after Release: %q", r.Text())
	}
	if _, err := os.Stat("/proc/" + child); err == nil {
		stat, _ := os.ReadFile("/proc/" + child + "/stat")
		t.Fatalf("TERM-ignoring child %s survived Release: %s", child, stat)
	}
	h.expect("a", "echo ${KEEP:-fresh}", "fresh")

	if r := h.call("b", "sleep 300 &"); !strings.HasPrefix(r.Text(), "[1] ") {
		t.Fatalf("background job: %q", r.Text())
	}
	if err := h.s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := h.call("b", "true"); !r.IsError || r.Text() != "Error: tool-bash-persistent is closed" {
		t.Fatalf("after Close: %q", r.Text())
	}
}

func TestBinaryAndHugeOutput(t *testing.T) {
	h := newHarness(t, Config{MaxOutputChars: 2000})
	cases := []struct{ name, command string }{
		{"binary", "head -c 100000 /dev/urandom"},
		{"NUL and invalid UTF-8", `printf 'a\0b\xffc'`},
		{"10 MB line", `head -c 10000000 /dev/zero | tr '\0' y`},
		{"escape storm", `for i in $(seq 1 5000); do printf '\033[%dm\033]0;t\007#' $((i%100)); done`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.call("a", c.command)
			text := r.Text()
			if r.IsError || len([]rune(text)) > 2000+300 {
				t.Fatalf("error %v, %d runes", r.IsError, len([]rune(text)))
			}
			for _, ch := range text {
				if (ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f || (ch >= 0x80 && ch <= 0x9f) {
					t.Fatalf("control %U in result", ch)
				}
			}
		})
	}
	h.expect("a", `printf 'a\0b\xffc'`, "ab\uFFFDc")
}

func TestShellDeadBetweenCalls(t *testing.T) {
	h := newHarness(t, Config{})
	h.expect("a", "echo $$ > pid; export GONE=1", "")
	data, err := os.ReadFile(filepath.Join(h.dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	h.s.mu.Lock()
	sh := h.s.owners["a"].shell
	h.s.mu.Unlock()
	// An interactive bash waiting in its line editor only notes a first SIGSEGV (its handler
	// runs the signal's action at the next check, which a blocked read may never reach); a second
	// one before it has acted kills it at once. Send until it is dead.
	for dead := false; !dead; {
		if err := syscall.Kill(pid, syscall.SIGSEGV); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sh.Done():
			dead = true
		case <-time.After(100 * time.Millisecond): // resend interval, not synchronisation
		}
	}
	// The next call runs in a new shell, and its result says why.
	h.expect("a", "echo ${GONE:-unset}", h.notice("the shell was killed by SIGSEGV between calls")+"unset")
	h.expect("a", "echo ${GONE:-unset}", "unset")
}

func TestCloseDuringShellStart(t *testing.T) {
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow-bash")
	started := filepath.Join(dir, "started")
	script := "#!/bin/sh\ntouch " + started + "\nexec sleep 60\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Bash: slow})
	done := make(chan tools.Result, 1)
	go func() { done <- h.call("a", "true") }()
	waitFor(t, "the shell to be spawned", func() bool { _, err := os.Stat(started); return err == nil })
	if err := h.s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !r.IsError || r.Text() != "Error: tool-bash-persistent was closed during the call" {
		t.Fatalf("got %q", r.Text())
	}
}

// TestResetNoticeComesOnce checks that the first result after each kind of reset, and only that
// one, starts with the notice saying why, in its text and in its facts; that a call which
// reset nothing gives none; and that a refused call between them does not use the notice up.
func TestResetNoticeComesOnce(t *testing.T) {
	h := newHarness(t, Config{Timeout: 3 * time.Second})
	if err := os.Mkdir(filepath.Join(h.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		provoke func(owner string) // resets the owner's shell, or not
		cause   string             // "" when the shell was not reset
	}{
		{"no reset", func(o string) { h.expect(o, "true", "") }, ""},
		{"failed command", func(o string) { h.expect(o, "false", "[exit code: 1]") }, ""},
		{"exit", func(o string) { h.call(o, "exit 3") }, "the shell exited with code 3"},
		{"exec of a program that ends", func(o string) { h.call(o, "exec sh -c 'exit 5'") }, "the shell exited with code 5"},
		{"killed by a command", func(o string) { h.call(o, "kill -KILL $$") }, "the shell was killed by SIGKILL"},
		{"killed between calls", func(o string) { h.killShell(o) }, "the shell was killed by SIGKILL between calls"},
		{"lost", func(o string) { h.call(o, "exec >/dev/null 2>&1") }, "the shell could no longer be followed (output redirected)"},
		{"stopped", func(o string) { h.call(o, "kill -STOP $$") }, "the shell could no longer be followed (shell stopped)"},
		{"timed out", func(o string) { h.call(o, "sleep 30") }, "the previous command timed out after 3 seconds"},
		{"cancelled", func(o string) { h.cancelRunning(o) }, CancelledCause},
	}
	for _, c := range cases {
		t.Run(c.name, func(sub *testing.T) {
			h.t = sub
			defer func() { h.t = t }()
			o := c.name
			h.expect(o, "cd sub && export X=1", "")
			c.provoke(o)
			if r := h.call(o, " "); !r.IsError || r.Text() != "Error: "+ErrEmptyCommand.Error() {
				sub.Fatalf("a refused call: %q", r.Text())
			}
			after := "unset\n" + h.dir
			if c.cause == "" {
				after = "1\n" + h.dir + "/sub"
			}
			first, second := after, after
			if c.cause != "" {
				first = h.notice(c.cause) + after
			}
			h.expectReset(o, `echo "${X:-unset}"; pwd`, first, c.cause)
			h.expectReset(o, `echo "${X:-unset}"; pwd`, second, "")
		})
	}
}

// expectReset runs command as owner and fails the test unless the result text is want and its
// facts give cause as the reset cause.
func (h *harness) expectReset(owner, command, want, cause string) {
	h.t.Helper()
	r := h.call(owner, command)
	f, ok := factsOf(r)
	if r.IsError || !ok || r.Text() != want || f.ResetCause != cause {
		h.t.Fatalf("%q → %q (error %v, facts %s); want %q with reset cause %q", command, r.Text(), r.IsError, r.Structured, want, cause)
	}
}

// killShell kills the owner's idle shell with SIGKILL from outside and waits until it is dead.
func (h *harness) killShell(owner string) {
	h.t.Helper()
	h.s.mu.Lock()
	sh := h.s.owners[owner].shell
	h.s.mu.Unlock()
	if err := syscall.Kill(sh.Pid(), syscall.SIGKILL); err != nil {
		h.t.Fatal(err)
	}
	select {
	case <-sh.Done():
	case <-time.After(10 * time.Second):
		h.t.Fatal("the killed shell did not end")
	}
}

// cancelRunning cancels a call of owner once its command runs, and checks it failed with the
// context's error.
func (h *harness) cancelRunning(owner string) {
	h.t.Helper()
	started := filepath.Join(h.dir, owner+"-started")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan tools.Result, 1)
	go func() { done <- h.callCtx(ctx, owner, "", "touch '"+started+"'; sleep 30") }()
	waitFor(h.t, "the command to start", func() bool { _, err := os.Stat(started); return err == nil })
	cancel()
	if r := <-done; !r.IsError || r.Code != tools.CodeAborted {
		h.t.Fatalf("cancelled call: %q code %q", r.Text(), r.Code)
	}
}
