package proctree

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Tree says which processes belong to one command. A process belongs when it is the leader, a
// member of the group or the session, carries the tag, is an orphan or a child of this process
// as the options below say, descends from a member, or was once seen as a member and is still
// the same process (pid and start time): a member that changes its environment or leaves its
// session stays known.
type Tree struct {
	// Leader is the process an exec.Cmd started and waits for; 0 when there is none (a sweep).
	// The package never reaps it.
	Leader int
	// Group is a process group whose members belong; it is also signalled as a whole. 0: none.
	Group int
	// Session is a session whose members belong. 0: none.
	Session int
	// Tag is an environment entry "NAME=value" that marks members; with TagPrefix, any entry that
	// starts with Tag does. Empty: none.
	Tag       string
	TagPrefix bool
	// Orphans makes members of the escapees that hide their tag: every live child of this
	// process that runs in another session than this process, that no one here owns (see Own)
	// and whose environment cannot be read (it made itself non-dumpable). This process must be a
	// child subreaper (BecomeSubreaper) for escapees to be re-parented to it. An orphan cannot be
	// told apart from the escapees of another tree, so only a sweep of every tree should set it:
	// the final sweep of the last holder to close (see Hold).
	Orphans bool
	// Descendants makes members of every descendant of this process: the last sweep of a
	// process that is about to exit.
	Descendants bool
}

// DefaultPoll is how often a stopping tree is checked for survivors.
const DefaultPoll = 15 * time.Millisecond

// StopOptions configure a Stopper.
type StopOptions struct {
	// Grace is the time between the soft signals and SIGKILL.
	Grace time.Duration
	// Soft are the signals sent first, in order, to every member (and again to members found
	// later). Nil means SIGTERM then SIGCONT, so that a stopped process gets the SIGTERM too.
	Soft []syscall.Signal
	// LeaderExited is closed once the leader's exec.Cmd has reaped it; nil when there is no
	// leader. While it is open the tree is alive.
	LeaderExited <-chan struct{}
	// Reap lets the stopper reap members that were re-parented to this process (a child
	// subreaper) once they are dead. Leave it off for a sweep that may see the leaders of other
	// trees, whose exit status belongs to their exec.Cmd.
	Reap bool
	// Poll is how often a stopping tree is checked (DefaultPoll when zero).
	Poll time.Duration
	// WG, when set, counts the goroutine that stops the tree.
	WG *sync.WaitGroup
}

// Stopper stops one tree: the soft signals, the grace period, then SIGKILL, until two scans in
// a row, a poll interval apart, find nothing (a process in the middle of execve can briefly show
// an empty environment and so miss its tag). Its methods are safe for concurrent use.
type Stopper struct {
	tree Tree
	opt  StopOptions

	mu        sync.Mutex // guards what follows
	known     map[int]uint64
	signalled map[identity]bool // members that got the soft signals
	started   bool
	gone      bool
	forced    bool
	force     chan struct{}
	stopped   chan struct{}
	killing   chan struct{} // closed when SIGKILL first goes to what is left
	killed    bool          // killing is closed
}

type identity struct {
	pid   int
	start uint64
}

// NewStopper returns a stopper for tree with options opt; nothing is signalled until Terminate.
func NewStopper(tree Tree, opt StopOptions) *Stopper {
	if opt.Soft == nil {
		opt.Soft = []syscall.Signal{syscall.SIGTERM, syscall.SIGCONT}
	}
	if opt.Poll <= 0 {
		opt.Poll = DefaultPoll
	}
	return &Stopper{tree: tree, opt: opt, known: map[int]uint64{}, signalled: map[identity]bool{},
		force: make(chan struct{}), stopped: make(chan struct{}), killing: make(chan struct{})}
}

// Members returns the live members of the tree now, outside the process group included, and
// remembers them. Dead members re-parented here are reaped when StopOptions.Reap is set. Once
// the tree is gone it returns nothing: its ids may belong to other processes by then.
func (s *Stopper) Members() []Stat {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return nil
	}
	return s.scanLocked()
}

