// Package proc starts one bash process in its own session and process group, collects its output,
// and stops its whole tree: SIGTERM, then SIGKILL after a grace period, including descendants that
// left the group (found on Linux through an environment tag every descendant inherits). It never
// decides why a process was stopped; the executor does.
package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TagVar is the environment variable that marks every process of a tree, so that descendants
// that leave the process group (setsid, double fork) can still be found and stopped.
const TagVar = "DSH_BASH_TASK"

// PollInterval is how often a stopping tree is checked for survivors.
const PollInterval = 15 * time.Millisecond

// Options describe one process to start.
type Options struct {
	Path   string   // the bash binary
	Args   []string // argv, including argv[0]
	Dir    string
	Env    []string // the full environment; Start appends the tag
	Stdin  []byte   // nil: /dev/null; otherwise written to a socket, then closed
	Stdout io.Writer
	Stderr io.Writer
	Grace  time.Duration // TERM→KILL grace and post-exit drain bound
	Tag    string        // value of TagVar for this tree
}

// Exit holds the facts of how the leader ended.
type Exit struct {
	Code   *int
	Signal string
}

// Process is a started process tree. Its methods are safe for concurrent use.
type Process struct {
	cmd     *exec.Cmd
	tree    Tree
	grace   time.Duration
	exited  chan struct{}
	settled chan struct{}
	exit    Exit
	stop    *stopper
}

