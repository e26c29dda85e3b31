// Package proclimit keeps the commands of a harness from exhausting the processes the harness
// itself needs. RLIMIT_NPROC bounds the tasks (processes and threads) of a user: a fork fails
// with EAGAIN once the tasks of its real user number the forking task's limit. Each command gets
// a limit lower than the harness's own (Cap, Apply), so a fork bomb stops at the command's limit
// while the harness may still create threads up to its own; Reached tells when the user's tasks
// are at a command's limit, the condition under which every fork of a command fails.
//
// The kernel exempts root (the initial user namespace's uid 0) and any task with CAP_SYS_RESOURCE
// or CAP_SYS_ADMIN from the limit: for them Apply sets a limit that binds nothing. Apply works on
// Linux only; elsewhere it does nothing and Reached is always false.
package proclimit

import "math"

// Reserve is what the command limit leaves the harness under its own: the tasks it may still
// create (its runtime's threads) while its commands' forks fail.
const Reserve = 64

// errPrefix starts every error of the package.
const errPrefix = "proclimit: "

// Cap returns the RLIMIT_NPROC every command gets. When want is positive it is want, but never
// more than the harness's own soft limit less Reserve (want is taken as it is when the harness
// has no limit). Otherwise it is derived: the harness's own soft limit less Reserve (half the
// limit when that is not more than 2×Reserve), or, when the harness has no limit, half the
// smaller of the kernel's pid_max and threads-max (DefaultCap). It fails only when the harness's
// own limit cannot be read.
func Cap(want int) (int, error) {
	soft, err := ownLimit()
	if err != nil {
		return 0, err
	}
	return capFor(want, soft), nil
}

// capFor is Cap for a harness whose own soft limit is soft (math.MaxUint64 when it has none).
func capFor(want int, soft uint64) int {
	if soft == math.MaxUint64 || soft > math.MaxInt32 {
		if want > 0 {
			return want
		}
		return DefaultCap()
	}
	ceiling := int(soft) - Reserve
	if soft <= 2*Reserve {
		ceiling = max(1, int(soft)/2)
	}
	if want > 0 {
		return min(want, ceiling)
	}
	return ceiling
}

// fallbackCap is DefaultCap where the kernel's limits cannot be read: half of pid_max's usual
// default.
const fallbackCap = 16384

// Margin is how far below cap the user's tasks count as having reached it: a fork bomb at its
// limit keeps losing the processes that gave up and exit, so a sample finds it a little below.
func Margin(cap int) int { return max(2, cap/64) }
