// Package proc starts one bash process in its own session and process group, collects its
// output, and stops its whole tree through internal/proctree: the soft signals, then SIGKILL after
// a grace period, including descendants that left the group (found on Linux through the tag
// every descendant inherits). It never decides why a process was stopped; the executor does.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/proclimit"
	"github.com/dsh-go/dsh/internal/proctree"
)

// Options describe one process to start.
type Options struct {
	Path  string   // the bash binary
	Args  []string // argv, including argv[0]
	Dir   string
	Env   []string // the full environment; Start appends the tag
	Stdin []byte   // nil: /dev/null; otherwise written to a socket, then closed
	// OpenStdin makes stdin a pipe that stays open (after Stdin) for Process.Input.
	OpenStdin bool
	// TTY, when set, is the {rows, cols} of a pseudo-terminal that is the process's stdin,
	// stdout and stderr (all output goes to Stdout; Stderr gets nothing) and its controlling
	// terminal; Stdin, if set, is typed into it first.
	TTY    *[2]uint16
	Stdout io.Writer
	Stderr io.Writer
	Grace  time.Duration // soft-signal→KILL grace and post-exit drain bound
	Tag    string        // value of envpolicy.TagVar for this tree
	// Confine, when set, starts the command in its sandbox instead of cmd.Start, and returns once
	// nothing outside the command shares that sandbox. Until then bash waits at a gate (see
	// gate): it runs nothing of the command before Start opens it.
	Confine func(*exec.Cmd) error
	// ProcessLimit, when positive, is the RLIMIT_NPROC the process gets (soft and hard) before it
	// runs anything of its command: bash waits at the gate until it is set.
	ProcessLimit int
}

// Exit holds the facts of how the leader ended.
type Exit struct {
	Code   *int
	Signal string
}

// Process is a started process tree. Its methods are safe for concurrent use.
type Process struct {
	cmd     *exec.Cmd
	release func() // ends the leader's record as owned, once it is reaped
	exited  chan struct{}
	settled chan struct{}
	exit    Exit
	stop    *proctree.Stopper
	input   *Input // nil without OpenStdin or TTY
}