// Start starts the process described by o. Goroutines it starts (reading, writing stdin, waiting,
// stopping) are counted in wg so an owner can wait for all of them. It returns an error when the
// process cannot be started; nothing is left running then.
func Start(o Options, wg *sync.WaitGroup) (*Process, error) {
	var files []*os.File // parent-side copies of child ends, closed after start
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	files = append(files, outW, errW)
	var stdinParent *os.File
	var stdinChild *os.File
	if o.Stdin != nil {
		fds, err := socketpair()
		if err != nil {
			closeAll()
			outR.Close()
			errR.Close()
			return nil, fmt.Errorf("stdin socket: %w", err)
		}
		_ = unix.SetNonblock(fds[0], true)
		stdinParent = os.NewFile(uintptr(fds[0]), "stdin")
		stdinChild = os.NewFile(uintptr(fds[1]), "stdin-child")
		files = append(files, stdinChild)
	}
	cmd := &exec.Cmd{
		Path:        o.Path,
		Args:        o.Args,
		Dir:         o.Dir,
		Env:         append(o.Env[:len(o.Env):len(o.Env)], TagVar+"="+o.Tag),
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if stdinChild != nil {
		cmd.Stdin = stdinChild
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		outR.Close()
		errR.Close()
		if stdinParent != nil {
			stdinParent.Close()
		}
		return nil, err
	}
	closeAll()

	p := &Process{
		cmd:     cmd,
		tree:    Tree{PGID: cmd.Process.Pid, Tag: TagVar + "=" + o.Tag},
		grace:   o.Grace,
		exited:  make(chan struct{}),
		settled: make(chan struct{}),
	}
	p.stop = newStopper(&p.tree, o.Grace, p.exited, wg)

	var closeStdin func()
	if stdinParent != nil {
		var once sync.Once
		closeStdin = func() { once.Do(func() { stdinParent.Close() }) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = stdinParent.Write(o.Stdin) // EPIPE when the child does not read: expected
			closeStdin()
		}()
	}

	var readers sync.WaitGroup
	readers.Add(2)
	wg.Add(2)
	for _, pair := range []struct {
		r *os.File
		w io.Writer
	}{{outR, o.Stdout}, {errR, o.Stderr}} {
		go func() {
			defer wg.Done()
			defer readers.Done()
			copyUntilError(pair.w, pair.r)
		}()
	}

	wg.Add(1)
	go func() {
		defer wg.Done()
		err := cmd.Wait()
		p.exit = exitFacts(cmd.ProcessState, err)
		close(p.exited)
		// Settle when both pipes reach EOF, or a grace period after the leader's exit: a
		// background grandchild may hold the pipes open for as long as it lives.
		drained := make(chan struct{})
		go func() { readers.Wait(); close(drained) }()
		t := time.NewTimer(o.Grace)
		select {
		case <-drained:
			t.Stop()
		case <-t.C:
			now := time.Now()
			outR.SetReadDeadline(now)
			errR.SetReadDeadline(now)
			<-drained
		}
		outR.Close()
		errR.Close()
		if closeStdin != nil {
			closeStdin()
		}
		close(p.settled)
	}()
	return p, nil
}

func copyUntilError(w io.Writer, r io.Reader) {
	buf := make([]byte, 64*1024)
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

func exitFacts(ps *os.ProcessState, err error) Exit {
	if ps == nil {
		return Exit{}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Signal: unix.SignalName(ws.Signal())}
	}
	code := ps.ExitCode()
	return Exit{Code: &code}
}

// PID returns the leader's process id, which is also the process group id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the leader has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Settled is closed once the leader has exited and output collection has ended.
func (p *Process) Settled() <-chan struct{} { return p.settled }

// Exit returns how the leader ended. It is valid once Exited is closed.
func (p *Process) Exit() Exit {
	<-p.exited
	return p.exit
}

// Terminate starts stopping the tree: SIGTERM now, SIGKILL after the grace period if anything is
// left. It returns at once and is idempotent: a second call does not restart the grace period.
func (p *Process) Terminate() { p.stop.terminate() }

// ForceKill sends SIGKILL to whatever is left of the tree now, without grace.
func (p *Process) ForceKill() { p.stop.forceKill() }

// Gone reports whether the tree has been observed gone. Once it has, nothing is ever signalled
// again through this process, since its ids may be reused.
func (p *Process) Gone() bool { return p.stop.isGone() }

// StillAlive checks now whether any member of the tree is alive, marking the tree gone when not.
func (p *Process) StillAlive() bool { return p.stop.check() }

// GroupAlive reports whether the process group still has members (zombies included). It is one
// system call, cheap enough for every run; descendants that left the group are not seen.
func (p *Process) GroupAlive() bool {
	if p.stop.isGone() {
		return false
	}
	return !errors.Is(unix.Kill(-p.tree.PGID, 0), unix.ESRCH)
}

// Stopped is closed once a Terminate or ForceKill has seen the whole tree gone.
func (p *Process) Stopped() <-chan struct{} { return p.stop.stopped }

// Tree identifies the processes of one task: the members of a process group and every process
// carrying a tag in its environment (or, with Prefix, a tag starting with Tag).
type Tree struct {
	PGID   int    // 0: no group
	Tag    string // "NAME=value" environment entry
	Prefix bool
}

// members returns the live (not zombie) processes of the tree that are outside its group, and
// whether anything of the tree is alive at all.
func (t *Tree) scan(collect bool) (alive bool, outside []Stat) {
	groupAlive := false
	if t.PGID > 0 {
		err := unix.Kill(-t.PGID, 0)
		groupAlive = !errors.Is(err, unix.ESRCH)
	}
	if !procAvailable {
		return groupAlive, nil
	}
	self := os.Getpid()
	ok := Scan(func(st Stat) bool {
		if st.Dead() || st.PID == self {
			return true
		}
		if t.PGID > 0 && st.PGRP == t.PGID {
			alive = true
			return collect
		}
		if t.Tag != "" && HasEnv(st.PID, t.Tag, t.Prefix) {
			alive = true
			if collect {
				outside = append(outside, st)
			}
			return collect
		}
		return true
	})
	if !ok {
		return groupAlive, nil
	}
	return alive, outside
}

// signal sends sig to the tree and returns the members it found outside the group.
func (t *Tree) signal(sig unix.Signal) []Stat {
	if t.PGID > 0 {
		_ = unix.Kill(-t.PGID, sig)
	}
	_, outside := t.scan(true)
	for _, st := range outside {
		signalExact(st, sig)
	}
	return outside
}

// stopper runs the TERM→grace→KILL escalation of one tree.
type stopper struct {
	tree   *Tree
	grace  time.Duration
	leader <-chan struct{} // closed once the leader is reaped; nil when there is no leader
	wg     *sync.WaitGroup

	mu         sync.Mutex
	escaped    []Stat // members seen outside the group, reaped once gone if they are our children
	emptyScans int    // consecutive scans that found nothing alive
	started    bool
	gone       bool
	force      chan struct{}
	forced     bool
	stopped    chan struct{}
}

func newStopper(tree *Tree, grace time.Duration, leader <-chan struct{}, wg *sync.WaitGroup) *stopper {
	return &stopper{tree: tree, grace: grace, leader: leader, wg: wg,
		force: make(chan struct{}), stopped: make(chan struct{})}
}

// NewSweep returns a stopper-backed handle for every process carrying a tag that starts with
// tagPrefix: the executor's last sweep for descendants that outlived their task's bookkeeping.
func NewSweep(tagPrefix string, grace time.Duration, wg *sync.WaitGroup) *Sweep {
	tree := &Tree{Tag: TagVar + "=" + tagPrefix, Prefix: true}
	return &Sweep{stop: newStopper(tree, grace, nil, wg)}
}

// Sweep stops every process of a tag prefix.
type Sweep struct{ stop *stopper }

// Terminate starts the escalation; see Process.Terminate.
func (s *Sweep) Terminate() { s.stop.terminate() }

// ForceKill sends SIGKILL now; see Process.ForceKill.
func (s *Sweep) ForceKill() { s.stop.forceKill() }

// Stopped is closed once nothing of the prefix is alive.
func (s *Sweep) Stopped() <-chan struct{} { return s.stop.stopped }

func (s *stopper) leaderAlive() bool {
	if s.leader == nil {
		return false
	}
	select {
	case <-s.leader:
		return false
	default:
		return true
	}
}

func (s *stopper) isGone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// check probes the tree and records when it is gone.
func (s *stopper) check() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return false
	}
	if s.leaderAlive() {
		return true
	}
	if alive, _ := s.tree.scan(false); alive {
		s.emptyScans = 0
		return true
	}
	// A process in the middle of execve can briefly show an empty environment, and so miss its
	// tag: believe the tree gone only after two scans in a row, a poll interval apart, find
	// nothing.
	s.emptyScans++
	if s.emptyScans < 2 {
		return true
	}
	s.gone = true
	// Only a task's own tree reaps: there the leader (pid == PGID) is the one direct child that
	// exec.Cmd waits for, and every other member is an escapee. A sweep by tag prefix also sees
	// the leaders of live tasks, whose exit status must be left to their exec.Cmd.
	if s.tree.PGID > 0 {
		for _, st := range s.escaped {
			reapOrphan(st, s.tree.PGID)
		}
	}
	return false
}

func (s *stopper) signal(sig unix.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.gone {
		s.escaped = append(s.escaped, s.tree.signal(sig)...)
	}
}

func (s *stopper) terminate() {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return
	}
	s.started = true
	if s.gone {
		s.mu.Unlock()
		close(s.stopped)
		return
	}
	s.mu.Unlock()
	s.wg.Add(1)
	go s.run()
}

func (s *stopper) forceKill() {
	s.terminate()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.forced {
		s.forced = true
		close(s.force)
	}
}

func (s *stopper) run() {
	defer s.wg.Done()
	defer close(s.stopped)
	s.signal(unix.SIGTERM)
	grace := time.NewTimer(s.grace)
	defer grace.Stop()
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	killed := false
	force := s.force
	leader := s.leader
	for {
		if !s.check() {
			return
		}
		select {
		case <-tick.C:
		case <-leader:
			leader = nil // closed: stop selecting on it, check now
		case <-grace.C:
			if !killed {
				killed = true
				s.signal(unix.SIGKILL)
			}
		case <-force:
			force = nil
			if !killed {
				killed = true
				s.signal(unix.SIGKILL)
			}
		}
	}
}