func (s *Stopper) scanLocked() []Stat {
	if s.tree.Orphans { // no child may be half-started (unreadable, unowned) while orphans are told
		owned.start.Lock()
		defer owned.start.Unlock()
	}
	all, ok := snapshot()
	if !ok {
		return s.fallbackMembers()
	}
	me := self{pid: os.Getpid()}
	in := map[int]bool{}
	var members []Stat
	byParent := map[int][]int{}
	for i, st := range all {
		byParent[st.PPID] = append(byParent[st.PPID], i)
		if st.PID == me.pid {
			me.session = st.Session
		}
	}
	for i, st := range all {
		if st.PID == me.pid || in[st.PID] || !s.belongs(st, me) {
			continue
		}
		in[st.PID] = true
		members = append(members, all[i])
	}
	for j := 0; j < len(members); j++ { // descendants of members belong
		for _, i := range byParent[members[j].PID] {
			if st := all[i]; !in[st.PID] && st.PID != me.pid {
				in[st.PID] = true
				members = append(members, st)
			}
		}
	}
	live := members[:0]
	for _, st := range members {
		if st.Dead() {
			if s.opt.Reap && st.PID != s.tree.Leader {
				reap(st)
			}
			delete(s.known, st.PID)
			continue
		}
		s.known[st.PID] = st.StartTime
		live = append(live, st)
	}
	return live
}

// self is this process as a scan sees it.
type self struct{ pid, session int }

func (s *Stopper) belongs(st Stat, me self) bool {
	t := s.tree
	switch {
	case st.PID == t.Leader,
		t.Group > 0 && st.PGRP == t.Group,
		t.Session > 0 && st.Session == t.Session,
		t.Descendants && st.PPID == me.pid:
		return true
	}
	if start, ok := s.known[st.PID]; ok && start == st.StartTime {
		return true
	}
	if st.Dead() {
		return false
	}
	orphan := t.Orphans && st.PPID == me.pid && st.Session != me.session && !Owned(st.PID)
	if t.Tag == "" && !orphan {
		return false
	}
	has, readable := readTagOf(st, t.Tag, t.TagPrefix)
	return has || orphan && !readable
}

// fallbackMembers is the tree without a process table: the leader and, standing for the group,
// its id while the group has members.
func (s *Stopper) fallbackMembers() []Stat {
	var out []Stat
	if s.tree.Group > 0 && !errors.Is(unix.Kill(-s.tree.Group, 0), unix.ESRCH) {
		out = append(out, Stat{PID: s.tree.Group, PGRP: s.tree.Group, State: 'S'})
	}
	if l := s.tree.Leader; l > 0 && l != s.tree.Group && s.leaderAlive() {
		out = append(out, Stat{PID: l, State: 'S'})
	}
	return out
}

// Remember makes the process st describes a member for as long as it is that process (same pid
// and start time), whatever it does to its environment, group or session later. A caller that
// watches cheaply between stops (its own children, say) hands what it found here.
func (s *Stopper) Remember(st Stat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.gone && !st.Dead() {
		s.known[st.PID] = st.StartTime
	}
}

// Knows reports whether st is a process the stopper has seen as a member (and forgets it once it
// is dead, so that the caller may reap it).
func (s *Stopper) Knows(st Stat) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	start, ok := s.known[st.PID]
	if !ok || start != st.StartTime {
		return false
	}
	if st.Dead() {
		delete(s.known, st.PID)
	}
	return true
}

// GroupAlive reports whether the process group still has members, zombies included: one
// system call, cheap enough for every run. Members outside the group are not seen.
func (s *Stopper) GroupAlive() bool {
	if s.tree.Group <= 0 || s.Gone() {
		return false
	}
	return !errors.Is(unix.Kill(-s.tree.Group, 0), unix.ESRCH)
}

func (s *Stopper) leaderAlive() bool {
	if s.opt.LeaderExited == nil {
		return false
	}
	select {
	case <-s.opt.LeaderExited:
		return false
	default:
		return true
	}
}

