package proctree

import "sync"

// The children this process started and waits for itself. A child subreaper also has children
// it never started: escapees of its commands, re-parented to it when their parent died. Only
// the first kind may be waited for by an exec.Cmd; the second is found by Tree.Orphans and
// reaped here. The registry tells them apart.
var owned struct {
	// start is held shared while a child is being started and until it is registered, and
	// exclusively while the orphans of this process are told apart from its owned children:
	// between fork and exec a child of a non-dumpable process is itself unreadable, and it must
	// not be taken for an escapee hiding its tag.
	start sync.RWMutex

	mu   sync.Mutex  // guards pids
	pids map[int]int // pid → number of owners
}

// Own records pid as a child that the caller started and waits for itself (an exec.Cmd's
// process), so that an escapee sweep never takes it for an orphan and Reap never steals its exit
// status. It returns the function that ends the record, to be called once the caller has waited
// for the child; calling it again does nothing. Use StartOwned instead where the child is
// started, so that no sweep sees it before it is recorded.
func Own(pid int) (release func()) {
	owned.mu.Lock()
	if owned.pids == nil {
		owned.pids = map[int]int{}
	}
	owned.pids[pid]++
	owned.mu.Unlock()
	return sync.OnceFunc(func() {
		owned.mu.Lock()
		defer owned.mu.Unlock()
		if owned.pids[pid]--; owned.pids[pid] <= 0 {
			delete(owned.pids, pid)
		}
	})
}

// StartOwned calls start, which starts one child and returns its pid, and records the child as
// owned (see Own) before any escapee sweep (Tree.Orphans) can look at the children of this
// process. It returns start's error, or the function that ends the record, to be called once the
// caller has waited for the child. start must not call StartOwned itself.
func StartOwned(start func() (int, error)) (release func(), err error) {
	owned.start.RLock()
	defer owned.start.RUnlock()
	pid, err := start()
	if err != nil {
		return nil, err
	}
	return Own(pid), nil
}

// Owned reports whether pid is recorded as owned (see Own).
func Owned(pid int) bool {
	owned.mu.Lock()
	defer owned.mu.Unlock()
	return owned.pids[pid] > 0
}

// FreezeStarts makes every later StartOwned block for good, and waits until those in progress
// have registered their child: for a process about to stop everything it started and exit, so
// that no child is born after the last look.
func FreezeStarts() { owned.start.Lock() }

// holders counts the parts of this process that are open and start commands whose escapees may be
// re-parented here (see Hold).
var holders struct {
	sync.Mutex
	n int
}

// Hold registers a holder of escapees, a part of this process (an executor, a set of shells) that
// starts commands whose escapees may be re-parented here, until the returned release is called,
// when the holder closes. release reports whether the holder was the last one open: only then may
// its final sweep set Tree.Orphans, since an orphan cannot be told apart from the escapees of a
// holder still open, whose commands it would stop. A later call of release reports false. An
// escapee that hides its tag and outlives its parent is therefore stopped when the last holder
// closes, not before.
func Hold() (release func() (last bool)) {
	holders.Lock()
	holders.n++
	holders.Unlock()
	var once sync.Once
	return func() (last bool) {
		once.Do(func() {
			holders.Lock()
			defer holders.Unlock()
			holders.n--
			last = holders.n == 0
		})
		return last
	}
}
