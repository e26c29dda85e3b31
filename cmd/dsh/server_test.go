package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

// TestToolsList checks that an MCP client sees exactly the tools package's definitions (name,
// description, schema) plus the annotations each tool should carry.
func TestToolsList(t *testing.T) {
	for _, persistent := range []bool{false, true} {
		t.Run(fmt.Sprintf("persistent=%v", persistent), func(t *testing.T) {
			srv := testServer(t, config{Persistent: persistent})
			c := connect(t, srv)
			res, err := c.cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]mcp.ToolAnnotations{
				"bash":        {Title: "Run a bash command", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
				"bash_output": {Title: "Read a background bash task's output", ReadOnlyHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
				"bash_kill":   {Title: "Kill a background bash task", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
				"bash_tasks":  {Title: "List background bash tasks", ReadOnlyHint: true, DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
			}
			names := []string{"bash", "bash_kill", "bash_output", "bash_tasks"} // tools/list sorts by name
			if persistent {
				names = names[:1]
				want["bash"] = mcp.ToolAnnotations{Title: "Run a command in a persistent bash shell", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)}
			}
			if len(res.Tools) != len(names) {
				t.Fatalf("tools/list has %d tools, want %v", len(res.Tools), names)
			}
			for i, got := range res.Tools {
				if got.Name != names[i] {
					t.Errorf("tool %d: name %q, want %q", i, got.Name, names[i])
				}
				def, ok := srv.tools.reg.Lookup(got.Name)
				if !ok {
					t.Fatalf("tools/list has %q, the registry does not", got.Name)
				}
				if got.Description != def.Description {
					t.Errorf("%s: description %q, want the tools package's %q", got.Name, got.Description, def.Description)
				}
				if !sameJSON(t, got.InputSchema, def.Parameters) {
					s, _ := json.Marshal(got.InputSchema)
					t.Errorf("%s: input schema %s, want the tools package's %s", got.Name, s, def.Parameters)
				}
				if def.OutputSchema != nil && !sameJSON(t, got.OutputSchema, def.OutputSchema) {
					s, _ := json.Marshal(got.OutputSchema)
					t.Errorf("%s: output schema %s, want the tools package's %s", got.Name, s, def.OutputSchema)
				}
				if !persistent && got.OutputSchema == nil {
					t.Errorf("%s: no output schema: its facts travel as structuredContent", got.Name)
				}
				a := want[got.Name]
				if got.Title != a.Title {
					t.Errorf("%s: title %q, want %q", got.Name, got.Title, a.Title)
				}
				if got.Annotations == nil || !reflect.DeepEqual(*got.Annotations, a) {
					g, _ := json.Marshal(got.Annotations)
					w, _ := json.Marshal(a)
					t.Errorf("%s: annotations %s, want %s", got.Name, g, w)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// sameJSON reports whether a (any value) and b (JSON text) are the same JSON value.
func sameJSON(t *testing.T, a any, b json.RawMessage) bool {
	t.Helper()
	ab, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var av, bv any
	if err := json.Unmarshal(ab, &av); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &bv); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(av, bv)
}

// TestInitialize checks what the server announces: tools only (no logging capability), and the
// prompt hint as instructions.
func TestInitialize(t *testing.T) {
	srv := testServer(t, config{})
	c := connect(t, srv)
	init := c.cs.InitializeResult()
	if init.ServerInfo == nil || init.ServerInfo.Name != "dsh" {
		t.Errorf("server info %+v, want name dsh", init.ServerInfo)
	}
	caps := init.Capabilities
	//lint:ignore SA1019 the test checks that the deprecated logging capability is not announced
	if caps == nil || caps.Tools == nil || caps.Logging != nil || caps.Prompts != nil || caps.Resources != nil {
		b, _ := json.Marshal(caps)
		t.Errorf("capabilities %s, want tools only", b)
	}
	if !strings.Contains(init.Instructions, "[exit code: N]") {
		t.Errorf("instructions %q do not tell the model to check the exit marker", init.Instructions)
	}
}

// TestForeground runs the one-shot bash tool through the protocol: output, markers and errors
// come back as the tools package renders them.
func TestForeground(t *testing.T) {
	srv := testServer(t, config{})
	c := connect(t, srv)
	if err := os.Mkdir(filepath.Join(srv.tools.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    string
		want    string // whole text, or a regexp when it starts with ^
		isError bool
	}{
		{"stdout", bashArgs("echo hello", nil), "hello\n", false},
		{"no output", bashArgs("true", nil), "(no output)", false},
		{"stderr section", bashArgs("echo out; echo err >&2", nil), "out\n[stderr]\nerr\n", false},
		{"exit code", bashArgs("echo bad; exit 3", nil), "bad\n[exit code: 3]", false},
		{"signal", bashArgs("kill -KILL $$", nil), "(no output)\n[killed by signal: SIGKILL]", false},
		{"timeout", bashArgs("echo started; sleep 30", map[string]any{"timeoutMs": 300}), "^started\n\\[timed out after 300ms\\]\n\\[killed by signal: SIGTERM\\]$", false},
		{"workdir", bashArgs("pwd", map[string]any{"workdir": "/"}), "/\n", false},
		{"default workdir", bashArgs("pwd", nil), srv.tools.dir + "\n", false},
		{"relative workdir", bashArgs("pwd", map[string]any{"workdir": "sub"}), srv.tools.dir + "/sub\n", false},
		{"missing workdir", bashArgs("pwd", map[string]any{"workdir": "nowhere"}), "^Error: .*nowhere", true},
		{"missing field", `{"command":"ls"}`, `Error: invalid arguments: missing required property "description"`, true},
		{"wrong types", `{"command":["ls"],"description":1,"timeoutMs":"5"}`, `Error: invalid arguments: "command" must be a string; "description" must be a string; "timeoutMs" must be a number`, true},
		{"not an object", `"ls"`, `Error: invalid arguments: "arguments" must be an object`, true},
		{"no arguments", ``, `Error: invalid arguments: missing required property "command"; missing required property "description"`, true},
		{"blank command", bashArgs("   ", nil), "Error: invalid command: expected a non-empty string", true},
		{"bad timeout", bashArgs("true", map[string]any{"timeoutMs": -1}), "Error: invalid timeoutMs: expected a positive number, got -1", true},
		{"extra keys ignored", `{"command":"echo ${SMUGGLED:-none}","description":"d","env":{"SMUGGLED":"yes"}}`, "none\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.call("bash", tt.args)
			got := text(res)
			if strings.HasPrefix(tt.want, "^") {
				if !regexp.MustCompile(tt.want).MatchString(got) {
					t.Errorf("text %q, want match for %s", got, tt.want)
				}
			} else if got != tt.want {
				t.Errorf("text %q, want %q", got, tt.want)
			}
			if res.IsError != tt.isError {
				t.Errorf("isError %v, want %v", res.IsError, tt.isError)
			}
		})
	}
}

// TestUnknownTool checks that a call to a name the server does not have is a protocol error
// naming it, and that the session goes on.
func TestUnknownTool(t *testing.T) {
	srv := testServer(t, config{})
	c := connect(t, srv)
	_, err := c.callErr(context.Background(), "rm_rf", `{}`)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, `unknown tool "rm_rf"`) {
		t.Errorf("error %v, want invalid params: unknown tool \"rm_rf\"", err)
	}
	if got := c.bash("echo still here"); got != "still here\n" {
		t.Errorf("after the error: %q", got)
	}
}

var startedRE = regexp.MustCompile(`^started background task (\S+)$`)

// startBackground starts command as a background task and returns its id.
func (c *client) startBackground(command string) string {
	c.t.Helper()
	res := c.call("bash", bashArgs(command, map[string]any{"run_in_background": true}))
	m := startedRE.FindStringSubmatch(text(res))
	if res.IsError || m == nil {
		c.t.Fatalf("start %q: %q", command, text(res))
	}
	return m[1]
}

func taskArgs(id string) string { return `{"task_id":"` + id + `"}` }

// TestBackgroundTask starts a task, polls its output, kills it and reads its final status.
func TestBackgroundTask(t *testing.T) {
	srv := testServer(t, config{})
	c := connect(t, srv)
	pidFile := filepath.Join(t.TempDir(), "pid")
	id := c.startBackground("echo first; echo $$ > " + pidFile + "; exec sleep 300")
	pid := readPID(t, pidFile)

	var out strings.Builder
	if !eventually(10*time.Second, func() bool {
		res := c.call("bash_output", taskArgs(id))
		if res.IsError {
			t.Fatalf("bash_output: %q", text(res))
		}
		out.WriteString(text(res))
		return strings.Contains(out.String(), "first\n")
	}) {
		t.Fatalf("bash_output never showed the first line: %q", out.String())
	}
	if !strings.Contains(out.String(), "[status: running]") {
		t.Errorf("polls %q do not report the task running", out.String())
	}
	if got := text(c.call("bash_output", taskArgs(id))); got != "(no new output)\n[status: running]" {
		t.Errorf("second poll %q, want no new output and running", got)
	}
	if got := text(c.call("bash_kill", taskArgs(id))); got != "killed background task "+id+" [status: killed by SIGTERM]" {
		t.Errorf("bash_kill: %q", got)
	}
	if alive(pid) { // no waiting: bash_kill returns once the process is gone
		t.Errorf("process %d still alive when bash_kill returned", pid)
	}
	task, _ := srv.tools.ex.Get(bash.TaskID(id))
	<-task.Done() // the kill notice is queued before Done closes
	// bash_kill's result showed the task ended: the notice, stale, is not delivered.
	res := c.call("bash_output", taskArgs(id))
	want := []string{"(no new output)\n[status: killed by SIGTERM]"}
	if got := texts(res); !reflect.DeepEqual(got, want) {
		t.Errorf("after kill: %q, want %q", got, want)
	}
	if got := text(c.call("bash_kill", taskArgs(id))); !strings.Contains(got, "task "+id+" had already finished") {
		t.Errorf("second bash_kill: %q", got)
	}
	if res := c.call("bash_output", taskArgs("bash-999")); !res.IsError || text(res) != `Error: unknown bash task "bash-999"` {
		t.Errorf("unknown task: isError %v %q", res.IsError, text(res))
	}
	if res := c.call("bash_kill", `{"task_id":7}`); !res.IsError || text(res) != `Error: invalid arguments: "task_id" must be a string` {
		t.Errorf("bad task_id: isError %v %q", res.IsError, text(res))
	}
}

// TestCompletionNotice checks that a finished task's notice comes first in the session's next
// result, as a block of its own, exactly once.
func TestCompletionNotice(t *testing.T) {
	srv := testServer(t, config{})
	c := connect(t, srv)
	id := c.startBackground("echo done; exit 4")
	task, ok := srv.tools.ex.Get(bash.TaskID(id))
	if !ok {
		t.Fatalf("task %s not in the executor", id)
	}
	select {
	case <-task.Done(): // listeners (the notice) have run before Done closes
	case <-time.After(10 * time.Second):
		t.Fatal("task did not finish")
	}
	res := c.call("bash", bashArgs("echo next", nil))
	want := []string{"background bash task " + id + " finished [status: completed, exit code: 4]. Read its output with bash_output.\n", "next\n"}
	if got := texts(res); !reflect.DeepEqual(got, want) {
		t.Errorf("next result blocks %q, want %q", got, want)
	}
	if got := texts(c.call("bash", bashArgs("echo again", nil))); !reflect.DeepEqual(got, []string{"again\n"}) {
		t.Errorf("the notice came twice: %q", got)
	}
	if got := text(c.call("bash_output", taskArgs(id))); got != "done\n\n[status: completed, exit code: 4]" {
		t.Errorf("bash_output after the notice: %q", got)
	}
}

// TestNoticeOnErrorResult checks that a queued notice is delivered even when the next result is
// a tool error, without changing the error.
func TestNoticeOnErrorResult(t *testing.T) {
	srv := testServer(t, config{})
	c := connect(t, srv)
	id := c.startBackground("true")
	task, _ := srv.tools.ex.Get(bash.TaskID(id))
	<-task.Done()
	res := c.call("bash", `{}`)
	ts := texts(res)
	if !res.IsError || len(ts) != 2 || !strings.HasPrefix(ts[0], "background bash task "+id+" finished") || !strings.HasPrefix(ts[1], "Error: invalid arguments") {
		t.Errorf("isError %v, blocks %q", res.IsError, ts)
	}
}

// TestSessionsIsolated checks that a session cannot read or kill another session's task and
// never gets its notices, while the owner can.
func TestSessionsIsolated(t *testing.T) {
	srv := testServer(t, config{})
	a, b := connect(t, srv), connect(t, srv)
	id := a.startBackground("echo secret; sleep 300")
	for _, tool := range []string{"bash_output", "bash_kill"} {
		res := b.call(tool, taskArgs(id))
		if !res.IsError || text(res) != "Error: task "+id+" belongs to another session" {
			t.Errorf("%s from another session: isError %v %q", tool, res.IsError, text(res))
		}
	}
	if got := text(a.call("bash_output", taskArgs(id))); strings.Contains(got, "belongs to another session") {
		t.Errorf("owner refused: %q", got)
	}
	if got := text(a.call("bash_kill", taskArgs(id))); got != "killed background task "+id+" [status: killed by SIGTERM]" {
		t.Errorf("owner's kill: %q", got)
	}
	task, _ := srv.tools.ex.Get(bash.TaskID(id))
	<-task.Done()
	if got := texts(b.call("bash", bashArgs("true", nil))); len(got) != 1 {
		t.Errorf("the other session got blocks %q, want only its result", got)
	}
	// The kill's result showed the task ended: its notice is stale and not delivered.
	if got := texts(a.call("bash", bashArgs("true", nil))); len(got) != 1 {
		t.Errorf("the owner got blocks %q, want only its result: bash_kill already said the task ended", got)
	}
}

// TestDisconnectKillsTasks checks that a client that disconnects takes its background tasks
// with it, and only its own.
func TestDisconnectKillsTasks(t *testing.T) {
	srv := testServer(t, config{})
	a, b := connect(t, srv), connect(t, srv)
	dir := t.TempDir()
	a.startBackground("echo $$ > " + filepath.Join(dir, "a") + "; exec sleep 300")
	idB := b.startBackground("echo $$ > " + filepath.Join(dir, "b") + "; exec sleep 300")
	pidA, pidB := readPID(t, filepath.Join(dir, "a")), readPID(t, filepath.Join(dir, "b"))
	if err := a.cs.Close(); err != nil {
		t.Fatal(err)
	}
	if !waitGone(pidA) {
		t.Errorf("task of the closed session (pid %d) is still alive", pidA)
	}
	if !alive(pidB) {
		t.Errorf("task of the other session (pid %d) was killed", pidB)
	}
	if got := text(b.call("bash_kill", taskArgs(idB))); got != "killed background task "+idB+" [status: killed by SIGTERM]" {
		t.Errorf("other session after the disconnect: %q", got)
	}
	if !waitGone(pidB) {
		t.Errorf("pid %d survived bash_kill", pidB)
	}
}

// TestClientVanishesMidCall checks that a client that disconnects during a foreground call
// stops the command, and the server keeps serving the other session.
func TestClientVanishesMidCall(t *testing.T) {
	srv := testServer(t, config{})
	a, pipe := connectRaw(t, srv)
	b := connect(t, srv)
	dir := t.TempDir()
	a.startBackground("echo $$ > " + filepath.Join(dir, "bg") + "; exec sleep 300")
	pidFile := filepath.Join(dir, "fg")
	errc := make(chan error, 1)
	go func() {
		_, err := a.callErr(context.Background(), "bash", bashArgs("echo $$ > "+pidFile+"; exec sleep 300", nil))
		errc <- err
	}()
	pid := readPID(t, pidFile)
	bg := readPID(t, filepath.Join(dir, "bg"))
	_ = pipe.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("the vanished client's call returned a result")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the vanished client's call did not return")
	}
	if !waitGone(pid) {
		t.Errorf("foreground command (pid %d) of the vanished client is still alive", pid)
	}
	if !waitGone(bg) {
		t.Errorf("background task (pid %d) of the vanished client is still alive", bg)
	}
	if got := b.bash("echo alive"); got != "alive\n" {
		t.Errorf("other session: %q", got)
	}
}

// TestCancelledCall checks that a client cancelling its request stops the command.
func TestCancelledCall(t *testing.T) {
	checkCancelStops(t, connect(t, testServer(t, config{})))
}

// checkCancelStops cancels a call of c while its command runs and checks that the call ends
// with context.Canceled, that the command is gone, and that the session still serves calls.
func checkCancelStops(t *testing.T, c *client) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.callErr(ctx, "bash", bashArgs("echo $$ > "+pidFile+"; exec sleep 300", nil))
		errc <- err
	}()
	pid := readPID(t, pidFile)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	if !waitGone(pid) {
		t.Errorf("the command of the cancelled call (pid %d) is still alive", pid)
	}
	if got := c.bash("echo next"); got != "next\n" {
		t.Errorf("after the cancel: %q", got)
	}
}

// TestServerClose checks that closing the server kills the tasks and foreground commands of
// every session and ends the sessions.
func TestServerClose(t *testing.T) {
	srv := testServer(t, config{})
	a, b := connect(t, srv), connect(t, srv)
	dir := t.TempDir()
	a.startBackground("echo $$ > " + filepath.Join(dir, "bg") + "; exec sleep 300")
	errc := make(chan error, 1)
	go func() {
		_, err := b.callErr(context.Background(), "bash", bashArgs("echo $$ > "+filepath.Join(dir, "fg")+"; exec sleep 300", nil))
		errc <- err
	}()
	bg, fg := readPID(t, filepath.Join(dir, "bg")), readPID(t, filepath.Join(dir, "fg"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	for _, pid := range []int{bg, fg} {
		if alive(pid) {
			t.Errorf("pid %d alive after close", pid)
		}
	}
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight did not end")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("close took %v", d)
	}
	if _, err := a.callErr(context.Background(), "bash", bashArgs("true", nil)); err == nil {
		t.Error("a session still answers after close")
	}
	st, _ := mcp.NewInMemoryTransports()
	if _, err := srv.connect(context.Background(), st); !errors.Is(err, errServerClosed) {
		t.Errorf("connect after close: %v", err)
	}
}

// TestPersistent runs the persistent bash over MCP: state carries over within a session, not
// across sessions, and a session's shell dies with it.
func TestPersistent(t *testing.T) {
	srv := testServer(t, config{Persistent: true})
	a, b := connect(t, srv), connect(t, srv)
	dir := t.TempDir()
	if got := a.bash("cd " + dir + " && export MARK=a"); got != "" {
		t.Errorf("cd: %q, want no text", got)
	}
	if got := a.bash("pwd; echo $MARK"); got != dir+"\na" {
		t.Errorf("session a after cd: %q, want %s and a", got, dir)
	}
	if got := b.bash("echo ${MARK:-unset}; pwd"); strings.Contains(got, dir) || !strings.HasPrefix(got, "unset") {
		t.Errorf("session b sees session a's state: %q", got)
	}
	if got := text(a.call("bash", `{"command":"false"}`)); !strings.Contains(got, "[exit code: 1]") {
		t.Errorf("false: %q", got)
	}
	if res := a.call("bash", `{"command":5}`); !res.IsError || text(res) != `Error: invalid arguments: "command" must be a string` {
		t.Errorf("wrong type: isError %v %q", res.IsError, text(res))
	}
	pidA, err := strconv.Atoi(strings.TrimSpace(a.bash("echo $$")))
	if err != nil {
		t.Fatal(err)
	}
	pidB, err := strconv.Atoi(strings.TrimSpace(b.bash("echo $$")))
	if err != nil {
		t.Fatal(err)
	}
	if pidA == pidB {
		t.Fatalf("both sessions share shell %d", pidA)
	}
	if err := a.cs.Close(); err != nil {
		t.Fatal(err)
	}
	if !waitGone(pidA) {
		t.Errorf("shell %d of the closed session is still alive", pidA)
	}
	if !alive(pidB) {
		t.Errorf("shell %d of the open session died", pidB)
	}
	if got := strings.TrimSpace(b.bash("echo $$")); got != strconv.Itoa(pidB) {
		t.Errorf("session b lost its shell: %q, want %d", got, pidB)
	}
}

// TestPersistentClose checks that closing the server kills every shell.
func TestPersistentClose(t *testing.T) {
	srv := testServer(t, config{Persistent: true})
	c := connect(t, srv)
	pid, err := strconv.Atoi(strings.TrimSpace(c.bash("echo $$")))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !waitGone(pid) {
		t.Errorf("shell %d alive after close", pid)
	}
}

// TestDrainDropsStale: a notice whose news the model already has (Stale reports true when the
// next result is made) is not delivered; the others are, in order, and the queue is emptied.
func TestDrainDropsStale(t *testing.T) {
	told := false
	st := &session{}
	for _, n := range []tools.Notice{
		{Text: "one"},
		{Text: "told", Stale: func() bool { return told }},
		{Text: "fresh", Stale: func() bool { return false }},
	} {
		if err := st.inject(n); err != nil {
			t.Fatal(err)
		}
	}
	told = true
	var got []string
	for _, n := range st.drain() {
		got = append(got, n.Text)
	}
	if want := []string{"one", "fresh"}; !reflect.DeepEqual(got, want) {
		t.Errorf("drained %q, want %q", got, want)
	}
	if again := st.drain(); len(again) != 0 {
		t.Errorf("second drain %d notices, want none", len(again))
	}
}

// TestToMCP checks the conversion of results and notices.
func TestToMCP(t *testing.T) {
	tests := []struct {
		name    string
		notices []tools.Notice
		res     tools.Result
		want    []string
	}{
		{"plain", nil, tools.Text("x"), []string{"x"}},
		{"empty", nil, tools.Result{}, []string{}},
		{"notices", []tools.Notice{{Text: "one"}, {Text: "two"}}, tools.Text("x"), []string{"one\ntwo\n", "x"}},
		{"error", []tools.Notice{{Text: "n"}}, tools.ErrorResult(errors.New("bad")), []string{"n\n", "Error: bad"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toMCP(tt.notices, tt.res)
			if g := texts(got); !reflect.DeepEqual(g, tt.want) && !(len(g) == 0 && len(tt.want) == 0) {
				t.Errorf("blocks %q, want %q", g, tt.want)
			}
			if got.Content == nil {
				t.Error("nil content (marshals as null)")
			}
			if got.IsError != tt.res.IsError {
				t.Errorf("isError %v", got.IsError)
			}
		})
	}
}

// TestToolListChanged checks that a tool registered or removed while sessions are connected
// reaches them: the server announces listChanged, each session gets
// notifications/tools/list_changed, and its next tools/list (and a call) sees the change.
func TestToolListChanged(t *testing.T) {
	srv := testServer(t, config{})
	if caps := connect(t, srv).cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("tools capability %+v: listChanged not announced", caps.Tools)
	}
	var sessions []*mcp.ClientSession
	var changed []chan struct{}
	for range 2 {
		ch := make(chan struct{}, 8)
		opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { ch <- struct{}{} }}
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.connect(t.Context(), st); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "dsh-test", Version: "v0"}, opts).Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		sessions, changed = append(sessions, cs), append(changed, ch)
	}
	names := func(cs *mcp.ClientSession) []string {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	waitAll := func(what string) {
		for i, ch := range changed {
			select {
			case <-ch:
			case <-time.After(10 * time.Second):
				t.Fatalf("session %d got no tools/list_changed after %s", i, what)
			}
		}
	}
	extra, err := tools.New("extra", "An extra tool.", func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.Text("extra ran"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	unregister, err := srv.tools.reg.Register(extra)
	if err != nil {
		t.Fatal(err)
	}
	waitAll("a registration")
	for _, cs := range sessions {
		if got := names(cs); !slices.Contains(got, "extra") || !slices.Contains(got, "bash") {
			t.Fatalf("tools/list after the registration: %v", got)
		}
	}
	res, err := sessions[0].CallTool(t.Context(), &mcp.CallToolParams{Name: "extra", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != "extra ran" {
		t.Fatalf("calling the new tool: %+v, %v", res, err)
	}
	unregister()
	waitAll("a removal")
	for _, cs := range sessions {
		if got := names(cs); slices.Contains(got, "extra") {
			t.Fatalf("tools/list after the removal: %v", got)
		}
	}
}
