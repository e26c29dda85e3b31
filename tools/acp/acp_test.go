package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/tools"
)

type cmdArgs struct {
	Command     string `json:"command"`
	Description string `json:"description"`
	Workdir     string `json:"workdir,omitempty"`
	Background  bool   `json:"background,omitempty"`
}

type readArgs struct {
	Path string `json:"path"`
}

// testRegistry holds tools covering each presentation path: a command tool with terminal
// cards, a generic presenter, a tool without presenters, and presenters that panic.
func testRegistry(t testing.TB) *tools.Registry {
	t.Helper()
	var r tools.Registry
	cmd, err := tools.New("cmd", "Run a command.",
		func(ctx context.Context, call tools.Call, a cmdArgs) (tools.Result, error) {
			if a.Command == "fail" {
				return tools.Result{}, tools.Errorf("ENOENT", "workdir missing")
			}
			return tools.Text("out of " + a.Command + "\n[exit code: 3]"), nil
		},
		tools.WithCallView(func(a cmdArgs) (tools.CallView, bool) {
			if a.Background {
				return tools.CallView{Title: a.Command, Kind: tools.KindExecute, RawInput: a.Command, Content: []tools.Content{tools.TextContent(a.Description)}}, true
			}
			return tools.CallView{Terminal: &tools.TerminalCall{Command: a.Command, Description: a.Description, Cwd: a.Workdir}}, true
		}),
		tools.WithResultView(func(a cmdArgs, res tools.Result) (tools.ResultView, bool) {
			if a.Background || res.IsError {
				return tools.ResultView{Content: []tools.Content{tools.ConsoleBlock(res.Text())}}, true
			}
			// The outcome comes from the result's facts, the output is the text before the
			// status marker, as the bash tools do.
			var facts struct {
				ExitCode *int   `json:"exitCode"`
				Signal   string `json:"signal"`
				TimedOut bool   `json:"timedOut"`
			}
			if json.Unmarshal(res.Structured, &facts) != nil {
				code := 3
				facts.ExitCode = &code
			}
			body, _, _ := strings.Cut(res.Text(), "\n[")
			return tools.ResultView{Terminal: &tools.TerminalResult{Output: body + "\n", ExitCode: facts.ExitCode, Signal: facts.Signal, TimedOut: facts.TimedOut}}, true
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	read, err := tools.New("reader", "Read a file.",
		func(ctx context.Context, call tools.Call, a readArgs) (tools.Result, error) {
			return tools.Result{Content: []tools.Content{{Type: "image", Text: "ignored"}, tools.TextContent("contents of " + a.Path)}}, nil
		},
		tools.WithCallView(func(a readArgs) (tools.CallView, bool) {
			return tools.CallView{Title: "Read " + a.Path, Kind: tools.KindRead, RawInput: map[string]string{"path": a.Path}}, true
		}),
		tools.WithResultView(func(a readArgs, res tools.Result) (tools.ResultView, bool) {
			if a.Path == "terminal" { // a terminal result for a non-terminal call: must be ignored
				return tools.ResultView{Terminal: &tools.TerminalResult{Output: "x"}}, true
			}
			return tools.ResultView{Title: "Read " + a.Path + " (done)"}, true
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []*tools.Tool{cmd, read,
		{Name: "plain", Description: "No presenters.", Parameters: json.RawMessage(`{"type":"object"}`),
			Execute: func(ctx context.Context, call tools.Call) (tools.Result, error) {
				return tools.Text("plain result"), nil
			}},
		{Name: "bash_output", Description: "No presenters either.", Parameters: json.RawMessage(`{"type":"object"}`),
			Execute: func(ctx context.Context, call tools.Call) (tools.Result, error) {
				return tools.Text("(no new output)"), nil
			}},
		{Name: "haywire", Description: "Presenters that panic.", Parameters: json.RawMessage(`{"type":"object"}`),
			Execute:       func(ctx context.Context, call tools.Call) (tools.Result, error) { return tools.Text("fine"), nil },
			PresentCall:   func(json.RawMessage) (tools.CallView, bool) { panic("call presenter bug") },
			PresentResult: func(json.RawMessage, tools.Result) (tools.ResultView, bool) { panic("result presenter bug") }},
	} {
		if _, err := r.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	return &r
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)) }

func js(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCallWithoutRegistry(t *testing.T) {
	m := NewMapper(nil, Options{})
	cases := []struct{ name, args, want string }{
		{"bash", `{"command":"ls"}`, `{"sessionUpdate":"tool_call","toolCallId":"c","title":"bash","kind":"execute","status":"in_progress","rawInput":{"command":"ls"}}`},
		{"read_file", `{"path":"a"}`, `{"sessionUpdate":"tool_call","toolCallId":"c","title":"read_file","kind":"read","status":"in_progress","rawInput":{"path":"a"}}`},
		{"edit_file", ``, `{"sessionUpdate":"tool_call","toolCallId":"c","title":"edit_file","kind":"edit","status":"in_progress","rawInput":{}}`},
		{"write", `not json`, `{"sessionUpdate":"tool_call","toolCallId":"c","title":"write","kind":"edit","status":"in_progress","rawInput":"not json"}`},
		{"search", `{}`, `{"sessionUpdate":"tool_call","toolCallId":"c","title":"search","kind":"other","status":"in_progress","rawInput":{}}`},
	}
	for _, tc := range cases {
		if got := js(t, m.Call("c", tc.name, json.RawMessage(tc.args))); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		m.Result(tools.Result{CallID: "c"})
	}
}

func TestResultWithoutRegistry(t *testing.T) {
	m := NewMapper(nil, Options{})
	m.Call("c1", "bash", nil)
	got := js(t, m.Result(tools.Result{CallID: "c1", Content: []tools.Content{tools.TextContent("a"), {Type: "image"}, tools.TextContent("b")}}))
	want := `{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[` +
		`{"type":"content","content":{"type":"text","text":"a"}},{"type":"content","content":{"type":"text","text":"b"}}]}`
	if got != want {
		t.Errorf("completed:\n got %s\nwant %s", got, want)
	}
	m.Call("c2", "bash", nil)
	got = js(t, m.Result(tools.ErrorResult(tools.Errorf("X", "boom"))))
	if !strings.Contains(got, `"status":"failed"`) || !strings.Contains(got, `"text":"Error: boom"`) {
		t.Errorf("failed: %s", got)
	}
}

func TestTerminalCardsWithoutCapability(t *testing.T) {
	m := NewMapper(testRegistry(t), Options{Dir: "/repo", Logger: quietLogger()})
	got := js(t, m.Call("t1", "cmd", json.RawMessage(`{"command":"go test ./...","description":"Run the tests"}`)))
	want := `{"sessionUpdate":"tool_call","toolCallId":"t1","title":"go test ./...","kind":"execute","status":"in_progress",` +
		`"content":[{"type":"content","content":{"type":"text","text":"Run the tests"}}],"rawInput":"go test ./..."}`
	if got != want {
		t.Errorf("call:\n got %s\nwant %s", got, want)
	}
	got = js(t, m.Result(tools.Result{CallID: "t1", Content: []tools.Content{tools.TextContent("ok\n[exit code: 3]")}}))
	want = `{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed",` +
		"\"content\":[{\"type\":\"content\",\"content\":{\"type\":\"text\",\"text\":\"```console\\nok\\n```\"}}," +
		"{\"type\":\"content\",\"content\":{\"type\":\"text\",\"text\":\"[exit code: 3]\"}}]}"
	if got != want {
		t.Errorf("result:\n got %s\nwant %s", got, want)
	}
}

// TestOutcomeWithAndWithoutTerminal checks that a completed card keeps the outcome of a command
// (exit code, signal, timeout) whether or not the client declared the terminal capability.
func TestOutcomeWithAndWithoutTerminal(t *testing.T) {
	cases := []struct {
		name, facts   string
		status        string // the status line without a terminal
		exitCode, sig string // terminal_exit with one
	}{
		{"exit 7", `{"exitCode":7}`, "[exit code: 7]", "7", "null"},
		{"exit 0", `{"exitCode":0}`, "", "0", "null"},
		{"signal", `{"signal":"SIGKILL"}`, "[killed by signal: SIGKILL]", "null", `"SIGKILL"`},
		{"timeout", `{"signal":"SIGTERM","timedOut":true}`, "[timed out]\n[killed by signal: SIGTERM]", "null", `"SIGTERM"`},
	}
	for _, tc := range cases {
		for _, terminal := range []bool{false, true} {
			m := NewMapper(testRegistry(t), Options{Dir: "/repo", TerminalOutput: terminal, Logger: quietLogger()})
			m.Call("c", "cmd", json.RawMessage(`{"command":"x","description":"X"}`))
			got := js(t, m.Result(tools.Result{CallID: "c", Content: []tools.Content{tools.TextContent("hi\n[exit code: 7]")}, Structured: json.RawMessage(tc.facts)}))
			var want string
			switch {
			case terminal:
				want = `"terminal_exit":{"exit_code":` + tc.exitCode + `,"signal":` + tc.sig + `,`
			case tc.status != "":
				st, _ := json.Marshal(tc.status)
				want = "```\"}},{\"type\":\"content\",\"content\":{\"type\":\"text\",\"text\":" + string(st) + "}}]}"
			default:
				want = "```\"}}]}"
			}
			if !strings.Contains(got, want) {
				t.Errorf("%s, terminal %v:\n got %s\nwant it to contain %s", tc.name, terminal, got, want)
			}
		}
	}
}

func TestTerminalCardsWithCapability(t *testing.T) {
	m := NewMapper(testRegistry(t), Options{Dir: "/repo", TerminalOutput: true, Logger: quietLogger()})
	cases := []struct{ workdir, cwd string }{{"", "/repo"}, {"/tmp", "/tmp"}, {"sub/dir", "/repo/sub/dir"}}
	for i, tc := range cases {
		id := string(rune('a' + i))
		args := `{"command":"make","description":"Build","workdir":"` + tc.workdir + `"}`
		got := js(t, m.Call(id, "cmd", json.RawMessage(args)))
		want := `{"sessionUpdate":"tool_call","toolCallId":"` + id + `","title":"make","kind":"execute","status":"in_progress",` +
			`"content":[{"type":"content","content":{"type":"text","text":"Build"}},{"type":"terminal","terminalId":"` + id + `"}],` +
			`"rawInput":"make","_meta":{"terminal_info":{"cwd":"` + tc.cwd + `","terminal_id":"` + id + `"}}}`
		if got != want {
			t.Errorf("call with workdir %q:\n got %s\nwant %s", tc.workdir, got, want)
		}
		got = js(t, m.Result(tools.Result{CallID: id, Content: []tools.Content{tools.TextContent("built\n[exit code: 3]")}}))
		want = `{"sessionUpdate":"tool_call_update","toolCallId":"` + id + `","status":"completed",` +
			`"_meta":{"terminal_exit":{"exit_code":3,"signal":null,"terminal_id":"` + id + `"},` +
			`"terminal_output":{"data":"built\n","terminal_id":"` + id + `"}}}`
		if got != want {
			t.Errorf("result:\n got %s\nwant %s", got, want)
		}
	}
}

func TestGenericPresentation(t *testing.T) {
	m := NewMapper(testRegistry(t), Options{Logger: quietLogger()})
	got := js(t, m.Call("r1", "reader", json.RawMessage(`{"path":"go.mod"}`)))
	want := `{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read go.mod","kind":"read","status":"in_progress","rawInput":{"path":"go.mod"}}`
	if got != want {
		t.Errorf("call:\n got %s\nwant %s", got, want)
	}
	// The view has a title and no content: the raw text content is kept, non-text dropped.
	got = js(t, m.Result(tools.Result{CallID: "r1", Content: []tools.Content{{Type: "image"}, tools.TextContent("module x")}}))
	want = `{"sessionUpdate":"tool_call_update","toolCallId":"r1","title":"Read go.mod (done)","status":"completed","content":[{"type":"content","content":{"type":"text","text":"module x"}}]}`
	if got != want {
		t.Errorf("result:\n got %s\nwant %s", got, want)
	}
}

func TestBackgroundAndErrorResultsAreGeneric(t *testing.T) {
	m := NewMapper(testRegistry(t), Options{TerminalOutput: true, Logger: quietLogger()})
	got := js(t, m.Call("b", "cmd", json.RawMessage(`{"command":"sleep 9","description":"Wait","background":true}`)))
	want := `{"sessionUpdate":"tool_call","toolCallId":"b","title":"sleep 9","kind":"execute","status":"in_progress",` +
		`"content":[{"type":"content","content":{"type":"text","text":"Wait"}}],"rawInput":"sleep 9"}`
	if got != want {
		t.Errorf("background call:\n got %s\nwant %s", got, want)
	}
	got = js(t, m.Result(tools.Text("started background task bash-1")))
	if !strings.Contains(got, `"toolCallId":""`) {
		// A result without a call id is still mapped (raw content).
		t.Errorf("result without id: %s", got)
	}
	got = js(t, m.Result(tools.Result{CallID: "b", Content: []tools.Content{tools.TextContent("started background task bash-1")}}))
	if !strings.Contains(got, "```console\\nstarted background task bash-1\\n```") {
		t.Errorf("background result: %s", got)
	}
	m.Call("e", "cmd", json.RawMessage(`{"command":"fail","description":"Fail"}`))
	got = js(t, m.Result(tools.Result{CallID: "e", IsError: true, Content: []tools.Content{tools.TextContent("Error: workdir missing")}}))
	want = `{"sessionUpdate":"tool_call_update","toolCallId":"e","status":"failed",` +
		"\"content\":[{\"type\":\"content\",\"content\":{\"type\":\"text\",\"text\":\"```console\\nError: workdir missing\\n```\"}}]}"
	if got != want {
		t.Errorf("error result:\n got %s\nwant %s", got, want)
	}
}

func TestFallbacks(t *testing.T) {
	var logs bytes.Buffer
	m := NewMapper(testRegistry(t), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	// Result with an unknown call id: raw content.
	got := js(t, m.Result(tools.Result{CallID: "ghost", Content: []tools.Content{tools.TextContent("raw")}}))
	if want := `{"sessionUpdate":"tool_call_update","toolCallId":"ghost","status":"completed","content":[{"type":"content","content":{"type":"text","text":"raw"}}]}`; got != want {
		t.Errorf("unknown id:\n got %s\nwant %s", got, want)
	}
	// Tool without presenters: generic, kind other.
	if got := js(t, m.Call("p", "plain", json.RawMessage(`{"a":1}`))); got != `{"sessionUpdate":"tool_call","toolCallId":"p","title":"plain","kind":"other","status":"in_progress","rawInput":{"a":1}}` {
		t.Errorf("no presenter: %s", got)
	}
	// Malformed args for a typed presenter: soft-validation gives the generic card.
	if got := js(t, m.Call("m", "cmd", json.RawMessage(`{"command":"ls"}`))); got != `{"sessionUpdate":"tool_call","toolCallId":"m","title":"cmd","kind":"other","status":"in_progress","rawInput":{"command":"ls"}}` {
		t.Errorf("malformed args: %s", got)
	}
	// Panicking presenters are contained and logged.
	if got := js(t, m.Call("h", "haywire", nil)); got != `{"sessionUpdate":"tool_call","toolCallId":"h","title":"haywire","kind":"other","status":"in_progress","rawInput":{}}` {
		t.Errorf("panicking call presenter: %s", got)
	}
	if got := js(t, m.Result(tools.Result{CallID: "h", Content: []tools.Content{tools.TextContent("fine")}})); !strings.Contains(got, `"text":"fine"`) {
		t.Errorf("panicking result presenter: %s", got)
	}
	if !strings.Contains(logs.String(), "call presenter bug") || !strings.Contains(logs.String(), "result presenter bug") {
		t.Errorf("panics not logged: %s", logs.String())
	}
	// A terminal result view for a call that was not a terminal card is ignored.
	m.Call("o", "reader", json.RawMessage(`{"path":"terminal"}`))
	if got := js(t, m.Result(tools.Result{CallID: "o", Content: []tools.Content{tools.TextContent("file")}})); got != `{"sessionUpdate":"tool_call_update","toolCallId":"o","status":"completed","content":[{"type":"content","content":{"type":"text","text":"file"}}]}` {
		t.Errorf("orphan terminal result: %s", got)
	}
}

func TestInflightEntryRemovedAfterResult(t *testing.T) {
	m := NewMapper(testRegistry(t), Options{Logger: quietLogger()})
	m.Call("r", "reader", json.RawMessage(`{"path":"a"}`))
	if m.Pending() != 1 {
		t.Fatalf("pending %d", m.Pending())
	}
	first := js(t, m.Result(tools.Result{CallID: "r", Content: []tools.Content{tools.TextContent("x")}}))
	second := js(t, m.Result(tools.Result{CallID: "r", Content: []tools.Content{tools.TextContent("x")}}))
	if !strings.Contains(first, `"title":"Read a (done)"`) || strings.Contains(second, `"title"`) || m.Pending() != 0 {
		t.Errorf("first %s\nsecond %s\npending %d", first, second, m.Pending())
	}
}

// logEntry is one event of a session log as a harness would persist it.
type logEntry struct {
	Call   *tools.Call   `json:"call,omitempty"`
	Result *tools.Result `json:"result,omitempty"`
}

// TestReplayEqualsLive runs a session through a registry, mapping events live as they happen
// (calls overlap: two are in flight at once), persists the log as JSON, and replays it through
// a fresh mapper: the updates must be byte-identical.
func TestReplayEqualsLive(t *testing.T) {
	for _, capable := range []bool{false, true} {
		reg := testRegistry(t)
		opts := Options{Dir: "/repo", TerminalOutput: capable, Logger: quietLogger()}
		live := NewMapper(reg, opts)
		var log []logEntry
		var liveUpdates []string
		call := func(id, name, args string) tools.Call {
			c := tools.Call{ID: id, Name: name, Args: json.RawMessage(args)}
			log = append(log, logEntry{Call: &c})
			liveUpdates = append(liveUpdates, js(t, live.Call(c.ID, c.Name, c.Args)))
			return c
		}
		result := func(c tools.Call) {
			res := reg.Execute(context.Background(), c)
			log = append(log, logEntry{Result: &res})
			liveUpdates = append(liveUpdates, js(t, live.Result(res)))
		}
		a := call("1", "cmd", `{"command":"ls","description":"List","workdir":"src"}`)
		b := call("2", "reader", `{"path":"README.md"}`)
		result(b)
		result(a)
		result(call("3", "cmd", `{"command":"fail","description":"Fail"}`))
		result(call("4", "cmd", `{"command":"sleep 1","description":"Wait","background":true}`))
		result(call("5", "plain", `{"x":[1,2]}`))
		result(call("6", "haywire", `{}`))
		result(call("7", "nope", `{"a":1}`))
		result(call("8", "cmd", `{"command":"ls"}`))
		result(call("9", "cmd", `not json`))

		data, err := json.Marshal(log)
		if err != nil {
			t.Fatal(err)
		}
		var stored []logEntry
		if err := json.Unmarshal(data, &stored); err != nil {
			t.Fatal(err)
		}
		replay := NewMapper(reg, opts)
		var replayed []string
		for _, e := range stored {
			if e.Call != nil {
				replayed = append(replayed, js(t, replay.Call(e.Call.ID, e.Call.Name, e.Call.Args)))
			} else {
				replayed = append(replayed, js(t, replay.Result(*e.Result)))
			}
		}
		if len(replayed) != len(liveUpdates) {
			t.Fatalf("capability %v: %d replayed updates, %d live", capable, len(replayed), len(liveUpdates))
		}
		for i := range replayed {
			if replayed[i] != liveUpdates[i] {
				t.Errorf("capability %v, update %d:\nlive   %s\nreplay %s", capable, i, liveUpdates[i], replayed[i])
			}
		}
		if live.Pending() != 0 || replay.Pending() != 0 {
			t.Errorf("pending after the session: live %d replay %d", live.Pending(), replay.Pending())
		}
	}
}

func TestNotificationShape(t *testing.T) {
	m := NewMapper(nil, Options{})
	got := js(t, Notification{SessionID: "s1", Update: m.Call("c", "x", json.RawMessage(`{}`))})
	if want := `{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","kind":"other","status":"in_progress","rawInput":{}}}`; got != want {
		t.Errorf("got %s", got)
	}
}

// FuzzMapper feeds arbitrary names, arguments and result text through a mapper with every kind
// of tool: it must never panic and must always produce a titled tool_call.
func FuzzMapper(f *testing.F) {
	f.Add("cmd", []byte(`{"command":"ls","description":"d"}`), "out", false)
	f.Add("reader", []byte(`{"path":"terminal"}`), "x", true)
	f.Add("haywire", []byte(`{`), "", false)
	f.Add("", []byte(``), "", true)
	reg := testRegistry(f)
	f.Fuzz(func(t *testing.T, name string, args []byte, text string, isError bool) {
		for _, capable := range []bool{false, true} {
			m := NewMapper(reg, Options{Dir: "/repo", TerminalOutput: capable, Logger: quietLogger()})
			u := m.Call("id", name, args)
			if u.Title == "" && name != "" {
				t.Fatalf("empty title for %q %q", name, args)
			}
			if !u.Kind.Valid() {
				t.Fatalf("kind %q", u.Kind)
			}
			if _, err := json.Marshal(u); err != nil {
				t.Fatalf("marshal call update: %v", err)
			}
			r := m.Result(tools.Result{CallID: "id", IsError: isError, Content: []tools.Content{tools.TextContent(text)}})
			if _, err := json.Marshal(r); err != nil {
				t.Fatalf("marshal result update: %v", err)
			}
		}
	})
}
