//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

func readStat(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	return ParseStat(string(b))
}

// Scan calls fn for every process visible in /proc, stopping early when fn returns false. It
// reports false when /proc cannot be read.
func Scan(fn func(Stat) bool) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		if !fn(st) {
			break
		}
	}
	return true
}

// HasEnv reports whether process pid was started with the variable entry ("NAME=value") in its
// environment, or, when prefix is true, with an entry that starts with entry.
func HasEnv(pid int, entry string, prefix bool) bool {
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
		if prefix && bytes.HasPrefix(e, []byte(entry)) || !prefix && string(e) == entry {
			return true
		}
	}
	return false
}

// signalExact sends sig to pid only if it is still the process described by st, using a pidfd
// so that a recycled pid is never signalled.
func signalExact(st Stat, sig unix.Signal) {
	fd, err := unix.PidfdOpen(st.PID, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if now, ok := readStat(st.PID); !ok || now.StartTime != st.StartTime {
		return
	}
	_ = unix.PidfdSendSignal(fd, sig, nil, 0)
}

const procAvailable = true

// reapOrphan collects the exit status of st when it is a zombie child of this process: a
// descendant that left its group and was re-parented here because some component made this
// process a child subreaper. Without that, nobody would ever reap it. The leader (pid leader) is
// never reaped here: its exec.Cmd waits for it.
func reapOrphan(st Stat, leader int) {
	if st.PID == leader {
		return
	}
	now, ok := readStat(st.PID)
	if !ok || now.StartTime != st.StartTime || !now.Dead() || now.PPID != os.Getpid() {
		return
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(st.PID, &ws, unix.WNOHANG, nil)
}
