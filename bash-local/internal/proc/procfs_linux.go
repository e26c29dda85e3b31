//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Stat is what the process layer reads from /proc/<pid>/stat.
type Stat struct {
	PID       int
	State     byte
	PPID      int
	PGRP      int
	Session   int
	StartTime uint64
}

// Dead reports whether the process has exited (a zombie waiting to be reaped, or dead).
func (s Stat) Dead() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// ParseStat parses the contents of /proc/<pid>/stat. The command name is in parentheses and may
// itself contain spaces and parentheses, so fields are counted from the last ')'.
func ParseStat(data string) (Stat, bool) {
	open := strings.IndexByte(data, '(')
	closing := strings.LastIndexByte(data, ')')
	if open <= 0 || closing < open {
		return Stat{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(data[:open]))
	if err != nil || pid <= 0 {
		return Stat{}, false
	}
	// After ")": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
	// stime cutime cstime priority nice num_threads itrealvalue starttime ...
	f := strings.Fields(data[closing+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, false
	}
	st := Stat{PID: pid, State: f[0][0]}
	var errs [4]error
	st.PPID, errs[0] = strconv.Atoi(f[1])
	st.PGRP, errs[1] = strconv.Atoi(f[2])
	st.Session, errs[2] = strconv.Atoi(f[3])
	st.StartTime, errs[3] = strconv.ParseUint(f[19], 10, 64)
	for _, e := range errs {
		if e != nil {
			return Stat{}, false
		}
	}
	return st, true
}

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
