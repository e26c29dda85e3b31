//go:build linux

package ptyshell

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/dsh-go/dsh/internal/proctree"

	"golang.org/x/sys/unix"
)

// descendants returns the stat of root and of every process below it, from one scan of the
// process table.
func descendants(root int) []procStat {
	all, ok := proctree.Snapshot()
	if !ok {
		return nil
	}
	byParent := map[int][]procStat{}
	var out []procStat
	for _, st := range all {
		byParent[st.PPID] = append(byParent[st.PPID], st)
		if st.PID == root {
			out = append(out, st)
		}
	}
	for i := 0; i < len(out) && i < 1<<16; i++ {
		out = append(out, byParent[out[i].PID]...)
	}
	return out
}

// foregroundGroup returns the foreground process group of the terminal whose master is fd.
func foregroundGroup(fd uintptr) (int, error) {
	return unix.IoctlGetInt(int(fd), unix.TIOCGPGRP)
}

// eofChar returns the terminal's end-of-file character (VEOF), Ctrl-D when it is disabled.
func eofChar(fd uintptr) byte {
	t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	if err != nil || t.Cc[unix.VEOF] == 0 {
		return 0x04
	}
	return t.Cc[unix.VEOF]
}

// setModes sets the terminal fd (the slave, before the shell starts) up for the shell; see
// terminalModes.
func setModes(fd uintptr) error {
	t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	if err != nil {
		return err
	}
	terminalModes(t)
	return unix.IoctlSetTermios(int(fd), unix.TCSETS, t)
}

// ttyDev returns the device number of the terminal file f.
func ttyDev(f *os.File) (uint64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errors.New("no device number")
	}
	return uint64(st.Rdev), nil
}

// devTTY is the device number of /dev/tty (5, 0): a process that opened it reads its
// controlling terminal.
var devTTY = uint64(unix.Mkdev(5, 0))

// ttyWaiters returns the threads of the foreground group fg (among root and its descendants)
// that are blocked in a read of the terminal tty: read, readv and pread on a descriptor of it,
// or select, poll and epoll waits whose read set includes one (waiter.editor: the way a line
// editor such as readline waits for a key). The evidence is the syscall each blocked thread sits
// in (/proc/PID/task/TID/syscall) and, for the multiplexing calls, the descriptor sets read from
// the process's memory or its epoll fdinfo.
func ttyWaiters(root, fg int, tty uint64) []waiter {
	var out []waiter
	for _, st := range descendants(root) {
		if st.PGRP != fg || st.Dead() {
			continue
		}
		base := "/proc/" + strconv.Itoa(st.PID) + "/task/"
		tasks, err := os.ReadDir(base)
		if err != nil {
			continue
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			data, err := os.ReadFile(base + t.Name() + "/syscall")
			if err != nil {
				continue
			}
			editor, ok := readsTTY(st, string(data), tty)
			if !ok {
				continue
			}
			out = append(out, waiter{pid: st.PID, tid: tid, start: st.StartTime, switches: switchCount(base + t.Name() + "/status"), editor: editor})
		}
	}
	return out
}

// readsTTY interprets one /proc/PID/task/TID/syscall line of process st: ok when the thread is
// blocked reading the terminal tty, editor when it waits in select, poll or epoll rather than in
// a read.
func readsTTY(st procStat, line string, tty uint64) (editor, ok bool) {
	f := strings.Fields(line)
	if len(f) < 7 {
		return false, false // "running", or blocked outside a system call
	}
	nr, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return false, false
	}
	var a [6]uint64
	for i := range a {
		v, err := strconv.ParseUint(strings.TrimPrefix(f[i+1], "0x"), 16, 64)
		if err != nil {
			return false, false
		}
		a[i] = v
	}
	isTTY := func(fd uint64) bool { return fdIsTTY(st, int(fd), tty) }
	switch nr {
	case sysRead, sysReadv, sysPread64, sysPreadv, sysPreadv2:
		return false, isTTY(a[0])
	case sysSelect, sysPselect6:
		return true, selectReadsTTY(st, a[0], a[1], isTTY)
	case sysPoll, sysPpoll:
		return true, pollReadsTTY(st, a[0], a[1], isTTY)
	case sysEpollWait, sysEpollPwait, sysEpollPwait2:
		return true, epollReadsTTY(st, int(a[0]), isTTY)
	}
	return false, false
}

