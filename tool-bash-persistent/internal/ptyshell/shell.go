package ptyshell

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/proctree"
	"github.com/dsh-go/dsh/internal/termtext"
	"golang.org/x/sys/unix"
)

// Defaults applied by Start to zero fields of Config.
const (
	DefaultRows           = 40
	DefaultCols           = 160
	DefaultMaxOutputChars = 16_000
	DefaultKillGrace      = 2 * time.Second
	// Prompt is the primary prompt. It is re-asserted before every prompt, so a command that
	// sets PS1 changes it for zero prompts; it never appears in an Output.
	Prompt = "dsh> "
)

// TagVar is the environment variable that marks every process a shell starts (the one tag
// variable of every executor in this repository). Its value is
// the harness's process id, a dash and a random id per shell; processes that leave the shell's
// session are still found by it when the shell is closed.
const TagVar = envpolicy.TagVar

// Errors returned by Run.
var (
	// ErrBusy is returned when Run is called while another Run of the same shell is active.
	ErrBusy = errors.New("the shell is already running a command")
	// ErrBroken is returned by Run after a Run of the same shell was cancelled or failed to
	// send its command: the shell may hold half a command and must be closed.
	ErrBroken = errors.New("the shell was left in an unknown state by an interrupted call; close it")
	// ErrClosed is returned by Run on a closed shell.
	ErrClosed = errors.New("the shell is closed")
)

// Config describes a shell to start.
type Config struct {
	// Bash is the bash binary; empty means "bash" looked up in PATH. It is started as
	// `bash --noprofile --rcfile SETUP -i`, where SETUP is the shell's set-up (see setupScript).
	Bash string
	// Dir is the shell's initial working directory; empty means the current one.
	Dir string
	// Env is the environment (NAME=value entries) before Start sets TERM=dumb and TagVar, and drops PS1, PS2, PROMPT_COMMAND, IGNOREEOF, HISTFILE and HISTSIZE (the
	// set-up gives them values of its own, never exported). Start does not scrub it; the
	// caller does.
	Env []string
	// Rows and Cols are the terminal size (40×160).
	Rows, Cols uint16
	// MaxOutputChars is the rune budget of one command's Output, split between head and tail
	// (16,000).
	MaxOutputChars int
	// KillGrace is how long Close waits after SIGHUP and SIGTERM before SIGKILL (2 s).
	KillGrace time.Duration
	// TagPrefix starts the value of the shell's TagVar, so that an owner of several shells can
	// sweep all of them by prefix (empty: this process's pid). The rest is random.
	TagPrefix string
	// Start starts the shell's process (exec.Cmd.Start when nil): a sandbox confines it here.
	// The shell reads only its set-up before its first prompt, so a confining Start needs no
	// gate before the command runs.
	Start func(*exec.Cmd) error
	// TempDir is where the shell's private directory (its set-up file, then the long commands
	// it is given) is made; empty means os.TempDir(). A confined shell must be able to read it.
	TempDir string
}

func (c Config) withDefaults() (Config, error) {
	if c.Bash == "" {
		p, err := exec.LookPath("bash")
		if err != nil {
			return c, fmt.Errorf("find bash: %w", err)
		}
		c.Bash = p
	}
	if c.Rows == 0 {
		c.Rows = DefaultRows
	}
	if c.Cols == 0 {
		c.Cols = DefaultCols
	}
	if c.MaxOutputChars == 0 {
		c.MaxOutputChars = DefaultMaxOutputChars
	}
	if c.KillGrace == 0 {
		c.KillGrace = DefaultKillGrace
	}
	switch {
	case c.MaxOutputChars < 0:
		return c, fmt.Errorf("MaxOutputChars must be positive, got %d", c.MaxOutputChars)
	case c.KillGrace < 0:
		return c, fmt.Errorf("KillGrace must not be negative, got %v", c.KillGrace)
	}
	return c, nil
}

// Outcome says how a Run ended.
type Outcome int

