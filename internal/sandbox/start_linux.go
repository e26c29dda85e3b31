package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// probe is done once per process: the kernel does not change under it.
var probe = sync.OnceValue(func() Support {
	var s Support
	if v, err := ll.LandlockGetABIVersion(); err == nil {
		s.LandlockABI = v
	}
	s.Seccomp = seccompAvailable()
	if fd, err := unix.PidfdOpen(os.Getpid(), unix.PIDFD_THREAD); err == nil {
		unix.Close(fd)
		s.ThreadPidfd = true
	}
	return s
})

// Probe reports what this machine offers the sandbox.
func Probe() Support { return probe() }

// threadWait bounds the wait for the starting thread to end; the runtime ends it at once, so only
// a machine stalled for this long reaches it.
const threadWait = 10 * time.Second

// Start starts cmd confined by p and returns once the thread that started it is gone, so that from
// then on no thread of this process shares the command's sandbox (a command may signal and trace
// what shares its sandbox). Until Start returns, the command must not run anything but what a
// trusted caller told it to: a caller that gives bash untrusted text holds it at a gate until
// then (bash-local does, through BASH_ENV).
//
// It returns an error when the confinement cannot be applied (nothing was started), cmd.Start's
// error, or an error when the starting thread was not seen gone in time (the command was started,
// then killed and reaped).
func (p *Prepared) Start(cmd *exec.Cmd) error {
	res := make(chan startResult, 1)
	threads.run(func() { p.confinedStart(cmd, res) })
	r := <-res
	if r.err != nil {
		if r.pidfd >= 0 {
			unix.Close(r.pidfd)
		}
		return r.err
	}
	if err := waitThread(r.pidfd, r.tid, threadWait); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

type startResult struct {
	tid, pidfd int
	err        error
}

// confinedStart confines the calling goroutine's thread (locked, fresh, never the main one: see
// threadPool), starts cmd from it and reports on res. The runtime ends the thread once the
// goroutine returns, since it stays locked.
func (p *Prepared) confinedStart(cmd *exec.Cmd, res chan<- startResult) {
	r := startResult{tid: unix.Gettid(), pidfd: -1}
	if fd, err := unix.PidfdOpen(r.tid, unix.PIDFD_THREAD); err == nil {
		r.pidfd = fd
	}
	r.err = p.confine()
	if r.err == nil {
		r.err = cmd.Start()
	}
	res <- r
}

// threadPool hands work to goroutines locked to fresh threads that are never unlocked, so the
// runtime ends each thread once its work returns. Making a thread costs more than the rest of a
// confined start, so one is kept ready ahead of time while a Sandbox is open, and made again on
// a goroutine of its own once used, while the command it started runs.
type threadPool struct {
	mu    sync.Mutex
	users int
	ready chan func() // a goroutine locked to a fresh thread receives from it
	stop  chan struct{}
}

var threads threadPool

// acquire counts a user and makes sure a thread is ready.
func (tp *threadPool) acquire() {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.users++
	if tp.users == 1 {
		tp.ready, tp.stop = make(chan func()), make(chan struct{})
		go tp.thread(tp.ready, tp.stop)
	}
}

// release forgets a user; the last one ends the ready thread.
func (tp *threadPool) release() {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.users--; tp.users == 0 {
		close(tp.stop)
	}
}

// run runs f on a fresh locked thread: the ready one when it is free, a new one otherwise.
func (tp *threadPool) run(f func()) {
	tp.mu.Lock()
	ready, stop := tp.ready, tp.stop
	tp.mu.Unlock()
	select {
	case ready <- f:
		go tp.thread(ready, stop)
	default:
		go tp.thread(nil, nil, f)
	}
}

// thread locks its goroutine to a fresh thread, not the main one, and runs the work it was given
// or the first it receives from ready; it returns when stop is closed first. It never unlocks.
func (tp *threadPool) thread(ready <-chan func(), stop <-chan struct{}, work ...func()) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// The runtime parks the main thread instead of ending it, so it must never be confined.
		// While this goroutine holds it, the one it starts runs on another thread; it gives the
		// main thread back once that one holds its own.
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(locked)
			tp.thread(ready, stop, work...)
		}()
		<-locked
		runtime.UnlockOSThread()
		return
	}
	if len(work) > 0 {
		work[0]()
		return
	}
	select {
	case f := <-ready:
		f()
	case <-stop:
	}
}

// confine restricts the calling thread: no_new_privs, no capabilities, the Landlock ruleset, the
// seccomp filter.
func (p *Prepared) confine() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if p.rules != nil {
		if err := ll.LandlockRestrictSelf(p.rules.fd, 0); err != nil {
			return fmt.Errorf("sandbox: landlock_restrict_self: %w", err)
		}
	}
	if p.sb.support.Seccomp {
		if err := installFilter(p.policy.Network); err != nil {
			return fmt.Errorf("sandbox: seccomp: %w", err)
		}
	}
	return nil
}

// dropCapabilities empties the calling thread's bounding, ambient, effective, permitted and
// inheritable sets when it has any capability (a harness running as root): Landlock does not stop
// what capabilities allow beyond files, such as reconfiguring the host's network or creating
// device nodes.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: capget: %w", err)
	}
	if data[0].Permitted == 0 && data[1].Permitted == 0 && data[0].Inheritable == 0 && data[1].Inheritable == 0 {
		return nil // no_new_privs keeps exec from granting any
	}
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break // past the last capability this kernel knows
		} else if err != nil {
			return fmt.Errorf("sandbox: drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("sandbox: clear ambient capabilities: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: capset: %w", err)
	}
	return nil
}

// waitThread waits until thread tid of this process is gone: on the pidfd when there is one, by
// polling otherwise.
func waitThread(pidfd, tid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	if pidfd >= 0 {
		defer unix.Close(pidfd)
		for {
			fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, int(time.Until(deadline)/time.Millisecond)+1)
			switch {
			case errors.Is(err, unix.EINTR):
			case err != nil:
				return fmt.Errorf("poll the starting thread: %w", err)
			case n > 0:
				return nil
			case time.Now().After(deadline):
				return fmt.Errorf("the thread that started the command did not end within %v", limit)
			}
		}
	}
	for d := 20 * time.Microsecond; ; d = min(2*d, time.Millisecond) {
		if err := unix.Tgkill(os.Getpid(), tid, 0); errors.Is(err, unix.ESRCH) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the thread that started the command did not end within %v", limit)
		}
		time.Sleep(d)
	}
}
