//go:build linux

package proclimit

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ownLimit returns this process's soft RLIMIT_NPROC (RLIM_INFINITY, math.MaxUint64, for none).
func ownLimit() (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		return 0, fmt.Errorf(errPrefix+"getrlimit: %w", err)
	}
	return lim.Cur, nil
}

// DefaultCap is the command limit of a harness that has none of its own: half the smaller of
// kernel.pid_max and kernel.threads-max, so that the commands of one user cannot take every
// process id or task of the machine.
func DefaultCap() int {
	pidMax, ok1 := readInt("/proc/sys/kernel/pid_max")
	threadsMax, ok2 := readInt("/proc/sys/kernel/threads-max")
	switch {
	case ok1 && ok2:
		return max(1, min(pidMax, threadsMax)/2)
	case ok1:
		return max(1, pidMax/2)
	case ok2:
		return max(1, threadsMax/2)
	}
	return fallbackCap
}

func readInt(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil && n > 0
}

// Apply sets the soft and hard RLIMIT_NPROC of process pid to cap. Call it before pid runs
// anything that forks (a process held at a gate): the limit binds from then on, and pid's
// descendants inherit it. Lowering a limit needs no privilege.
func Apply(pid, cap int) error {
	lim := unix.Rlimit{Cur: uint64(cap), Max: uint64(cap)}
	if err := unix.Prlimit(pid, unix.RLIMIT_NPROC, &lim, nil); err != nil {
		return fmt.Errorf(errPrefix+"set RLIMIT_NPROC of %d to %d: %w", pid, cap, err)
	}
	return nil
}

// Reached reports whether the tasks of real user uid number at least cap less Margin(cap), so
// that a fork under a limit of cap fails or is about to. It first reads the number of tasks of
// the whole machine from /proc/loadavg (one small read) and counts the user's own, through
// /proc/PID/status, only when that number is that high.
func Reached(uid, cap int) bool {
	floor := cap - Margin(cap)
	if all, ok := machineTasks(); ok && all < floor {
		return false
	}
	return UserTasks(uid) >= floor
}

// machineTasks returns the number of tasks on the machine: the denominator of the fourth field of
// /proc/loadavg ("0.20 0.18 0.12 1/80 11206").
func machineTasks() (int, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return 0, false
	}
	_, all, ok := strings.Cut(f[3], "/")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(all)
	return n, err == nil
}

// UserTasks returns the number of tasks (threads) of the processes whose real user is uid, as
// far as /proc shows them: the count RLIMIT_NPROC is compared with.
func UserTasks(uid int) int {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0
	}
	total := 0
	for _, name := range names {
		if name[0] < '1' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/status")
		if err != nil {
			continue // gone meanwhile
		}
		if real, threads, ok := parseStatus(b); ok && real == uid {
			total += threads
		}
	}
	return total
}

// parseStatus returns the real uid and the thread count of a /proc/PID/status text.
func parseStatus(b []byte) (uid, threads int, ok bool) {
	var haveUID, haveThreads bool
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found {
			continue
		}
		var err error
		switch string(name) {
		case "Uid":
			f := strings.Fields(string(value)) // real, effective, saved, file system
			if len(f) > 0 {
				uid, err = strconv.Atoi(f[0])
				haveUID = err == nil
			}
		case "Threads":
			threads, err = strconv.Atoi(strings.TrimSpace(string(value)))
			haveThreads = err == nil
		}
		if haveUID && haveThreads {
			return uid, threads, true
		}
	}
	return 0, 0, false
}
