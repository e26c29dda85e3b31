package toolbash

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
)

func TestKillSignal(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t, bashlocal.Config{})
	a := newSession("owner-a", t.TempDir())
	id := h.startBackground(a.agent, `trap 'echo bye; exit 0' INT; echo armed; while :; do sleep 0.05; done`)
	h.pollOutput(a.agent, id, "armed")
	if got := h.ok(a.agent, "bash_kill", `{"task_id":"`+id+`","signal":"SIGINT"}`); got != "sent SIGINT to background task "+id {
		t.Fatalf("bash_kill SIGINT = %q", got)
	}
	h.waitDone(id)
	task, _ := h.ex.Get(bash.TaskID(id))
	if code := task.ExitCode(); task.Status() != bash.TaskCompleted || code == nil || *code != 0 {
		t.Errorf("after a trapped SIGINT: %s, exit code %s; want completed, 0", task.Status(), fmtCode(code))
	}
	if got := h.ok(a.agent, "bash_kill", `{"task_id":"`+id+`","signal":"SIGINT"}`); got != "task "+id+" had already finished" {
		t.Errorf("bash_kill SIGINT of a finished task = %q", got)
	}
	if res := h.fail(a.agent, "bash_kill", `{"task_id":"`+id+`","signal":"SIGSTOP"}`); !strings.Contains(res.Text(), `invalid signal "SIGSTOP": want one of SIGINT, SIGTERM`) {
		t.Errorf("bash_kill SIGSTOP = %q", res.Text())
	}
	b := newSession("owner-b", t.TempDir())
	if res := h.fail(b.agent, "bash_kill", `{"task_id":"`+id+`","signal":"SIGINT"}`); !strings.Contains(res.Text(), "belongs to another session") {
		t.Errorf("bash_kill SIGINT from another session = %q", res.Text())
	}
}

// fmtCode renders a task's exit code: "nil" or the number.
func fmtCode(code *int) string {
	if code == nil {
		return "nil"
	}
	return strconv.Itoa(*code)
}