// Start starts the process described by o. Goroutines it starts (reading, writing stdin, waiting,
// stopping) are counted in wg so an owner can wait for all of them. It returns an error when the
// process cannot be started; nothing is left running or open then.
func Start(o Options, wg *sync.WaitGroup) (p *Process, err error) {
	// Like os/exec's own Start: every descriptor is registered for closing as soon as it exists,
	// and one deferred cleanup closes the child's ends always and the parent's ends on failure.
	var childEnds, parentEnds []*os.File
	started := false
	defer func() {
		closeAll(childEnds)
		if !started {
			closeAll(parentEnds)
		}
	}()
	cmd := &exec.Cmd{
		Path:        o.Path,
		Args:        o.Args,
		Dir:         o.Dir,
		Env:         append(o.Env[:len(o.Env):len(o.Env)], envpolicy.TagVar+"="+o.Tag),
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	var outR, errR *os.File
	var input *Input
	var feed []byte // written to input first, as if typed or piped before anything else
	if o.TTY != nil {
		master, tty, err := openPTY(o.TTY[0], o.TTY[1])
		if err != nil {
			return nil, err
		}
		parentEnds, childEnds = append(parentEnds, master), append(childEnds, tty)
		// The terminal becomes the controlling terminal of the new session (Ctty is the child's
		// descriptor 0), so the program can open /dev/tty and Ctrl-C reaches its foreground group.
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
		outR, input, feed = master, newInput(master, true), o.Stdin
	} else {
		var outW, errW *os.File
		var err error
		if outR, outW, err = os.Pipe(); err != nil {
			return nil, fmt.Errorf("stdout pipe: %w", err)
		}
		parentEnds, childEnds = append(parentEnds, outR), append(childEnds, outW)
		if errR, errW, err = os.Pipe(); err != nil {
			return nil, fmt.Errorf("stderr pipe: %w", err)
		}
		parentEnds, childEnds = append(parentEnds, errR), append(childEnds, errW)
		cmd.Stdout, cmd.Stderr = outW, errW
	}
	var stdin *os.File
	switch {
	case o.TTY != nil:
	case o.OpenStdin:
		// A pipe, not the socket below: the program sees a FIFO (as from a shell pipeline), and
		// the parent's end is pollable, so a write deadline interrupts a blocked Write.
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("stdin pipe: %w", err)
		}
		cmd.Stdin = r
		parentEnds, childEnds = append(parentEnds, w), append(childEnds, r)
		input, feed = newInput(w, false), o.Stdin
	case o.Stdin != nil:
		fds, err := socketpair()
		if err != nil {
			return nil, fmt.Errorf("stdin socket: %w", err)
		}
		_ = unix.SetNonblock(fds[0], true)
		stdin = os.NewFile(uintptr(fds[0]), "stdin")
		child := os.NewFile(uintptr(fds[1]), "stdin-child")
		cmd.Stdin = child
		parentEnds, childEnds = append(parentEnds, stdin), append(childEnds, child)
	}
	start := cmd.Start
	if o.Confine != nil {
		start = func() error { return o.Confine(cmd) }
	}
	var gateW *os.File
	if o.Confine != nil || o.ProcessLimit > 0 {
		gateR, w, env, err := gate(cmd.Env)
		if err != nil {
			return nil, err
		}
		gateW = w
		parentEnds, childEnds = append(parentEnds, gateW), append(childEnds, gateR)
		cmd.ExtraFiles, cmd.Env = []*os.File{gateR}, env
	}
	if o.ProcessLimit > 0 {
		start = limited(start, cmd, o.ProcessLimit)
	}
	// Owned from before the fork until it is reaped: the executor-wide sweep (NewSweep) must never
	// take it for an escapee, nor reap it under cmd.Wait.
	release, err := proctree.StartOwned(func() (int, error) {
		if err := start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err != nil {
		return nil, err
	}
	started = true
	if gateW != nil {
		openGate(gateW, o.Env)
	}
	p = watch(cmd, release, o, wg, outR, errR, stdin, input)
	if input != nil && len(feed) > 0 {
		p.feed(feed, wg)
	}
	return p, nil
}

// watch returns the Process of cmd, just started: its stopper, and the goroutines (counted in
// wg) that feed stdin, collect stdout (outR) and stderr (errR), then wait for the leader and
// settle. release ends cmd's ownership once it is reaped.
func watch(cmd *exec.Cmd, release func(), o Options, wg *sync.WaitGroup, outR, errR, stdin *os.File, input *Input) *Process {
	p := &Process{cmd: cmd, release: release, exited: make(chan struct{}), settled: make(chan struct{}), input: input}
	pid := cmd.Process.Pid
	p.stop = proctree.NewStopper(
		proctree.Tree{Leader: pid, Group: pid, Tag: envpolicy.TagVar + "=" + o.Tag},
		proctree.StopOptions{Grace: o.Grace, LeaderExited: p.exited, Reap: true, WG: wg})
	closeStdin := func() {}
	if stdin != nil {
		closeStdin = sync.OnceFunc(func() { stdin.Close() })
		wg.Go(func() {
			_, _ = stdin.Write(o.Stdin) // EPIPE when the child does not read: expected
			closeStdin()
		})
	}
	drained := collect(outR, errR, o.Stdout, o.Stderr, wg)
	wg.Go(func() {
		p.waitAndSettle(outR, errR, drained, o.Grace)
		closeStdin()
		close(p.settled)
	})
	return p
}

// feed writes b to the process's input on a goroutine counted in wg, before any other write: it
// holds the input's lock from now on. A program that never reads does not keep it: the input's
// descriptor is closed when the process settles, which ends the write.
func (p *Process) feed(b []byte, wg *sync.WaitGroup) {
	p.input.lock <- struct{}{} // free: the process was started an instant ago
	wg.Go(func() {
		defer func() { <-p.input.lock }()
		_, _ = p.input.write(context.Background(), b)
	})
}

// limited returns start followed by setting the process's RLIMIT_NPROC to limit, while it waits
// at its gate; when the limit cannot be set, the process is killed and reaped, and the error
// returned.
func limited(start func() error, cmd *exec.Cmd, limit int) func() error {
	return func() error {
		if err := start(); err != nil {
			return err
		}
		if err := proclimit.Apply(cmd.Process.Pid, limit); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return err
		}
		return nil
	}
}

// gateFD is the descriptor bash reads its gate from: the first of cmd.ExtraFiles.
const gateFD = 3

// gate returns the pipe a bash waits on before it runs anything of its command, and env with
// BASH_ENV naming the pipe's read end: a non-interactive bash reads the file BASH_ENV names, to
// its end, before its -c command. The sandbox of a confined command is shared, while it starts,
// with the thread that started it, and a command's process limit is set after it started: the
// gate keeps the command from running until that thread is gone and that limit is set.
func gate(env []string) (r, w *os.File, gated []string, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("gate pipe: %w", err)
	}
	gated = make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "BASH_ENV=") {
			gated = append(gated, kv)
		}
	}
	return r, w, append(gated, "BASH_ENV=/dev/fd/"+strconv.Itoa(gateFD)), nil
}

// openGate lets the gated bash go on: it writes the script bash reads from the gate (close the
// gate's descriptor, put back the caller's BASH_ENV and read that file, as bash would have) and
// closes the pipe. env is the command's environment as the caller gave it.
func openGate(w *os.File, env []string) {
	script := "exec " + strconv.Itoa(gateFD) + "<&-; unset BASH_ENV\n"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "BASH_ENV="); ok {
			script = "exec " + strconv.Itoa(gateFD) + "<&-; BASH_ENV=" + shellQuote(v) +
				"; if [ -r \"$BASH_ENV\" ]; then . \"$BASH_ENV\"; fi\n"
		}
	}
	_, _ = w.WriteString(script) // a pipe buffer holds it; a bash that died first is no error
	w.Close()
}

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// collect copies both pipes to their writers until each reaches EOF or is closed, and returns a
// channel closed when both are done.
func collect(outR, errR *os.File, stdout, stderr io.Writer, wg *sync.WaitGroup) <-chan struct{} {
	var readers sync.WaitGroup
	readers.Go(func() { copyUntilError(stdout, outR) })
	if errR != nil { // nil on a terminal, which carries both streams on outR
		readers.Go(func() { copyUntilError(stderr, errR) })
	}
	drained := make(chan struct{})
	wg.Go(func() {
		readers.Wait()
		close(drained)
	})
	return drained
}