// writesTTY reports whether descriptor fd of process pid is the terminal tty (or /dev/tty while
// tty is its controlling terminal).
func writesTTY(pid, fd int, tty uint64) bool {
	st, ok := proctree.ReadStat(pid)
	return ok && fdIsTTY(st, fd, tty)
}

// cmdline returns the argument list of process pid as the kernel holds it (NUL-terminated
// arguments), which changes when the process calls execve.
func cmdline(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return string(b), err == nil
}

func fdIsTTY(st procStat, fd int, tty uint64) bool {
	if fd < 0 || fd > 1<<20 {
		return false
	}
	var s unix.Stat_t
	if unix.Stat("/proc/"+strconv.Itoa(st.PID)+"/fd/"+strconv.Itoa(fd), &s) != nil {
		return false
	}
	if s.Mode&unix.S_IFMT != unix.S_IFCHR {
		return false
	}
	dev := uint64(s.Rdev)
	return dev == tty || (dev == devTTY && st.TTY == tty)
}

func readMem(pid int, addr uint64, n int) ([]byte, bool) {
	if addr == 0 || n <= 0 || n > 1<<16 {
		return nil, false
	}
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, int64(addr)); err != nil {
		return nil, false
	}
	return buf, true
}

// selectReadsTTY reads the readfds set of a select/pselect6 call.
func selectReadsTTY(st procStat, nfds, readfds uint64, isTTY func(uint64) bool) bool {
	if nfds == 0 || nfds > 1<<16 {
		return false
	}
	set, ok := readMem(st.PID, readfds, int((nfds+63)/64*8))
	if !ok {
		return false
	}
	for fd := uint64(0); fd < nfds; fd++ {
		if set[fd/8]&(1<<(fd%8)) != 0 && isTTY(fd) {
			return true
		}
	}
	return false
}

// pollReadsTTY reads the pollfd array of a poll/ppoll call.
func pollReadsTTY(st procStat, fds, nfds uint64, isTTY func(uint64) bool) bool {
	if nfds == 0 || nfds > 4096 {
		return false
	}
	arr, ok := readMem(st.PID, fds, int(nfds)*8)
	if !ok {
		return false
	}
	for i := 0; i < int(nfds); i++ {
		fd := int32(binary.NativeEndian.Uint32(arr[i*8:]))
		events := binary.NativeEndian.Uint16(arr[i*8+4:])
		if fd >= 0 && events&(unix.POLLIN|unix.POLLPRI|0x40 /* POLLRDNORM */) != 0 && isTTY(uint64(fd)) {
			return true
		}
	}
	return false
}

// epollReadsTTY reads the registered descriptors of an epoll instance from its fdinfo.
func epollReadsTTY(st procStat, epfd int, isTTY func(uint64) bool) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/fdinfo/" + strconv.Itoa(epfd))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "tfd:" || f[2] != "events:" {
			continue
		}
		fd, err1 := strconv.ParseUint(f[1], 10, 32)
		ev, err2 := strconv.ParseUint(f[3], 16, 32)
		if err1 == nil && err2 == nil && ev&unix.EPOLLIN != 0 && isTTY(fd) {
			return true
		}
	}
	return false
}

// switchCount returns voluntary plus involuntary context switches from a status file.
func switchCount(path string) uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var n uint64
	for line := range strings.Lines(string(data)) {
		if name, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(name, "ctxt_switches") {
			x, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			n += x
		}
	}
	return n
}
