//go:build linux && (amd64 || arm64)

package sandboxtest

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

func probe(op string, args []string) error {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch op {
	case "connect-unix":
		return connectUnix(arg(0))
	case "send-unixgram":
		return sendUnixgram(arg(0))
	case "ptrace":
		return ptrace(arg(0))
	case "landlock-write":
		return landlockWrite(arg(0))
	case "setns":
		return setns(arg(0), arg(1))
	}
	return fmt.Errorf("unknown probe %q", op)
}

func connectUnix(path string) error {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return nil
}

// sendUnixgram sends a datagram to path from a Unix socket of every type value (SOCK_RAW is a
// datagram socket to the kernel), with and without SOCK_NONBLOCK|SOCK_CLOEXEC, made by socket
// and by socketpair (whose sendto may name any address). Any one that arrives is an escape.
func sendUnixgram(path string) error {
	var errs []error
	to := &syscall.SockaddrUnix{Name: path}
	for typ := 0; typ <= 15; typ++ {
		for _, flags := range []int{0, syscall.SOCK_NONBLOCK | syscall.SOCK_CLOEXEC} {
			if fd, err := syscall.Socket(syscall.AF_UNIX, typ|flags, 0); err == nil {
				err = syscall.Sendto(fd, []byte("pwned"), 0, to)
				syscall.Close(fd)
				if err == nil {
					fmt.Printf("sent from a socket of type %d\n", typ|flags)
					return nil
				}
				errs = append(errs, fmt.Errorf("sendto type %d: %w", typ, err))
			}
			if fds, err := syscall.Socketpair(syscall.AF_UNIX, typ|flags, 0); err == nil {
				err = syscall.Sendto(fds[0], []byte("pwned"), 0, to)
				if err == nil { // a seqpacket pair ignores the address: what reached the peer stayed inside
					if n, _, rerr := syscall.Recvfrom(fds[1], make([]byte, 8), syscall.MSG_DONTWAIT); rerr == nil && n > 0 {
						err = errors.New("sent to the peer, not to the address")
					}
				}
				syscall.Close(fds[0])
				syscall.Close(fds[1])
				if err == nil {
					fmt.Printf("sent from a pair of type %d\n", typ|flags)
					return nil
				}
				errs = append(errs, fmt.Errorf("sendto from a pair of type %d: %w", typ, err))
			}
		}
	}
	return fmt.Errorf("no datagram sent: %w", errors.Join(errs...))
}

func ptrace(pidText string) error {
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := syscall.PtraceAttach(pid); err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, syscall.WALL, nil)
	syscall.PtraceDetach(pid)
	return nil
}

// Landlock's system calls and the first ABI's access rights, the same on every architecture.
const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446
	landlockAllFSv1          = 1<<13 - 1
	oPath                    = 0x200000
	prSetNoNewPrivs          = 38
)

// landlockWrite stacks a ruleset that allows everything everywhere, then writes path.
func landlockWrite(path string) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	attr := [3]uint64{landlockAllFSv1}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), 24, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	root, err := syscall.Open("/", oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	rule := struct {
		access uint64
		parent int32
	}{landlockAllFSv1, int32(root)}
	if _, _, errno := syscall.Syscall6(sysLandlockAddRule, fd, 1, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_add_rule: %w", errno)
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("no_new_privs: %w", errno)
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return os.WriteFile(path, []byte("pwned"), 0o644)
}

// setns joins the namespaces of process pid, then writes path.
func setns(pidText, path string) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var errs []error
	joined := false
	for _, ns := range []string{"net", "mnt", "user"} {
		fd, err := syscall.Open("/proc/"+pidText+"/ns/"+ns, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, _, errno := syscall.Syscall(sysSetns, uintptr(fd), 0, 0); errno != 0 {
			errs = append(errs, fmt.Errorf("setns %s: %w", ns, errno))
		} else {
			joined = true
		}
		syscall.Close(fd)
	}
	if !joined {
		return errors.Join(errs...)
	}
	return os.WriteFile(path, []byte("pwned"), 0o644)
}
