//go:build linux

package proctree

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

const available = true

func readStat(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	return ParseStat(string(b))
}

func snapshot() ([]Stat, bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, false
	}
	out := make([]Stat, 0, len(names))
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	pruneEnvCache(out)
	return out, true
}

// childrenOf reads /proc/PID/task/*/children (present when the kernel has
// CONFIG_PROC_CHILDREN).
func childrenOf(pid int) ([]int, bool) {
	base := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(base)
	if err != nil {
		return nil, false
	}
	var kids []int
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

// readTag reports whether process pid carries tag (never, for an empty tag) and whether any
// environment of it could be read. A process whose leader thread exited (pthread_exit in main)
// reads ESRCH, or nothing, from /proc/PID/environ while its other threads still hold the
// environment under /proc/PID/task/TID/environ: those are read then. A non-dumpable process
// reads EACCES everywhere to a normal user.
func readTag(pid int, tag string, prefix bool) (has, readable bool) {
	base := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(base + "/environ")
	if err == nil && len(b) > 0 {
		return envHas(b, tag, prefix), true
	}
	return readThreadTag(pid, tag, prefix, err == nil)
}

// envCache holds the environment first read from each live process, by pid and start time, so
// that the scans of every stop (several per stop, each over the whole process table) read a
// process's environment once instead of once per scan. A process's environment changes only at
// execve, which keeps its pid and start time: the cached one is what it had when first read, so a
// process that drops its tag by exec'ing without it is still found by the tag it carried. Only a
// readable, non-empty environment is kept; each snapshot drops the entries of processes gone.
var envCache struct {
	sync.Mutex
	m map[identity][]byte
}

// readTagOf is readTag for st with the environment cached (see envCache).
func readTagOf(st Stat, tag string, prefix bool) (has, readable bool) {
	id := identity{st.PID, st.StartTime}
	envCache.Lock()
	b, ok := envCache.m[id]
	envCache.Unlock()
	if ok {
		return envHas(b, tag, prefix), true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/environ")
	if err == nil && len(b) > 0 {
		if now, ok := readStat(st.PID); ok && now.StartTime == st.StartTime { // still st's process
			envCache.Lock()
			if envCache.m == nil {
				envCache.m = map[identity][]byte{}
			}
			envCache.m[id] = b
			envCache.Unlock()
		}
		return envHas(b, tag, prefix), true
	}
	return readThreadTag(st.PID, tag, prefix, err == nil)
}

// pruneEnvCache drops the cached environments of processes absent from live, a whole snapshot.
func pruneEnvCache(live []Stat) {
	envCache.Lock()
	defer envCache.Unlock()
	if len(envCache.m) == 0 {
		return
	}
	seen := make(map[identity]bool, len(live))
	for _, st := range live {
		seen[identity{st.PID, st.StartTime}] = true
	}
	for id := range envCache.m {
		if !seen[id] {
			delete(envCache.m, id)
		}
	}
}

// readThreadTag looks for tag in the environment of pid's other threads, for a process whose
// leader thread has exited (its own environ reads empty); readable says whether the leader's read
// succeeded.
func readThreadTag(pid int, tag string, prefix, readable bool) (has, ok bool) {
	base := "/proc/" + strconv.Itoa(pid)
	d, err := os.Open(base + "/task")
	if err != nil {
		return false, readable
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	for _, tid := range tids {
		if tid == strconv.Itoa(pid) {
			continue
		}
		b, err := os.ReadFile(base + "/task/" + tid + "/environ")
		if err != nil {
			continue
		}
		if len(b) > 0 { // every thread shares the one environment: one read is the answer
			return envHas(b, tag, prefix), true
		}
		readable = true
	}
	return false, readable
}

// envHas reports whether the NUL-separated environment env holds tag, or an entry starting with
// tag when prefix is set. An empty tag is never held.
func envHas(env []byte, tag string, prefix bool) bool {
	if tag == "" {
		return false
	}
	for len(env) > 0 {
		i := bytes.IndexByte(env, 0)
		var e []byte
		if i < 0 {
			e, env = env, nil
		} else {
			e, env = env[:i], env[i+1:]
		}
		if prefix && bytes.HasPrefix(e, []byte(tag)) || !prefix && string(e) == tag {
			return true
		}
	}
	return false
}

func signalExact(st Stat, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(st.PID, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return
		}
		// A kernel before 5.3 (ENOSYS), no descriptor left (EMFILE), a process the kernel will not
		// pin: check, then kill(2). The window between the two is the pid reuse risk pidfds close.
		if now, ok := readStat(st.PID); ok && now.StartTime == st.StartTime {
			_ = unix.Kill(st.PID, sig)
		}
		return
	}
	defer unix.Close(fd)
	if now, ok := readStat(st.PID); !ok || now.StartTime != st.StartTime {
		return
	}
	_ = unix.PidfdSendSignal(fd, sig, nil, 0)
}

func reap(st Stat) {
	if Owned(st.PID) {
		return
	}
	now, ok := readStat(st.PID)
	if !ok || now.StartTime != st.StartTime || !now.Dead() || now.PPID != os.Getpid() {
		return
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(st.PID, &ws, unix.WNOHANG, nil)
}

var subreaper struct {
	once sync.Once
	err  error
}

func becomeSubreaper() error {
	subreaper.once.Do(func() {
		subreaper.err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
	return subreaper.err
}

func setDumpable(on bool) error {
	v := 0
	if on {
		v = 1
	}
	return unix.Prctl(unix.PR_SET_DUMPABLE, uintptr(v), 0, 0, 0)
}

func dumpable() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err == nil && v == 1
}

func closeOnExecInherited() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	ents, err := os.ReadDir("/proc/self/fd") // before Linux 5.11: one descriptor at a time
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= 3 {
			unix.CloseOnExec(fd)
		}
	}
}
