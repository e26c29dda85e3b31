package toolbash

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

// TestTasksListsOnlyTheCallersTasks starts tasks in two sessions and lists them from each: a
// session sees its own tasks, newest first, with their descriptions, states and unread output,
// and never another session's.
func TestTasksListsOnlyTheCallersTasks(t *testing.T) {
	h := newLocalHarness(t, bashlocal.Config{})
	a, b := &tools.Agent{Owner: "alice"}, &tools.Agent{Owner: "bob"}
	first := h.startBackground(a, "echo hello")
	h.waitDone(first)
	second := h.startBackground(a, "sleep 300")
	bobs := h.startBackground(b, "echo bob")

	text := h.ok(a, "bash_tasks", `{}`)
	want := regexp.MustCompile(`^2 background task\(s\) of this session, newest first:\n` +
		second + `  \[status: running\]  started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  unread output: 0 bytes\n  Run in background: sleep 300\n` +
		first + `  \[status: completed, exit code: 0\]  started \S+  unread output: 6 bytes\n  Run in background: echo hello$`)
	if !want.MatchString(text) {
		t.Errorf("alice's tasks:\n%s\nwant to match %s", text, want)
	}
	if strings.Contains(text, bobs) {
		t.Errorf("alice's list shows bob's task %s", bobs)
	}
	// Reading the output leaves nothing unread.
	h.ok(a, "bash_output", fmt.Sprintf(`{"task_id":%q}`, first))
	if text := h.ok(a, "bash_tasks", `{}`); !strings.Contains(text, first+"  [status: completed, exit code: 0]  started ") || !strings.HasSuffix(strings.SplitN(text, "\n", 5)[3], "unread output: 0 bytes") {
		t.Errorf("after bash_output:\n%s", text)
	}
	if text := h.ok(b, "bash_tasks", `{}`); !strings.Contains(text, bobs) || strings.Contains(text, first) || strings.Contains(text, second) {
		t.Errorf("bob's tasks:\n%s", text)
	}
	if text := h.ok(&tools.Agent{Owner: "carol"}, "bash_tasks", `{}`); text != "No background tasks in this session." {
		t.Errorf("carol's tasks: %q", text)
	}
}

// TestTasksLimitCountsOlder checks the bound: with more tasks than the limit, the newest are
// listed and the rest counted, in the text and in the facts.
func TestTasksLimitCountsOlder(t *testing.T) {
	h := newLocalHarness(t, bashlocal.Config{})
	a := &tools.Agent{Owner: "alice"}
	var ids []string
	for range 3 {
		ids = append(ids, h.startBackground(a, "true"))
	}
	res := h.call(a, "bash_tasks", `{"limit":2}`)
	var facts TaskListFacts
	if err := json.Unmarshal(res.Structured, &facts); err != nil {
		t.Fatal(err)
	}
	if len(facts.Tasks) != 2 || facts.Tasks[0].TaskID != ids[2] || facts.Tasks[1].TaskID != ids[1] || facts.Older != 1 {
		t.Errorf("facts = %+v; want %s, %s and one older", facts, ids[2], ids[1])
	}
	if !strings.HasPrefix(res.Text(), "3 background task(s)") || !strings.HasSuffix(res.Text(), "(1 older task(s) not listed)") {
		t.Errorf("text:\n%s", res.Text())
	}
}

func TestTasksBadArguments(t *testing.T) {
	h := newLocalHarness(t, bashlocal.Config{})
	for args, want := range map[string]string{
		`{"limit":"x"}`: `Error: invalid arguments: "limit" must be an integer`,
		`{"limit":0}`:   "Error: invalid limit: expected 1 to 50, got 0",
		`{"limit":51}`:  "Error: invalid limit: expected 1 to 50, got 51",
		`[]`:            "Error: invalid arguments:",
	} {
		if got := h.fail(nil, "bash_tasks", args).Text(); !strings.HasPrefix(got, want) {
			t.Errorf("bash_tasks %s = %q, want %q", args, got, want)
		}
	}
}

// TestNoBackground checks the switch that turns background execution off: only bash is
// provided, its schema and description no longer mention run_in_background, and a model that
// sends it anyway gets a foreground run.
func TestNoBackground(t *testing.T) {
	h := newHarness(t, localExecutor(t, bashlocal.Config{}), Config{NoBackground: true})
	var names []string
	for _, d := range h.reg.Declarations() {
		names = append(names, d.Name)
		if strings.Contains(string(d.Parameters), "run_in_background") || strings.Contains(d.Description, "run_in_background") {
			t.Errorf("%s still offers run_in_background", d.Name)
		}
	}
	if fmt.Sprint(names) != "[bash]" {
		t.Errorf("tools = %v, want only bash", names)
	}
	if got := h.ok(nil, "bash", `{"command":"echo fg","description":"Echo","run_in_background":true}`); got != "fg\n" {
		t.Errorf("a run_in_background call = %q; want the foreground output", got)
	}
	if len(h.ex.List()) != 0 {
		t.Error("a background task was started")
	}
}