const (
	// Completed: the command ran to its end; Result.ExitCode is its status.
	Completed Outcome = iota
	// AtPrompt: the shell came back to its prompt without finishing the wrapper line, for
	// instance after `exec bash`, a command interrupted by SIGINT, or a stdin wait answered by
	// interrupting the shell's own read. The shell is kept.
	AtPrompt
	// Continuation: the shell stopped at its continuation prompt (PS2) waiting for the rest of
	// the line; it was interrupted back to its prompt and the command did not run. The shell
	// is kept.
	Continuation
	// ShellExited: the shell process ended (exit, exec of a program that ended, a signal).
	// Result.Exit says how; the shell is closed and its processes are gone.
	ShellExited
	// Lost: the shell can no longer be followed, for the reason in Result.Lost; it was closed
	// at once and its processes are gone.
	Lost
)

// LostReason says why a shell could no longer be followed.
type LostReason uint8

const (
	// LostNone: the shell was not lost.
	LostNone LostReason = iota
	// LostRedirected: the shell waits at its prompt with its standard output no longer on the
	// terminal (exec >FILE, exec 1>&-), so neither the end of a command nor the prompt can be
	// seen.
	LostRedirected
	// LostPrompt: the shell waits at its prompt without having reported the end of the
	// command or the prompt, its output still on the terminal: the commands that report them
	// no longer run (a function named builtin, enable -n, a DEBUG trap under extdebug).
	LostPrompt
	// LostReading: the shell itself kept reading the terminal after end-of-file and SIGINT.
	LostReading
	// LostStopped: the shell process was stopped (suspend -f, SIGSTOP).
	LostStopped
)

func (r LostReason) String() string {
	switch r {
	case LostNone:
		return "not lost"
	case LostRedirected:
		return "output redirected"
	case LostPrompt:
		return "prompt not reported"
	case LostReading:
		return "shell kept reading"
	case LostStopped:
		return "shell stopped"
	}
	return fmt.Sprintf("LostReason(%d)", int(r))
}

