package bash_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsh-go/dsh/bash"
)

type taskFacts struct {
	status  bash.TaskStatus
	code    int
	hasCode bool
	signal  string
}

func factsOf(t *bash.Task) taskFacts {
	f := taskFacts{status: t.Status(), signal: t.Signal()}
	if code := t.ExitCode(); code != nil {
		f.code, f.hasCode = *code, true
	}
	return f
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func intPtr(n int) *int { return &n }

func TestNewTask(t *testing.T) {
	task, _ := bash.NewTask("bash-7", "sleep 1")
	if task.ID() != "bash-7" || task.Command() != "sleep 1" {
		t.Errorf("NewTask gave id %q, command %q; want bash-7, sleep 1", task.ID(), task.Command())
	}
	if got := factsOf(task); got != (taskFacts{status: bash.TaskRunning}) {
		t.Errorf("a new task has %+v, want running with no exit code and no signal", got)
	}
	if closed(task.Done()) {
		t.Error("a new task's Done is closed")
	}
}

func TestSettle(t *testing.T) {
	tests := []struct {
		name     string
		kill     bool // MarkKilled before Settle
		exitCode *int
		signal   string
		want     taskFacts
	}{
		{"exit 0", false, intPtr(0), "", taskFacts{bash.TaskCompleted, 0, true, ""}},
		{"exit 3", false, intPtr(3), "", taskFacts{bash.TaskCompleted, 3, true, ""}},
		{"death by a signal", false, nil, "SIGTERM", taskFacts{bash.TaskKilled, 0, false, "SIGTERM"}},
		{"never started", false, nil, "", taskFacts{bash.TaskCompleted, 0, false, ""}},
		{"killed, then SIGTERM", true, nil, "SIGTERM", taskFacts{bash.TaskKilled, 0, false, "SIGTERM"}},
		{"killed, then exit 0", true, intPtr(0), "", taskFacts{bash.TaskKilled, 0, true, ""}},
		{"killed, spawn failed", true, nil, "", taskFacts{bash.TaskKilled, 0, false, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, ctl := bash.NewTask("bash-1", "cmd")
			if tt.kill {
				if !ctl.MarkKilled() {
					t.Fatal("MarkKilled of a running task returned false")
				}
				if task.Status() != bash.TaskKilled {
					t.Fatalf("status after MarkKilled = %q, want killed", task.Status())
				}
			}
			var seen []taskFacts
			var doneInNotify bool
			ctl.Settle(tt.exitCode, tt.signal, func(got *bash.Task) {
				if got != task {
					t.Error("notify got a different *Task")
				}
				seen = append(seen, factsOf(got))
				doneInNotify = closed(got.Done())
			})
			if len(seen) != 1 {
				t.Fatalf("notify ran %d times, want once", len(seen))
			}
			if seen[0] != tt.want {
				t.Errorf("notify saw %+v, want the final facts %+v", seen[0], tt.want)
			}
			if doneInNotify {
				t.Error("Done was closed while notify ran, want it closed after")
			}
			if !closed(task.Done()) {
				t.Error("Done is not closed after Settle returned")
			}
			if got := factsOf(task); got != tt.want {
				t.Errorf("after Settle the task has %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSettleOnce(t *testing.T) {
	task, ctl := bash.NewTask("bash-1", "cmd")
	code := 3
	calls := 0
	ctl.Settle(&code, "", func(*bash.Task) { calls++ })
	code = 4 // Settle keeps its own copy
	ctl.Settle(nil, "SIGKILL", func(*bash.Task) { calls++ })
	ctl.Settle(intPtr(9), "", nil)
	if calls != 1 {
		t.Errorf("notify ran %d times over three Settle calls, want once", calls)
	}
	if got, want := factsOf(task), (taskFacts{bash.TaskCompleted, 3, true, ""}); got != want {
		t.Errorf("after three Settle calls the task has %+v, want the first call's %+v", got, want)
	}
	if ctl.MarkKilled() {
		t.Error("MarkKilled of a settled task returned true")
	}
	if task.Status() != bash.TaskCompleted {
		t.Errorf("MarkKilled changed a settled task to %q", task.Status())
	}
}

func TestMarkKilledOnce(t *testing.T) {
	task, ctl := bash.NewTask("bash-1", "cmd")
	if !ctl.MarkKilled() {
		t.Fatal("the first MarkKilled returned false")
	}
	if ctl.MarkKilled() {
		t.Error("the second MarkKilled returned true")
	}
	if closed(task.Done()) {
		t.Error("MarkKilled closed Done; only Settle does")
	}
	if code := task.ExitCode(); code != nil {
		t.Errorf("MarkKilled set exit code %d", *code)
	}
}

// TestSettleConcurrent races settlers, killers and readers (run it with -race): notify runs once,
// Done closes once, and a task some MarkKilled changed ends killed.
func TestSettleConcurrent(t *testing.T) {
	for range 50 {
		task, ctl := bash.NewTask("bash-1", "cmd")
		var notified, marked atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				switch i % 4 {
				case 0:
					ctl.Settle(intPtr(i), "", func(*bash.Task) { notified.Add(1) })
				case 1:
					if ctl.MarkKilled() {
						marked.Add(1)
					}
				case 2:
					factsOf(task)
				case 3:
					<-task.Done()
					if factsOf(task).status == bash.TaskRunning {
						t.Error("a task is running after Done closed")
					}
				}
			})
		}
		wg.Wait()
		if notified.Load() != 1 {
			t.Fatalf("notify ran %d times, want once", notified.Load())
		}
		if marked.Load() > 1 {
			t.Fatalf("MarkKilled returned true %d times, want at most once", marked.Load())
		}
		if marked.Load() == 1 && task.Status() != bash.TaskKilled {
			t.Fatalf("a task marked killed ended %q", task.Status())
		}
	}
}
