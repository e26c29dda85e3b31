package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ErrProgramGone is returned by Input.Write when the program closed its end of a stdin pipe.
var ErrProgramGone = errors.New("the program closed its standard input")

// eofChar is what a terminal in canonical mode takes for end-of-file at the start of a line
// (VEOF, Ctrl-D, in the default termios every pseudo-terminal starts with).
const eofChar = 0x04

// closeTimeout bounds the write of eofChar: a program that reads nothing must not make CloseInput
// hang once the terminal's input queue is full.
const closeTimeout = 2 * time.Second

// Input is the open standard input of a process started with Options.OpenStdin or Options.TTY:
// the parent's end of a pipe, or the terminal's master side. Its methods are safe for concurrent
// use; writes are serialised by lock, a one-slot channel so that a Write waiting for its turn
// still honours its context.
type Input struct {
	f        *os.File
	terminal bool
	lock     chan struct{}
}

func newInput(f *os.File, terminal bool) *Input {
	return &Input{f: f, terminal: terminal, lock: make(chan struct{}, 1)}
}

// Write writes all of p, or returns early with what was written when ctx is done (ctx's cause,
// wrapped) or the descriptor fails (ErrProgramGone for a pipe whose reader is gone).
func (in *Input) Write(ctx context.Context, p []byte) (int, error) {
	select {
	case in.lock <- struct{}{}:
	case <-ctx.Done():
		return 0, fmt.Errorf("wait for an earlier write: %w", context.Cause(ctx))
	}
	defer func() { <-in.lock }()
	return in.write(ctx, p)
}

// write is Write with the lock held. The descriptor is non-blocking and owned by the runtime
// poller, so an expired write deadline interrupts a write blocked on a full buffer.
func (in *Input) write(ctx context.Context, p []byte) (int, error) {
	stop := context.AfterFunc(ctx, func() { _ = in.f.SetWriteDeadline(time.Unix(1, 0)) })
	n, err := in.f.Write(p)
	if !stop() {
		_ = in.f.SetWriteDeadline(time.Time{})
		if err != nil {
			return n, fmt.Errorf("write: %w", context.Cause(ctx))
		}
	}
	if errors.Is(err, syscall.EPIPE) {
		return n, ErrProgramGone
	}
	return n, err
}

// Close ends the input: a pipe is closed at once (a Write blocked on it fails); on a terminal,
// after the Write in progress, Ctrl-D is written, bounded by closeTimeout.
func (in *Input) Close() error {
	if !in.terminal {
		return in.f.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_, err := in.Write(ctx, []byte{eofChar})
	return err
}

// release closes a pipe's descriptor when the process is settled; a terminal's master is closed
// with the output it also carries.
func (in *Input) release() {
	if !in.terminal {
		in.f.Close()
	}
}

// openPTY opens a pseudo-terminal of rows × cols. pty.Open leaves the master in blocking mode
// (its ioctls go through File.Fd), where neither a pending Read nor a pending Write can be
// interrupted; the master is re-made as a non-blocking descriptor the runtime poller owns, so
// read deadlines bound the drain after exit and write deadlines bound Input.Write.
func openPTY(rows, cols uint16) (master, tty *os.File, err error) {
	m, t, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("open pseudo-terminal: %w", err)
	}
	defer m.Close()
	fail := func(what string, err error) (*os.File, *os.File, error) {
		t.Close()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := pty.Setsize(t, &pty.Winsize{Rows: rows, Cols: cols}); err != nil {
		return fail("set terminal size", err)
	}
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fail("duplicate terminal master", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return fail("non-blocking terminal master", err)
	}
	return os.NewFile(uintptr(fd), m.Name()), t, nil
}

// Signal sends sig to the process group once and reports whether anything received it: false
// once the leader has exited and its group is empty. A group whose leader has exited keeps its
// id while any member lives, so the signal cannot reach a stranger that reused the number.
func (p *Process) Signal(sig syscall.Signal) (bool, error) {
	select {
	case <-p.exited:
		if !p.GroupAlive() {
			return false, nil
		}
	default:
	}
	if err := unix.Kill(-p.PID(), sig); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return false, nil
		}
		return false, fmt.Errorf("signal process group %d: %w", p.PID(), err)
	}
	return true, nil
}

// Input returns the process's open standard input, or nil when it was started without one.
func (p *Process) Input() *Input { return p.input }