func (o Outcome) String() string {
	switch o {
	case Completed:
		return "completed"
	case AtPrompt:
		return "at prompt"
	case Continuation:
		return "continuation prompt"
	case ShellExited:
		return "shell exited"
	case Lost:
		return "lost"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Exit is how the shell process ended. Known is false when the status could not be read;
// otherwise Signal is the signal name (for example "SIGKILL") when a signal ended it, and Code
// its exit code when it exited.
type Exit struct {
	Known  bool
	Code   int
	Signal string
}

// Result is what one Run observed.
type Result struct {
	Outcome Outcome
	// Output is what the command printed (partial for every outcome but Completed).
	Output Output
	// ExitCode is the command's status when Outcome is Completed.
	ExitCode int
	// Exit is how the shell ended when Outcome is ShellExited.
	Exit Exit
	// Lost is why the shell was closed when Outcome is Lost.
	Lost LostReason
	// StdinEOFs counts the times a program blocked reading the terminal was sent end-of-file.
	StdinEOFs int
	// Interrupted is set when a program that kept waiting for input was sent SIGINT.
	Interrupted bool
	// Killed is set when a program that still kept waiting for input was sent SIGKILL.
	Killed bool
}

// Shell is one interactive bash on its own pseudo-terminal. Commands run one at a time with
// Run; Interrupt and Close may be called from any goroutine at any time. A Shell starts two
// goroutines (the terminal reader and the process waiter), which end when the shell is closed.
type Shell struct {
	cfg     Config
	cmd     *exec.Cmd
	release func() // ends the shell's entry in proctree's owned registry, once reaped
	ptmx    *os.File
	pid     int
	tty     uint64 // device number of the terminal
	ttyPath string // path of the terminal's slave side
	tag     string // TagVar=…, inherited by every process the shell starts
	argv    string // the shell's arguments as /proc/PID/cmdline shows them until it execs
	token   string // marks our prompt escapes

	mu       sync.Mutex
	san      *termtext.Sanitizer
	track    *tracker          // the running command, nil between commands
	prompts  int               // primary prompts seen since start
	syncSent uint64            // last barrier sent
	synced   uint64            // last barrier the reader passed
	changed  bool              // something Run waits for happened since the reader last woke it
	stop     *proctree.Stopper // finds and stops every process of this shell
	notify   chan struct{}
	exitInfo Exit

	exited     chan struct{} // closed when the shell process has been waited for
	readerDone chan struct{} // closed when the reader goroutine has returned

	runMu  sync.Mutex
	broken bool // guarded by runMu

	dir    string // private directory (0700): the set-up file, then long commands
	staged int    // commands written to dir; guarded by runMu

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
}

// Start starts bash on a new pseudo-terminal in its own session and waits for its first prompt.
// ctx bounds the wait; when it ends, or the shell exits first, the half-started shell is closed
// and an error is returned. The returned Shell must be closed by the caller.
func Start(ctx context.Context, cfg Config) (*Shell, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	proctree.CloseOnExecInherited() // the shell gets its terminal, never what dsh's parent left open
	// Escapees that a double fork re-parents come to this process, where sweepOrphans finds them
	// cheaply and the stopper reaps them once stopped. Without it they still carry the tag.
	_ = proctree.BecomeSubreaper()
	s := &Shell{
		cfg:        cfg,
		token:      newNonce(),
		tag:        TagVar + "=" + cmp.Or(cfg.TagPrefix, strconv.Itoa(os.Getpid())) + "-" + newNonce(),
		notify:     make(chan struct{}, 1),
		exited:     make(chan struct{}),
		readerDone: make(chan struct{}),
		closed:     make(chan struct{}),
	}
	if s.dir, err = os.MkdirTemp(cfg.TempDir, "dsh-pty-*"); err != nil {
		return nil, fmt.Errorf("private directory: %w", err)
	}
	setup := filepath.Join(s.dir, "setup")
	err = os.WriteFile(setup, []byte(setupScript(s.token)), 0o600)
	if err == nil {
		err = s.spawn(setup)
	}
	if err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	go s.read()
	go s.wait()
	if err := s.awaitPrompt(ctx); err != nil {
		s.Close()
		return nil, err
	}
	// bash read its set-up before its first prompt; the token need not stay on disk.
	_ = os.Remove(setup)
	return s, nil
}

// spawn starts bash on a new terminal, reading the set-up file setup before its first prompt.
func (s *Shell) spawn(setup string) error {
	ptmx, tty, err := openPTY()
	if err != nil {
		return fmt.Errorf("open pseudo-terminal: %w", err)
	}
	defer tty.Close()
	fail := func(what string, err error) error {
		ptmx.Close()
		return fmt.Errorf("%s: %w", what, err)
	}
	// Size and modes are set on the terminal side, which the child receives in blocking mode
	// anyway; the master stays non-blocking so Close can interrupt a pending read.
	if err := pty.Setsize(tty, &pty.Winsize{Rows: s.cfg.Rows, Cols: s.cfg.Cols}); err != nil {
		return fail("set terminal size", err)
	}
	if err := setModes(tty.Fd()); err != nil {
		return fail("set terminal modes", err)
	}
	if s.tty, err = ttyDev(tty); err != nil {
		return fail("stat terminal", err)
	}
	s.ttyPath = tty.Name()

	cmd := exec.Command(s.cfg.Bash, "--noprofile", "--rcfile", setup, "-i")
	cmd.Dir = s.cfg.Dir
	cmd.Env = environ(s.cfg.Env, []string{"TERM=dumb", "BASH_SILENCE_DEPRECATION_WARNING=1", s.tag})
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	start := s.cfg.Start
	if start == nil {
		start = (*exec.Cmd).Start
	}
	// Owned from before the fork until it is reaped: an executor's sweep in the same process must
	// never take a half-started shell for an escapee.
	release, err := proctree.StartOwned(func() (int, error) {
		if err := start(cmd); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err != nil {
		return fail("start bash", err)
	}
	s.release = release
	s.cmd, s.ptmx, s.pid = cmd, ptmx, cmd.Process.Pid
	s.argv = strings.Join(cmd.Args, "\x00") + "\x00"
	s.san = termtext.New(newMarkers(s.token, s.pid).match)
	// The shell leads its own session; job control gives jobs their own groups inside it. A
	// process that leaves the session keeps the tag, and once seen it stays known.
	s.stop = proctree.NewStopper(proctree.Tree{Leader: s.pid, Session: s.pid, Tag: s.tag},
		proctree.StopOptions{Grace: s.cfg.KillGrace, Soft: []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGCONT},
			LeaderExited: s.exited, Reap: true, Poll: 10 * time.Millisecond})
	return nil
}

// awaitPrompt waits for the shell's first prompt marker, the shell's exit or the end of ctx.
func (s *Shell) awaitPrompt(ctx context.Context) error {
	for {
		s.mu.Lock()
		ready := s.prompts > 0
		s.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-s.notify:
		case <-s.exited:
			return errors.New("PTY shell exited during startup")
		case <-ctx.Done():
			return fmt.Errorf("PTY shell did not reach its prompt: %w", context.Cause(ctx))
		}
	}
}

// openPTY opens a pseudo-terminal pair. pty.Open leaves the master in blocking mode (its ioctls
// go through File.Fd), where a pending Read cannot be interrupted and write deadlines do not
// work; the master is therefore re-made as a non-blocking descriptor the runtime poller owns.
func openPTY() (master, tty *os.File, err error) {
	m, t, err := pty.Open()
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Close()
		return nil, nil, fmt.Errorf("duplicate master: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		t.Close()
		return nil, nil, fmt.Errorf("non-blocking master: %w", err)
	}
	return os.NewFile(uintptr(fd), m.Name()), t, nil
}

// replaced reports whether the shell process has called execve since it started (exec bash,
// exec python3): it then runs another program, which is no longer our shell.
func (s *Shell) replaced() bool {
	args, ok := cmdline(s.pid)
	return ok && args != s.argv
}

// stopped reports whether the shell process is stopped (suspend -f, SIGSTOP).
func (s *Shell) stopped() bool {
	st, ok := proctree.ReadStat(s.pid)
	return ok && st.State == 'T'
}

// Pid returns the process id of the shell.
func (s *Shell) Pid() int { return s.pid }

// Done returns a channel closed once the shell process has ended.
func (s *Shell) Done() <-chan struct{} { return s.exited }

// Exited reports whether the shell process has ended.
func (s *Shell) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

func (s *Shell) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// read is the reader goroutine: it feeds the terminal's output through the sanitizer to the
// current command until the terminal reports an error (EIO once no process holds it, or the
// master being closed).
func (s *Shell) read() {
	defer close(s.readerDone)
	rc, err := s.ptmx.SyscallConn()
	buf := make([]byte, readBatch)
	for err == nil {
		var n int
		n, err = readBatchFrom(rc, buf)
		if n > 0 {
			s.mu.Lock()
			s.san.Feed(buf[:n], s.emit)
			changed := s.changed
			s.changed = false
			s.mu.Unlock()
			if changed {
				s.wake()
			}
		}
	}
	s.mu.Lock()
	s.san.Flush(s.emit)
	s.mu.Unlock()
	s.wake()
}

// readBatch bounds what the reader takes from the terminal before handing it on.
const readBatch = 256 << 10

// readBatchFrom reads from the non-blocking master rc into buf until the terminal has nothing
// more to give at once or buf is full, waiting only while it has nothing at all. A terminal hands
// over at most its 4 KiB line-discipline buffer per read, which the kernel refills while we read:
// batching those reads lets the sanitizer, the tracker and Run's wake-up work once per batch
// instead of once per 4 KiB. It returns the bytes read and the error that ended the terminal.
func readBatchFrom(rc syscall.RawConn, buf []byte) (int, error) {
	n := 0
	var rerr error
	err := rc.Read(func(fd uintptr) bool {
		for n < len(buf) {
			k, err := unix.Read(int(fd), buf[n:])
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return n > 0
			case err != nil:
				rerr = err
				return true
			case k == 0:
				rerr = io.EOF
				return true
			}
			n += k
		}
		return true
	})
	if rerr == nil {
		rerr = err
	}
	return n, rerr
}

// emit is the sanitizer's callback; s.mu is held. It notes in s.changed whether the reader
// should wake Run: on every event, and on text that moved the command's phase. Plain output
// (most of what the terminal carries) wakes no one.
func (s *Shell) emit(kind eventKind, text string, status int) {
	switch kind {
	case evPrompt:
		s.prompts++
	case evSync:
		s.synced = max(s.synced, uint64(status))
		s.changed = true
		return
	}
	if kind != evText {
		s.changed = true
	}
	if s.track != nil {
		before := s.track.phase
		s.track.event(kind, text, status)
		s.changed = s.changed || s.track.phase != before
	}
}

// wait is the waiter goroutine: it reaps the shell and records how it ended.
func (s *Shell) wait() {
	_ = s.cmd.Wait()
	s.release()
	e := Exit{}
	if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		e.Known = true
		if ws.Signaled() {
			e.Signal = unix.SignalName(ws.Signal())
			if e.Signal == "" {
				e.Signal = fmt.Sprintf("signal %d", int(ws.Signal()))
			}
		} else {
			e.Code = ws.ExitStatus()
		}
	}
	s.mu.Lock()
	s.exitInfo = e
	s.mu.Unlock()
	close(s.exited)
	s.wake()
}

