package backend

import (
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/bash"
)

// TaskTable holds the background tasks of one executor. The zero value is ready to use; its methods
// are safe for concurrent use and never call back into the executor, so a caller may hold its own
// lock while calling Add or Clear.
type TaskTable struct {
	mu     sync.Mutex // guards what follows
	nextID int
	order  []*TaskEntry
	byID   map[bash.TaskID]*TaskEntry
}

// TaskEntry is one task in a TaskTable: the handle callers see, the control its backend settles it with,
// and the collectors its output goes to. The fields are set by TaskTable.Add and never change;
// SetNote and SetStop are safe for concurrent use with reads and Kill.
type TaskEntry struct {
	// Task is the handle returned by Start, Get and List.
	Task *bash.Task
	// Control settles Task; the backend marks it killed and settles it.
	Control *bash.TaskControl
	// Stdout and Stderr collect the task's two streams; the backend seals them when it ends.
	Stdout, Stderr *Collector

	owner bash.OwnerToken

	mu      sync.Mutex // serialises reads: guards the cursors, the note and the stop function
	outNext int64
	errNext int64
	outSeen int64 // stream totals when the latest read was taken; see TaskTable.Wait
	errSeen int64
	note    string
	stop    func()

	io ioState // the task's input and signal path; see interactive.go
}

// Add registers a new task running command, owned by owner (empty when it has none) and writing to
// the collectors stdout and stderr. It issues the next id, "bash-N" counting from 1 in call order,
// and returns the entry with its Task and Control set; the task is running until its backend
// settles it.
func (t *TaskTable) Add(command string, owner bash.OwnerToken, stdout, stderr *Collector) *TaskEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nextID++
	id := bash.TaskID("bash-" + strconv.Itoa(t.nextID))
	e := &TaskEntry{owner: owner, Stdout: stdout, Stderr: stderr}
	e.Task, e.Control = bash.NewTask(id, command)
	if t.byID == nil {
		t.byID = make(map[bash.TaskID]*TaskEntry)
	}
	t.order = append(t.order, e)
	t.byID[id] = e
	return e
}

// Lookup returns the entry of task id, or a *bash.UnknownTaskError (matching bash.ErrUnknownTask)
// for an id this table never issued or has cleared.
func (t *TaskTable) Lookup(id bash.TaskID) (*TaskEntry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[id]
	if !ok {
		return nil, &bash.UnknownTaskError{ID: id}
	}
	return e, nil
}

// Get returns the handle of task id with true, or nil and false for an unknown id.
func (t *TaskTable) Get(id bash.TaskID) (*bash.Task, bool) {
	e, err := t.Lookup(id)
	if err != nil {
		return nil, false
	}
	return e.Task, true
}

// List returns the handle of every task in the table, in the order Add registered them; the slice
// is the caller's.
func (t *TaskTable) List() []*bash.Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*bash.Task, len(t.order))
	for i, e := range t.order {
		out[i] = e.Task
	}
	return out
}

// OwnerOf returns the owner token task id was added with and true, or false for an unknown id or
// a task added without an owner (the empty token).
func (t *TaskTable) OwnerOf(id bash.TaskID) (bash.OwnerToken, bool) {
	e, err := t.Lookup(id)
	if err != nil || e.owner == "" {
		return "", false
	}
	return e.owner, true
}

// Read returns what task id wrote since the previous Read of it, stdout and stderr merged with
// MergeStreams, with the omitted-byte count and the spill files of both streams; or an
// error matching bash.ErrUnknownTask. Reads of one task are serialised, so concurrent readers
// never receive the same bytes twice. A note set with SetNote is appended to the stderr section,
// on a line of its own, by the first Read after it was set, and never again.
func (t *TaskTable) Read(id bash.TaskID) (bash.TaskRead, error) {
	e, err := t.Lookup(id)
	if err != nil {
		return bash.TaskRead{}, err
	}
	return e.read(), nil
}

func (e *TaskEntry) read() bash.TaskRead {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.Stdout.ReadFrom(e.outNext)
	errs := e.Stderr.ReadFrom(e.errNext)
	e.outNext, e.errNext = out.Next, errs.Next
	e.outSeen, e.errSeen = out.Total, errs.Total
	errText := errs.Text
	if e.note != "" {
		if errText != "" && !strings.HasSuffix(errText, "\n") {
			errText += "\n"
		}
		errText += e.note + "\n"
		e.note = ""
	}
	return bash.TaskRead{
		Task:         e.Task,
		Delta:        MergeStreams(out.Text, errText),
		Lossy:        out.Omitted+errs.Omitted > 0,
		OmittedBytes: out.Omitted + errs.Omitted,
		StdoutSpill:  out.Spill,
		StderrSpill:  errs.Spill,
	}
}

func done(t *bash.Task) bool {
	select {
	case <-t.Done():
		return true
	default:
		return false
	}
}

// Unread returns how many bytes task id wrote to both streams that no Read has delivered yet
// (bash.UnreadCounter), or an error matching bash.ErrUnknownTask.
func (t *TaskTable) Unread(id bash.TaskID) (int64, error) {
	e, err := t.Lookup(id)
	if err != nil {
		return 0, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.Stdout.Total() - e.outNext + e.Stderr.Total() - e.errNext, nil
}

// Kill marks task id killed and, when that changed its status (it was running), calls the stop
// function set with SetStop, if any, and returns true. It returns false for a task that had
// already ended or been killed, and an error matching bash.ErrUnknownTask for an unknown id. The
// stop function runs on the caller's goroutine with no lock of the table held.
func (t *TaskTable) Kill(id bash.TaskID) (bool, error) {
	e, err := t.Lookup(id)
	if err != nil {
		return false, err
	}
	if !e.Control.MarkKilled() {
		return false, nil
	}
	e.mu.Lock()
	stop := e.stop
	e.mu.Unlock()
	if stop != nil {
		stop()
	}
	return true, nil
}

// Clear empties the table for Close: it marks every task killed (without calling the stop
// functions: the backend stops its processes its own way) and returns the entries in start order,
// so that the caller can wait for each Task to be done. Ids issued afterwards keep counting up.
func (t *TaskTable) Clear() []*TaskEntry {
	t.mu.Lock()
	order := t.order
	t.order, t.byID = nil, nil
	t.mu.Unlock()
	for _, e := range order {
		e.Control.MarkKilled()
	}
	return order
}

// SetNote ends the task's output with note, a one-line message such as "spawn failed: REASON":
// it seals both streams, so nothing can follow the note, and the next read appends it to its
// stderr section, once. The backend calls it as the task ends, before it settles the task, so a
// reader that has seen the task ended (its status, a listener, Done) gets the note. A later call
// replaces a note not yet delivered; an empty note clears it.
func (e *TaskEntry) SetNote(note string) {
	e.Stdout.Seal()
	e.Stderr.Seal()
	e.mu.Lock()
	e.note = note
	e.mu.Unlock()
}

// SetStop sets stop, the function TaskTable.Kill calls to stop the task's process once it has marked
// the task killed; it returns once the process tree is gone or SIGKILL has been sent to what
// outlived the grace period (bash.Executor.Kill's contract). Backends set it as soon as the
// process exists; a Kill before that only marks the task killed.
func (e *TaskEntry) SetStop(stop func()) {
	e.mu.Lock()
	e.stop = stop
	e.mu.Unlock()
}
