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

func hasTag(pid int, tag string, prefix bool) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		var e []byte
		if i < 0 {
			e, b = b, nil
		} else {
			e, b = b[:i], b[i+1:]
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
		if errors.Is(err, unix.ENOSYS) { // a kernel before 5.3: check, then kill(2)
			if now, ok := readStat(st.PID); ok && now.StartTime == st.StartTime {
				_ = unix.Kill(st.PID, sig)
			}
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