// Run types command into the shell as one wrapped line and waits for it to finish. cd, exported
// variables, functions, aliases and jobs persist between runs because the command is evaluated
// by the shell itself.
//
// Run returns when the command's end marker and the next prompt have been seen (Completed), the
// shell is back at its prompt without it (AtPrompt), the shell stopped at its continuation
// prompt and was interrupted (Continuation), the shell exited (ShellExited), or the shell can no
// longer be followed (Lost: it waits at a prompt it did not report, keeps reading the terminal
// itself, or was stopped). After ShellExited and Lost the shell is closed, its processes gone and
// its output drained. A program that blocks reading the terminal is answered with end-of-file,
// as if its input were empty; one that keeps waiting is interrupted, then killed; a shell that
// replaced itself with exec is such a program.
//
// When ctx ends first, Run returns the partial Result and context.Cause(ctx); the shell is then
// broken (later Runs fail with ErrBroken) and should be closed. Run returns ErrBusy when
// another Run is active and ErrClosed after Close; a failure to write the command is returned
// as an error and also breaks the shell.
func (s *Shell) Run(ctx context.Context, command string) (Result, error) {
	if !s.runMu.TryLock() {
		return Result{}, ErrBusy
	}
	defer s.runMu.Unlock()
	select {
	case <-s.closed:
		if s.Exited() {
			return s.exitResult(nil), nil
		}
		return Result{}, ErrClosed
	default:
	}
	if s.broken {
		return Result{}, ErrBroken
	}
	if s.Exited() {
		s.Close()
		return s.exitResult(nil), nil
	}
	if err := context.Cause(ctx); err != nil {
		return Result{}, err
	}
	s.sweepOrphans()
	nonce := newNonce()
	line := wrapLine(nonce, command)
	if len(line) > maxTypedLine {
		if path, err := s.stage(nonce, command); err == nil {
			defer os.Remove(path)
			line = wrapFile(nonce, path)
		}
	}
	return s.runLine(ctx, nonce, line)
}