// waitAndSettle reaps the leader, then waits for both pipes to reach EOF, or a grace period after
// the leader's exit (a background grandchild may hold the pipes open for as long as it lives),
// and closes the parent's ends.
func (p *Process) waitAndSettle(outR, errR *os.File, drained <-chan struct{}, grace time.Duration) {
	err := p.cmd.Wait()
	p.release()
	p.exit = exitFacts(p.cmd.ProcessState, err)
	close(p.exited)
	t := time.NewTimer(grace)
	select {
	case <-drained:
		t.Stop()
	case <-t.C:
		now := time.Now()
		outR.SetReadDeadline(now)
		if errR != nil {
			errR.SetReadDeadline(now)
		}
		<-drained
	}
	outR.Close()
	if errR != nil {
		errR.Close()
	}
	if p.input != nil {
		p.input.release()
	}
}

// copyUntilError copies r to w until a read fails. When the read fails because waitAndSettle set
// the deadline (a grace period after the leader's exit), what the pipe already holds is still
// copied: a reader starved of CPU past the deadline must not lose output written before it.
func copyUntilError(w io.Writer, r *os.File) {
	buf := make([]byte, 64*1024)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			drainReady(w, r, buf)
		}
		if err != nil {
			return
		}
	}
}

// maxFinalDrain bounds what drainReady copies: a process still writing (an escapee holding the
// pipe) cannot keep it going, while a full pipe buffer (1 MiB at most by default) fits.
const maxFinalDrain = 1 << 20

// drainReady copies to w what r holds now, up to maxFinalDrain bytes, without waiting: the pipe is
// read directly (it is non-blocking, and an expired deadline would refuse a read through r).
func drainReady(w io.Writer, r *os.File, buf []byte) {
	rc, err := r.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		for total := 0; total < maxFinalDrain; {
			n, err := unix.Read(int(fd), buf)
			if n <= 0 || err != nil {
				return
			}
			w.Write(buf[:n])
			total += n
		}
	})
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

// Terminate starts stopping the tree: the soft signals now, SIGKILL after the grace period if
// anything is left. It returns at once and is idempotent: a second call does not restart the grace
// period.
func (p *Process) Terminate() { p.stop.Terminate() }

// Stop is Terminate that waits: it returns once the tree is gone (true) or, when something
// outlived the grace period, once SIGKILL has been sent to it (false).
func (p *Process) Stop() (gone bool) { return p.stop.Wait(nil) }

// ForceKill sends SIGKILL to whatever is left of the tree now, without grace.
func (p *Process) ForceKill() { p.stop.ForceKill() }

// Gone reports whether the tree has been observed gone.
func (p *Process) Gone() bool { return p.stop.Gone() }

// StillAlive checks now whether any member of the tree is alive, marking the tree gone when not.
func (p *Process) StillAlive() bool { return p.stop.Alive() }

// GroupAlive reports whether the process group still has members (zombies included). It is one
// system call, cheap enough for every run; descendants that left the group are not seen.
func (p *Process) GroupAlive() bool { return p.stop.GroupAlive() }

// Stopped is closed once a Terminate or ForceKill has seen the whole tree gone.
func (p *Process) Stopped() <-chan struct{} { return p.stop.Stopped() }

// NewSweep returns a stopper for every process carrying a tag that starts with tagPrefix and, with
// orphans set (the last holder of this process closes: proctree.Hold), for every orphan
// (proctree.Tree.Orphans: a child of this process, in another session, that no one here started
// and whose environment cannot be read): the executor's last sweep for descendants that outlived
// their task's bookkeeping. It reaps what it stops, never an owned process (the leaders of live
// tasks, whose exit status belongs to their exec.Cmd).
func NewSweep(tagPrefix string, orphans bool, grace time.Duration, wg *sync.WaitGroup) *proctree.Stopper {
	return proctree.NewStopper(proctree.Tree{Tag: envpolicy.TagVar + "=" + tagPrefix, TagPrefix: true, Orphans: orphans},
		proctree.StopOptions{Grace: grace, Reap: true, WG: wg})
}

// Tasks returns the number of tasks (threads) of the tree's live members now, from one scan of
// the process table; 0 once the tree is gone.
func (p *Process) Tasks() int {
	n := 0
	for _, st := range p.stop.Members() {
		n += max(1, st.Threads)
	}
	return n
}