func TestTasksPresentation(t *testing.T) {
	code := 0
	facts := TaskListFacts{Tasks: []ListedTask{{TaskID: "bash-2", Description: "Build | link", Command: "make", Status: "completed", ExitCode: &code, Started: "2026-12-02T10:00:00Z"}}, Older: 3}
	res, err := withFacts(renderTasks(facts), facts)
	if err != nil {
		t.Fatal(err)
	}
	view, ok := presentTasks(TasksArgs{}, res)
	want := "| task | status | started | description |\n|---|---|---|---|\n| bash-2 | completed, exit code: 0 | 2026-12-02T10:00:00Z | Build \\| link |\n\n3 older task(s) not listed.\n"
	if !ok || view.Title != "4 background task(s)" || len(view.Content) != 1 || view.Content[0].Text != want {
		t.Errorf("view = %+v, %v", view, ok)
	}
	if _, ok := presentTasks(TasksArgs{}, tools.Text(renderTasks(facts))); ok {
		t.Error("a list without facts was presented from its text")
	}
}

// FuzzRenderTasks checks the task-list renderer on arbitrary tasks: it never panics, the text
// is valid UTF-8 for valid input, every listed id appears once per task line, and a task's
// command or description can never add a line that starts like a task line.
func FuzzRenderTasks(f *testing.F) {
	f.Add("bash-1", "Build", "make\nmake install", "running", "", 3)
	f.Add("bash-2", "", "x", "killed", "SIGKILL", 0)
	f.Add("bash-3", "d\nbash-9  [status: running]", "ü€𝄞", "completed", "", 60)
	f.Fuzz(func(t *testing.T, id, desc, cmd, status, signal string, older int) {
		if older < 0 || older > 1000 {
			return
		}
		facts := TaskListFacts{Tasks: []ListedTask{{TaskID: id, Description: desc, Command: cmd, Status: status, Signal: signal, Started: "2026-12-02T10:00:00Z"}}, Older: older}
		text := renderTasks(facts)
		valid := true
		for _, s := range []string{id, desc, cmd, status, signal} {
			valid = valid && utf8.ValidString(s)
		}
		if valid && !utf8.ValidString(text) {
			t.Fatalf("invalid UTF-8: %q", text)
		}
		lines := strings.Split(text, "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[1], oneLine(id, 80)+"  [status: ") {
			t.Fatalf("no task line for %q: %q", id, text)
		}
		for _, l := range lines[2:] {
			if !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "(") {
				t.Fatalf("a command or description added a line %q: %q", l, text)
			}
		}
	})
}

// TestSessionFacts checks the session facts a command sees, foreground and background: the
// session id (not the owner token), the shell kind and the workspace; and that an ambient
// DSH_SESSION_ID of the harness never reaches a command.
func TestSessionFacts(t *testing.T) {
	t.Setenv("DSH_SESSION_ID", "ambient-forgery")
	dir := t.TempDir()
	h := newLocalHarness(t, bashlocal.Config{})
	a := &tools.Agent{Owner: "secret-owner-token", Session: "sess-42", Dir: dir}
	show := `echo "$DSH_SESSION_ID|$DSH_SHELL|$DSH_HOME"; env | grep -c secret-owner-token`
	if got, want := h.ok(a, "bash", fmt.Sprintf(`{"command":%q,"description":"Show"}`, show)), "sess-42|oneshot|"+dir+"\n0\n[exit code: 1]"; got != want {
		t.Errorf("foreground: %q, want %q", got, want)
	}
	id := h.startBackground(a, show)
	h.waitDone(id)
	if got := h.ok(a, "bash_output", fmt.Sprintf(`{"task_id":%q}`, id)); !strings.HasPrefix(got, "sess-42|oneshot|"+dir+"\n0\n") {
		t.Errorf("background: %q", got)
	}
	if got := h.ok(nil, "bash", `{"command":"echo \"[$DSH_SESSION_ID|$DSH_SHELL]\"","description":"Show"}`); got != "[|oneshot]\n" {
		t.Errorf("without an agent: %q", got)
	}
}