// Progress reports the command that Run is following: the bytes of its sanitized output so far
// and its last whole non-empty line ("" before the first), both a few dozen bytes behind the
// terminal, since text that may begin the end marker is held back; a line still being written is
// never reported (it could show half of a value that redaction would recognise whole), nor are
// the tool's markers and the lines holding the command's nonce. ok is false when
// no command is being followed or none of its output was seen yet. It may be called from any
// goroutine.
func (s *Shell) Progress() (bytes int64, lastLine string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.track == nil || s.track.clip.bytes == 0 {
		return 0, "", false
	}
	return s.track.clip.bytes, s.track.clip.lastLine(s.track.nonce), true
}

// maxTypedLine is the longest wrapper line typed as is. bash's line editor reads typed input
// one byte at a time (about 10 µs a byte), so a longer command is written to a private file and
// the typed line evaluates the file's content instead.
const maxTypedLine = 512

// stage writes command to a new file in the shell's private directory and returns its path.
func (s *Shell) stage(nonce, command string) (string, error) {
	path := filepath.Join(s.dir, "cmd-"+nonce)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(command); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", err
	}
	s.staged++
	return path, nil
}

func (s *Shell) eof() byte {
	c := byte(0x04)
	if sc, err := s.ptmx.SyscallConn(); err == nil {
		_ = sc.Control(func(fd uintptr) { c = eofChar(fd) })
	}
	return c
}

// write writes text to the terminal, giving up when ctx ends.
func (s *Shell) write(ctx context.Context, text string) error {
	stop := context.AfterFunc(ctx, func() { _ = s.ptmx.SetWriteDeadline(time.Unix(1, 0)) })
	_, err := s.ptmx.Write([]byte(text))
	if !stop() {
		_ = s.ptmx.SetWriteDeadline(time.Time{})
		if err == nil {
			err = context.Cause(ctx)
		}
	}
	return err
}

func (s *Shell) outputOf(tr *tracker) Output {
	s.mu.Lock()
	defer s.mu.Unlock()
	return tr.output()
}

