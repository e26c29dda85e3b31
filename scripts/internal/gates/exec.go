package gates

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// drainGrace is how long the output pipes may stay open after a gate's
// process group has been killed: only a descendant that left the group
// (setsid) can hold them that long, and its output is not worth a hang.
const drainGrace = 2 * time.Second

// Executor runs gates as real child processes, each in its own process
// group, and can forward a signal to every running group. Its Run method
// is an [ExecFunc]. It is safe for concurrent use.
type Executor struct {
	// Stdout and Stderr receive the output of streamed gates, one write
	// at a time.
	Stdout, Stderr io.Writer
	// NewOutput makes the buffer for a gate; [NewOutput] when nil.
	NewOutput func() *Output

	mu      sync.Mutex
	groups  map[int]bool // process group IDs of running gates
	signals []os.Signal  // signals forwarded so far, replayed to late starters
	wmu     sync.Mutex   // serialises streamed writes
}

// Signal sends sig to the process group of every running gate, and to any
// gate that starts afterwards. It is how doc-sync forwards SIGINT and
// SIGTERM.
func (e *Executor) Signal(sig os.Signal) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.signals = append(e.signals, sig)
	for pgid := range e.groups {
		signalGroup(pgid, sig)
	}
}

// Run starts g, waits for it and for every process left in its group
// (which it kills), and returns the result. The gate passes on exit 0 with
// no signal. Nothing of the gate outlives Run, except a descendant that
// moved itself to another session.
func (e *Executor) Run(g Gate) Result {
	start := time.Now()
	r := Result{Gate: g, Status: Failed, ExitCode: -1}
	path := g.Path
	if path == "" {
		if len(g.Args) == 0 {
			r.Err = errors.New("failed to start command: no command")
			return r
		}
		p, err := exec.LookPath(g.Args[0])
		if err != nil {
			r.Err = fmt.Errorf("failed to start command: %w", err)
			return r
		}
		path = p
	}
	var out *Output
	var stdout, stderr io.Writer
	if g.Stream {
		stdout = &lockedWriter{&e.wmu, e.Stdout}
		stderr = &lockedWriter{&e.wmu, e.Stderr}
	} else {
		if e.NewOutput != nil {
			out = e.NewOutput()
		} else {
			out = NewOutput()
		}
		r.Output = out
		stdout, stderr = out.Writer(Stdout), out.Writer(Stderr)
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		r.Err = fmt.Errorf("failed to start command: %w", err)
		return r
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		r.Err = fmt.Errorf("failed to start command: %w", err)
		return r
	}
	args := g.Args
	if len(args) == 0 {
		args = []string{path}
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        args,
		Dir:         g.Dir,
		Env:         append(os.Environ(), g.Env...),
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: newGroupAttr(),
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		r.Err = fmt.Errorf("failed to start command: %w", err)
		r.Duration = time.Since(start)
		return r
	}
	pgid := cmd.Process.Pid
	e.mu.Lock()
	if e.groups == nil {
		e.groups = make(map[int]bool)
	}
	e.groups[pgid] = true
	for _, sig := range e.signals {
		signalGroup(pgid, sig)
	}
	e.mu.Unlock()

	var drain sync.WaitGroup
	drain.Go(func() { copyAll(stdout, outR) })
	drain.Go(func() { copyAll(stderr, errR) })

	// Wait for the leader to exit without reaping it, so its PID (the
	// group ID) cannot be reused while the rest of the group is killed.
	// Where that wait is not available, reap first and kill right after.
	var waitErr error
	exited := waitExited(pgid)
	if !exited {
		waitErr = cmd.Wait()
	}
	e.mu.Lock()
	delete(e.groups, pgid)
	signalGroup(pgid, syscall.SIGKILL)
	e.mu.Unlock()
	if exited {
		waitErr = cmd.Wait()
	}

	drained := make(chan struct{})
	go func() { drain.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		outR.Close() // unblocks the readers
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()

	r.Duration = time.Since(start)
	st := cmd.ProcessState
	if st == nil {
		r.Err = waitErr
		return r
	}
	r.ExitCode = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Signal = signalName(ws.Signal())
	}
	if r.ExitCode == 0 && r.Signal == "" {
		r.Status = Passed
	}
	return r
}

func copyAll(w io.Writer, r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
