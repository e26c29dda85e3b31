//go:build linux

package ptyshell

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// procStat holds the fields of /proc/PID/stat this package uses.
type procStat struct {
	pid     int
	state   byte
	ppid    int
	pgrp    int
	session int
	ttyNr   uint64
	start   uint64 // start time in clock ticks since boot: with pid, a process identity
}

func (s procStat) dead() bool { return s.state == 'Z' || s.state == 'X' || s.state == 'x' }

// parseStat parses the text of /proc/PID/stat. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStat(data string) (procStat, bool) {
	open := strings.IndexByte(data, '(')
	closing := strings.LastIndexByte(data, ')')
	if open < 1 || closing < open || closing+2 > len(data) {
		return procStat{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(data[:open]))
	if err != nil {
		return procStat{}, false
	}
	f := strings.Fields(data[closing+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	num := func(i int) (uint64, bool) {
		v, err := strconv.ParseInt(f[i], 10, 64)
		return uint64(v), err == nil
	}
	ppid, ok1 := num(1)
	pgrp, ok2 := num(2)
	sid, ok3 := num(3)
	tty, ok4 := num(4)
	start, ok5 := num(19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return procStat{}, false
	}
	return procStat{pid: pid, state: f[0][0], ppid: int(ppid), pgrp: int(pgrp), session: int(sid), ttyNr: tty, start: start}, true
}

func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(string(data))
}

// allStats returns the stat of every process visible in /proc.
func allStats() []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// childrenOf lists the children of pid from /proc/PID/task/*/children; ok is false when the
// kernel does not provide those files.
func childrenOf(pid int) (kids []int, ok bool) {
	base := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(base)
	if err != nil {
		return nil, false
	}
	for _, t := range tasks {
		data, err := os.ReadFile(base + "/" + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, false
			}
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, true
}

// descendants returns the stat of root and of every process below it.
func descendants(root int) []procStat {
	st, ok := readStat(root)
	if !ok {
		return nil
	}
	out := []procStat{st}
	if _, ok := childrenOf(root); !ok {
		// No children files: walk the parent links of a full scan.
		all := allStats()
		byParent := map[int][]procStat{}
		for _, s := range all {
			byParent[s.ppid] = append(byParent[s.ppid], s)
		}
		for i := 0; i < len(out); i++ {
			out = append(out, byParent[out[i].pid]...)
		}
		return out
	}
	for i := 0; i < len(out) && i < 4096; i++ {
		kids, _ := childrenOf(out[i].pid)
		for _, k := range kids {
			if s, ok := readStat(k); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// hasEnv reports whether the initial environment of pid holds the entry kv ("NAME=value").
func hasEnv(pid int, kv string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for e := range bytes.SplitSeq(data, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}

var subreaperOnce sync.Once

// becomeSubreaper makes this process the child subreaper of its descendants, so a process that
// leaves a shell's tree by a double fork is re-parented here rather than to init, and is reaped
// by this package once it is stopped. It is process-wide and lasts for the life of the process.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
}

// signalExact sends sig to the process identified by (st.pid, st.start), never to a process
// that reused the pid: the process is pinned with a pidfd and its start time checked first.
func signalExact(st procStat, sig unix.Signal) {
	fd, err := unix.PidfdOpen(st.pid, 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) {
			if cur, ok := readStat(st.pid); ok && cur.start == st.start {
				_ = unix.Kill(st.pid, sig)
			}
		}
		return
	}
	defer unix.Close(fd)
	if cur, ok := readStat(st.pid); !ok || cur.start != st.start {
		return
	}
	_ = unix.PidfdSendSignal(fd, sig, nil, 0)
}

// reap collects the exit status of st if it is a zombie child of this process. The shell
// itself is never reaped here: its exec.Cmd waits for it.
func reap(st procStat, shellPid int) {
	if st.pid == shellPid || st.ppid != os.Getpid() {
		return
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(st.pid, &ws, unix.WNOHANG, nil)
}

// members returns the live processes and zombies that belong to the shell identified by
// (shellPid, its session) and by its environment tag: the shell's descendants, the members of
// its session, and any process whose environment carries the tag (descendants that called
// setsid and were re-parented). tagged is consulted so that processes known from an earlier
// look stay members after their parent is gone.
func members(shellPid int, tag string, known map[int]uint64) []procStat {
	all := allStats()
	byParent := map[int][]int{}
	idx := map[int]int{}
	for i, s := range all {
		byParent[s.ppid] = append(byParent[s.ppid], i)
		idx[s.pid] = i
	}
	in := map[int]bool{}
	var out []procStat
	add := func(i int) {
		s := all[i]
		if in[s.pid] {
			return
		}
		in[s.pid] = true
		out = append(out, s)
	}
	if i, ok := idx[shellPid]; ok {
		add(i)
	}
	for i, s := range all {
		switch {
		case s.pid == shellPid:
		case s.session == shellPid:
			add(i)
		case known[s.pid] == s.start && known[s.pid] != 0:
			add(i)
		case s.pid != os.Getpid() && !s.dead() && hasEnv(s.pid, tag):
			add(i)
		}
	}
	// Descendants of every member.
	for j := 0; j < len(out); j++ {
		for _, i := range byParent[out[j].pid] {
			add(i)
		}
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

// setEchoOff clears ECHO on the terminal fd (the slave, before the shell starts), so typed
// wrapper lines are never echoed back.
func setEchoOff(fd uintptr) error {
	t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	if err != nil {
		return err
	}
	t.Lflag &^= unix.ECHO | unix.ECHONL
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

// waiter identifies one thread blocked reading the terminal: the thread and the number of
// times it has been scheduled, which changes once it wakes up (so a later wait in the same
// thread is told apart from the one already answered).
type waiter struct {
	pid, tid int
	start    uint64
	switches uint64
}

// ttyWaiters returns the threads of the foreground group fg (among root and its descendants)
// that are blocked in a read of the terminal tty: read, readv and pread on a descriptor of it,
// or select, poll and epoll waits whose read set includes one. The evidence is the syscall each
// blocked thread sits in (/proc/PID/task/TID/syscall) and, for the multiplexing calls, the
// descriptor sets read from the process's memory or its epoll fdinfo.
func ttyWaiters(root, fg int, tty uint64) []waiter {
	var out []waiter
	for _, st := range descendants(root) {
		if st.pgrp != fg || st.dead() {
			continue
		}
		base := "/proc/" + strconv.Itoa(st.pid) + "/task/"
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
			if !readsTTY(st, string(data), tty) {
				continue
			}
			out = append(out, waiter{pid: st.pid, tid: tid, start: st.start, switches: switchCount(base + t.Name() + "/status")})
		}
	}
	return out
}

// readsTTY interprets one /proc/PID/task/TID/syscall line of process st.
func readsTTY(st procStat, line string, tty uint64) bool {
	f := strings.Fields(line)
	if len(f) < 7 {
		return false // "running", or blocked outside a system call
	}
	nr, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return false
	}
	var a [6]uint64
	for i := range a {
		v, err := strconv.ParseUint(strings.TrimPrefix(f[i+1], "0x"), 16, 64)
		if err != nil {
			return false
		}
		a[i] = v
	}
	isTTY := func(fd uint64) bool { return fdIsTTY(st, int(fd), tty) }
	switch nr {
	case sysRead, sysReadv, sysPread64, sysPreadv, sysPreadv2:
		return isTTY(a[0])
	case sysSelect, sysPselect6:
		return selectReadsTTY(st, a[0], a[1], isTTY)
	case sysPoll, sysPpoll:
		return pollReadsTTY(st, a[0], a[1], isTTY)
	case sysEpollWait, sysEpollPwait, sysEpollPwait2:
		return epollReadsTTY(st, int(a[0]), isTTY)
	}
	return false
}

func fdIsTTY(st procStat, fd int, tty uint64) bool {
	if fd < 0 || fd > 1<<20 {
		return false
	}
	var s unix.Stat_t
	if unix.Stat("/proc/"+strconv.Itoa(st.pid)+"/fd/"+strconv.Itoa(fd), &s) != nil {
		return false
	}
	if s.Mode&unix.S_IFMT != unix.S_IFCHR {
		return false
	}
	dev := uint64(s.Rdev)
	return dev == tty || (dev == devTTY && st.ttyNr == tty)
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
	set, ok := readMem(st.pid, readfds, int((nfds+63)/64*8))
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
	arr, ok := readMem(st.pid, fds, int(nfds)*8)
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
	data, err := os.ReadFile("/proc/" + strconv.Itoa(st.pid) + "/fdinfo/" + strconv.Itoa(epfd))
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