// exitResult is the Result of a shell found exited; tr, when non-nil, supplies the output.
func (s *Shell) exitResult(tr *tracker) Result {
	<-s.exited
	r := Result{Outcome: ShellExited}
	r.Exit, _ = s.ExitStatus()
	if tr != nil {
		s.mu.Lock()
		r.Output = tr.output()
		s.mu.Unlock()
	}
	return r
}

// ExitStatus reports how the shell process ended; exited is false while it runs.
func (s *Shell) ExitStatus() (e Exit, exited bool) {
	if !s.Exited() {
		return Exit{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitInfo, true
}

// Interrupt sends SIGINT to the terminal's foreground process group (the running program, or
// the shell itself at a prompt). It never types a Ctrl-C, so it works on programs that turned
// the terminal's signal keys off.
func (s *Shell) Interrupt() error {
	var fg int
	var ferr error
	sc, err := s.ptmx.SyscallConn()
	if err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	if err := sc.Control(func(fd uintptr) { fg, ferr = foregroundGroup(fd) }); err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	if ferr != nil || fg <= 0 {
		return fmt.Errorf("cannot resolve the foreground process group of terminal of shell %d", s.pid)
	}
	if err := unix.Kill(-fg, unix.SIGINT); err != nil {
		return fmt.Errorf("interrupt process group %d: %w", fg, err)
	}
	return nil
}

// sweepOrphans looks at the children of this process (a child subreaper): a dead one the stopper
// knows as this shell's is reaped, a live one carrying this shell's tag is remembered by pid and
// start time, so it is found at Close whatever it does to its environment later. It reads only
// our own children, which keeps it cheap enough to run after every command.
func (s *Shell) sweepOrphans() {
	kids, ok := proctree.ChildrenOf(os.Getpid())
	if !ok {
		return
	}
	for _, pid := range kids {
		if pid == s.pid {
			continue
		}
		st, ok := proctree.ReadStat(pid)
		if !ok {
			continue
		}
		switch {
		case s.stop.Knows(st):
			if st.Dead() {
				proctree.Reap(st)
			}
		case !st.Dead() && proctree.HasTag(pid, s.tag, false):
			s.stop.Remember(st)
		}
	}
}

// Close stops the shell and every process it started: its descendants, the members of its
// session and processes carrying its environment tag (those that left with setsid or a double
// fork), each identified by pid and start time. They get SIGHUP, SIGTERM and SIGCONT, then
// SIGKILL after KillGrace; stopped ones re-parented here are reaped. Close then drains and
// closes the terminal and waits for the shell's goroutines. It is idempotent and safe to call
// concurrently with Run (which then reports the exit); it returns an error when processes
// survived.
func (s *Shell) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.teardown()
		close(s.closed)
	})
	<-s.closed
	return s.closeErr
}

// Kill cuts KillGrace short: the shell and every process it started get SIGKILL now. It does not
// wait; Close (running or to come) still waits for them to be gone and releases the terminal.
func (s *Shell) Kill() { s.stop.ForceKill() }

func (s *Shell) teardown() error {
	s.stop.Terminate()
	// After SIGKILL a process may take a moment to die (uninterruptible sleep); bound the wait.
	bound := time.NewTimer(s.cfg.KillGrace + 5*time.Second)
	defer bound.Stop()
	var ms []procStat
	select {
	case <-s.stop.Stopped():
	case <-bound.C:
		ms = s.stop.Members()
	}

	var errs []error
	if len(ms) > 0 {
		pids := make([]string, 0, len(ms))
		for _, st := range ms {
			pids = append(pids, fmt.Sprint(st.PID))
		}
		slices.Sort(pids)
		errs = append(errs, fmt.Errorf("PTY cleanup failed: processes %s survived SIGKILL", strings.Join(pids, ", ")))
	}
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		errs = append(errs, fmt.Errorf("PTY cleanup failed: shell %d was not reaped", s.pid))
	}
	// Every holder of the terminal is gone, so the reader sees the end of it once it has read
	// what is left; closing the master bounds the wait if an unknown process still holds it.
	select {
	case <-s.readerDone:
	case <-time.After(time.Second):
	}
	if err := s.ptmx.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("close terminal: %w", err))
	}
	<-s.readerDone
	if s.dir != "" {
		if err := os.RemoveAll(s.dir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", s.dir, err))
		}
	}
	return errors.Join(errs...)
}
