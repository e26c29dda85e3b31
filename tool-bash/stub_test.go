package toolbash

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// stubExecutor is a scripted bash.Executor for what a real process cannot show on demand (a
// lossy read without a spill file, an infrastructure failure) and for recording exactly which
// request a tool built. It runs nothing.
type stubExecutor struct {
	mu       sync.Mutex
	requests []bash.Request
	run      bash.RunResult
	runErr   error
	startErr error
	read     bash.TaskRead
	tasks    map[bash.TaskID]*stubTask
	order    []bash.TaskID
	owners   map[bash.TaskID]bash.OwnerToken
	seq      int
	listener bash.TaskListener
}

type stubTask struct {
	task *bash.Task
	ctl  *bash.TaskControl
}

func newStub() *stubExecutor {
	return &stubExecutor{tasks: map[bash.TaskID]*stubTask{}, owners: map[bash.TaskID]bash.OwnerToken{}}
}

func (s *stubExecutor) Resolve(req bash.Request) (bash.Request, error) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	timeout := req.Timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	return bash.Request{Command: req.Command, Workdir: req.Workdir, Timeout: timeout, StdoutMaxBytes: 64000,
		Stdin: req.Stdin, Env: req.Env, Owner: req.Owner}, nil
}

func (s *stubExecutor) Run(ctx context.Context, spec bash.Request) (bash.RunResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := s.run
	res.Timeout = spec.Timeout
	return res, s.runErr
}

func (s *stubExecutor) Start(spec bash.Request) (*bash.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.startErr != nil {
		return nil, s.startErr
	}
	s.seq++
	id := bash.TaskID("bash-" + strconv.Itoa(s.seq))
	task, ctl := bash.NewTask(id, spec.Command)
	s.tasks[id] = &stubTask{task: task, ctl: ctl}
	s.order = append(s.order, id)
	if spec.Owner != "" {
		s.owners[id] = spec.Owner
	}
	return task, nil
}

// finish settles task id with the exit code (nil with a signal), calling the listener.
func (s *stubExecutor) finish(id bash.TaskID, code *int, signal string) {
	s.mu.Lock()
	t := s.tasks[id]
	l := s.listener
	s.mu.Unlock()
	t.ctl.Settle(code, signal, func(task *bash.Task) {
		if l != nil {
			l(task)
		}
	})
}

func (s *stubExecutor) Get(id bash.TaskID) (*bash.Task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return nil, false
	}
	return t.task, true
}

func (s *stubExecutor) List() []*bash.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*bash.Task
	for _, id := range s.order {
		out = append(out, s.tasks[id].task)
	}
	return out
}

func (s *stubExecutor) OwnerOf(id bash.TaskID) (bash.OwnerToken, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.owners[id]
	return o, ok
}

func (s *stubExecutor) ReadOutput(id bash.TaskID) (bash.TaskRead, error) {
	t, ok := s.Get(id)
	if !ok {
		return bash.TaskRead{}, &bash.UnknownTaskError{ID: id}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.read
	r.Task = t
	s.read = bash.TaskRead{}
	return r, nil
}

func (s *stubExecutor) Kill(id bash.TaskID) (bool, error) {
	s.mu.Lock()
	t, ok := s.tasks[id]
	s.mu.Unlock()
	if !ok {
		return false, &bash.UnknownTaskError{ID: id}
	}
	if !t.ctl.MarkKilled() {
		return false, nil
	}
	// A killed task ends, as a real one does after its signal.
	s.finish(id, nil, "SIGTERM")
	return true, nil
}

func (s *stubExecutor) OnTaskDone(listener bash.TaskListener) func() {
	s.mu.Lock()
	s.listener = listener
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.listener = nil
		s.mu.Unlock()
	}
}

func (s *stubExecutor) Close(ctx context.Context) error {
	s.mu.Lock()
	var pending []*stubTask
	for _, t := range s.tasks {
		pending = append(pending, t)
	}
	s.mu.Unlock()
	for _, t := range pending {
		t.ctl.Settle(nil, "SIGKILL", nil)
	}
	return nil
}

func (s *stubExecutor) lastRequest() bash.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return bash.Request{}
	}
	return s.requests[len(s.requests)-1]
}