// Gone reports whether the tree has been observed gone. Once it has, nothing is ever signalled
// again through this stopper, since its ids may be reused.
func (s *Stopper) Gone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// Alive checks now whether any member of the tree is alive, and records the tree gone once two
// scans in a row find nothing while the leader has exited. The two scans run back to back: a
// scan reads /proc as it changes, so one may miss a process created while it reads, and the
// second sees it; waiting between them would only make every stop of an empty tree slower.
func (s *Stopper) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, alive := s.checkLocked()
	return alive
}

func (s *Stopper) checkLocked() ([]Stat, bool) {
	if s.gone {
		return nil, false
	}
	for empty := 0; ; empty++ {
		members := s.scanLocked()
		if len(members) > 0 || s.leaderAlive() {
			return members, true
		}
		if empty == 1 {
			s.gone = true
			return nil, false
		}
	}
}

// Terminate starts stopping the tree on a goroutine and returns at once: the soft signals now
// (and to members found later), SIGKILL after the grace period, until the tree is gone; then
// Stopped is closed. A second call does nothing (the grace period does not restart).
func (s *Stopper) Terminate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started = true
	if s.opt.WG != nil {
		s.opt.WG.Add(1)
	}
	go s.run()
}

// ForceKill sends SIGKILL to what is left of the tree now, without waiting for the grace period,
// starting the stop if Terminate has not.
func (s *Stopper) ForceKill() {
	s.Terminate()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.forced {
		s.forced = true
		close(s.force)
	}
}

// Stopped is closed once a Terminate or ForceKill has seen the whole tree gone.
func (s *Stopper) Stopped() <-chan struct{} { return s.stopped }

// Killing is closed once the stop has sent SIGKILL to what was left of the tree (the grace period
// passed, or ForceKill), so a caller waiting for Stopped knows the tree outlived the soft signals.
// It stays open when the soft signals were enough.
func (s *Stopper) Killing() <-chan struct{} { return s.killing }

// Wait starts the stop, as Terminate, and returns once the tree is gone (true) or SIGKILL has
// been sent to what is left of it after the grace period (false), or when done is closed (false).
func (s *Stopper) Wait(done <-chan struct{}) (gone bool) {
	s.Terminate()
	select {
	case <-s.stopped:
		return true
	case <-s.killing:
	case <-done:
	}
	select {
	case <-s.stopped:
		return true
	default:
		return false
	}
}

func (s *Stopper) run() {
	if s.opt.WG != nil {
		defer s.opt.WG.Done()
	}
	defer close(s.stopped)
	grace := time.NewTimer(s.opt.Grace)
	defer grace.Stop()
	tick := time.NewTicker(s.opt.Poll)
	defer tick.Stop()
	killing, force, leader := false, s.force, s.opt.LeaderExited
	for s.step(killing) {
		select {
		case <-tick.C:
		case <-leader:
			leader = nil // closed: stop selecting on it, check now
		case <-grace.C:
			killing = true
		case <-force:
			force, killing = nil, true
		}
	}
}

// step signals the members alive now, the soft signals to those that have not had them or
// SIGKILL to all when killing, and reports whether the tree is still alive.
func (s *Stopper) step(killing bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	members, alive := s.checkLocked()
	if !alive {
		return false
	}
	if killing && !s.killed {
		defer func() { s.killed = true; close(s.killing) }() // once the signals are sent
	}
	if g := s.tree.Group; g > 0 {
		if killing {
			_ = unix.Kill(-g, unix.SIGKILL)
		} else if !s.signalled[identity{pid: -g}] {
			s.signalled[identity{pid: -g}] = true
			for _, sig := range s.opt.Soft {
				_ = unix.Kill(-g, sig)
			}
		}
	}
	for _, st := range members {
		inGroup := s.tree.Group > 0 && st.PGRP == s.tree.Group
		if killing {
			if !inGroup { // the group as a whole has had it
				signalExact(st, unix.SIGKILL)
			}
			continue
		}
		id := identity{st.PID, st.StartTime}
		if inGroup && s.signalled[identity{pid: -s.tree.Group}] {
			s.signalled[id] = true // it had the soft signals with its group
		}
		if s.signalled[id] {
			continue
		}
		s.signalled[id] = true
		for _, sig := range s.opt.Soft {
			signalExact(st, sig)
		}
	}
	return true
}
