package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter closes what Landlock does not (on the ABIs this project supports): every
// socket that could reach another process when the network is off, every Unix socket (Landlock
// only restricts connecting to a pathname socket from ABI 9), socket pairs of every type but
// stream and seqpacket (a datagram pair's sendto may name any socket path), and io_uring, whose operations open and connect sockets
// without the socket system calls. A call from another architecture's system call table (i386
// on amd64, x32) kills the process: its numbers are not the ones checked here.

// Offsets into struct seccomp_data: nr, arch, instruction pointer, args[6]. The low 32 bits of an
// argument come first on the little-endian architectures this filter is built for.
const (
	offNR   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
)

// sockTypeMask keeps the socket type of socket(2)'s type argument, without SOCK_NONBLOCK and
// SOCK_CLOEXEC.
const sockTypeMask = 0xf

// asm assembles a BPF program whose jumps name labels; done resolves them.
type asm struct {
	prog   []unix.SockFilter
	jumps  map[int][2]string // instruction → its true and false labels ("" is the next one)
	labels map[string]int
}

func (a *asm) op(code uint16, k uint32) { a.prog = append(a.prog, unix.SockFilter{Code: code, K: k}) }

func (a *asm) jump(code uint16, k uint32, yes, no string) {
	if a.jumps == nil {
		a.jumps = map[int][2]string{}
	}
	a.jumps[len(a.prog)] = [2]string{yes, no}
	a.op(code, k)
}

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.prog)
}

func (a *asm) done() []unix.SockFilter {
	offset := func(pc int, label string) uint8 {
		if label == "" {
			return 0
		}
		return uint8(a.labels[label] - pc - 1)
	}
	for pc, j := range a.jumps {
		a.prog[pc].Jt, a.prog[pc].Jf = offset(pc, j[0]), offset(pc, j[1])
	}
	return a.prog
}

// filter returns the BPF program for this architecture (nil where there is none).
func filter(network bool) []unix.SockFilter {
	if auditArch == 0 {
		return nil
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	var a asm
	a.op(ld, offArch)
	a.jump(jeq, auditArch, "", "kill")
	a.op(ld, offNR)
	a.jump(jge, x32Bit, "kill", "")
	for _, nr := range []uintptr{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		a.jump(jeq, uint32(nr), "deny", "")
	}
	a.jump(jeq, uint32(unix.SYS_SOCKETPAIR), "socketpair", "")
	a.jump(jeq, uint32(unix.SYS_SOCKET), "socket", "allow")
	// A pair is refused by what it can do, not by one type: only the connection-oriented types
	// (whose sendto cannot name another address) are allowed; SOCK_DGRAM, SOCK_RAW (a datagram
	// socket to the kernel's Unix family) and every other type value are refused.
	a.label("socketpair")
	a.op(ld, offArg1)
	a.op(and, sockTypeMask)
	a.jump(jeq, unix.SOCK_STREAM, "allow", "")
	a.jump(jeq, unix.SOCK_SEQPACKET, "allow", "deny")
	a.label("socket")
	if network {
		a.op(ld, offArg0)
		a.jump(jeq, unix.AF_UNIX, "deny", "allow")
	}
	a.label("deny")
	a.op(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
	a.label("allow")
	a.op(ret, unix.SECCOMP_RET_ALLOW)
	a.label("kill")
	a.op(ret, unix.SECCOMP_RET_KILL_PROCESS)
	return a.done()
}

// installFilter installs the filter on the calling thread, which must have no_new_privs set.
func installFilter(network bool) error {
	prog := filter(network)
	if prog == nil {
		return unix.ENOSYS
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}

// seccompAvailable reports whether this kernel runs seccomp filters that return an errno, and
// whether a filter exists for this architecture.
func seccompAvailable() bool {
	if auditArch == 0 {
		return false
	}
	action := uint32(unix.SECCOMP_RET_ERRNO)
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	return errno == 0
}
