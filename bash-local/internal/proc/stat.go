package proc

import (
	"strconv"
	"strings"
)

// Stat is what the process layer knows of a process: on Linux, what it reads from
// /proc/<pid>/stat. Elsewhere there is no /proc to read and trees are tracked by process group only.
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
