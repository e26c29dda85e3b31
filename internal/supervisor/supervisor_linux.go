//go:build linux

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/internal/proctree"
)

var extraTerminating = []os.Signal{unix.SIGSTKFLT}

func main() error {
	if mark, ok := os.LookupEnv(markerVar); ok {
		return work(mark)
	}
	err := supervise("/proc/self/exe")
	return err // supervise returns only when the worker could not be started
}

// forwarded are the signals the supervisor passes on to the worker.
func forwarded() []os.Signal {
	return append(Terminating(), syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
}

// supervise becomes the supervisor of a worker that runs exe with this process's arguments,
// environment and standard streams. It returns only when that cannot be set up; otherwise it
// exits as the worker did, once everything below it is gone.
func supervise(exe string) error {
	if err := proctree.BecomeSubreaper(); err != nil {
		return fmt.Errorf("supervisor: become a child subreaper: %w", err)
	}
	self, ok := proctree.ReadStat(os.Getpid())
	if !ok {
		return errors.New("supervisor: cannot read this process's own /proc/self/stat")
	}
	watchR, watchW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("supervisor: watch pipe: %w", err)
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded()...)
	// A write to a closed stderr must fail with EPIPE rather than kill the supervisor; ignoring the
	// signal instead would be inherited by the worker and every command.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        os.Args,
		Env:         append(os.Environ(), markerVar+"="+strconv.Itoa(self.PID)+":"+strconv.FormatUint(self.StartTime, 10)),
		Stdin:       os.Stdin,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		ExtraFiles:  []*os.File{watchR}, // fd 3 in the worker: watchFD
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err = cmd.Start()
	watchR.Close()
	if err != nil {
		signal.Stop(sigs)
		watchW.Close()
		return fmt.Errorf("supervisor: start the worker: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the status is in cmd.ProcessState
		close(exited)
	}()
	for {
		select {
		case sig := <-sigs:
			_ = cmd.Process.Signal(sig)
		case <-exited:
			// The writing end of the watch pipe stays open until now: were it collected, its
			// finalizer would close it and the worker would take us for dead.
			runtime.KeepAlive(watchW)
			if n := stopBelow(); n > 0 && cmd.ProcessState.Success() {
				fmt.Fprintf(os.Stderr, "%s: supervisor: stopped %d process(es) the worker left behind\n", name(), n)
			}
			exitAs(cmd.ProcessState)
		}
	}
}

// stopBelow stops every descendant of this process, the soft signals first and SIGKILL after
// Grace, reaps them, and returns how many were alive when it began.
func stopBelow() int {
	// Everything below a subreaper that has no child is gone: the common case costs one read.
	if kids, ok := proctree.ChildrenOf(os.Getpid()); ok && len(kids) == 0 {
		return 0
	}
	s := proctree.NewStopper(proctree.Tree{Descendants: true}, proctree.StopOptions{Grace: Grace, Reap: true})
	n := len(s.Members())
	s.Terminate()
	<-s.Stopped()
	return n
}

// exitAs ends this process the way the worker ended: with its exit status; killed by the same
// signal when that was SIGKILL, SIGTERM, SIGINT or SIGHUP (which the Go runtime, once reset,
// lets end the process quietly); otherwise with 128 + the signal's number, as a shell reports
// it, rather than with a goroutine dump of the supervisor's own.
func exitAs(ps *os.ProcessState) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		os.Exit(ps.ExitCode())
	}
	switch sig := ws.Signal(); sig {
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(100 * time.Millisecond) // delivery is asynchronous for a catchable signal
	}
	os.Exit(128 + int(ws.Signal()))
}

// work checks that this process is the worker of the supervisor mark names (its parent, by pid
// and start time, holding the pipe on watchFD), and starts watching for that supervisor's death.
func work(mark string) error {
	os.Unsetenv(markerVar) // nothing this worker starts may take itself for one
	pidText, startText, _ := strings.Cut(mark, ":")
	pid, err1 := strconv.Atoi(pidText)
	start, err2 := strconv.ParseUint(startText, 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return fmt.Errorf("supervisor: %s=%q names no supervisor (want PID:STARTTIME)", markerVar, mark)
	}
	parent, ok := proctree.ReadStat(os.Getppid())
	if os.Getppid() != pid || !ok || parent.StartTime != start {
		return fmt.Errorf("supervisor: %s names process %d as this process's supervisor, but its parent is process %d: "+
			"not started by a supervisor, it would run without one", markerVar, pid, os.Getppid())
	}
	var st unix.Stat_t
	if err := unix.Fstat(watchFD, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return fmt.Errorf("supervisor: descriptor %d is not the supervisor's pipe", watchFD)
	}
	syscall.CloseOnExec(watchFD)
	// Executed as /proc/self/exe, the worker is named "exe" in ps and top: give it the program's
	// name back (the kernel keeps 15 bytes of it). A failure only leaves the name.
	_ = os.WriteFile("/proc/self/comm", []byte(filepath.Base(os.Args[0])), 0)
	if err := proctree.BecomeSubreaper(); err != nil {
		return fmt.Errorf("supervisor: become a child subreaper: %w", err)
	}
	watch := os.NewFile(watchFD, "supervisor-watch")
	go func() {
		var b [1]byte
		for {
			if _, err := watch.Read(b[:]); err != nil { // end of file: the supervisor is gone
				break
			}
		}
		orphaned()
	}()
	return nil
}

// orphaned is the worker's end once its supervisor died: nothing new may start, everything
// below is stopped, and the process exits.
func orphaned() {
	proctree.FreezeStarts()
	stopBelow()
	fmt.Fprintf(os.Stderr, "%s: the supervisor is gone: every process below this one was stopped; exiting\n", name())
	os.Exit(ExitOrphaned)
}
