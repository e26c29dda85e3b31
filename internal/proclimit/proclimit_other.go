//go:build !linux

package proclimit

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ownLimit returns this process's soft RLIMIT_NPROC (RLIM_INFINITY, math.MaxUint64, for none).
func ownLimit() (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		return 0, fmt.Errorf(errPrefix+"getrlimit: %w", err)
	}
	return uint64(lim.Cur), nil
}

// DefaultCap is the command limit of a harness that has none of its own; outside Linux the
// kernel's limits are not read and it is fallbackCap.
func DefaultCap() int { return fallbackCap }

// Apply does nothing outside Linux: no call sets another process's limit there.
func Apply(pid, cap int) error { return nil }

// Reached is always false outside Linux: there is no /proc to count the user's tasks in.
func Reached(uid, cap int) bool { return false }

// UserTasks is always 0 outside Linux.
func UserTasks(uid int) int { return 0 }
