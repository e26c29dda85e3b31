package bashlocal

import (
	"time"

	"github.com/dsh-go/dsh/bash-local/internal/proc"
	"github.com/dsh-go/dsh/internal/proclimit"
)

// The process limit. Every command runs under an RLIMIT_NPROC (Config.MaxProcesses, derived by
// proclimit.Cap) lower than the harness's own, set while bash waits at its gate: a fork bomb's
// forks fail at the commands' limit while the harness can still create the threads it needs.
// The limit counts every task of the user, so a tree that holds it starves every other command
// of the user too: the executor kills it. The signal is the kernel's own condition, the user's
// tasks at the limit (proclimit.Reached, sampled every limitPoll while commands run, and once
// more when a run settles with survivors in its group); the tree stopped is the largest live one
// of this executor, when it holds at least minLimitShare of the limit, so that a small command
// is not taken for the cause when something else holds the user's tasks.

// minLimitShare is the share of the process limit (1/minLimitShare) that a tree must hold to be
// stopped for it.
const minLimitShare = 8

// watchLimit checks the process limit every limitPoll until Close.
func (e *Executor) watchLimit() {
	tick := time.NewTicker(limitPoll)
	defer tick.Stop()
	for {
		select {
		case <-e.stopPoll:
			return
		case <-tick.C:
			e.enforceLimit()
		}
	}
}

// enforceLimit kills the largest live tree, and closes its channel in live, when the user's
// tasks are at the commands' limit and that tree holds at least 1/minLimitShare of it. It sends
// SIGKILL at once: the bash processes of a fork bomb outlived SIGTERM for a whole grace period
// (1 s), still forking, in TestForkBombIsBounded, and a grace period only keeps every command of
// the user starved longer.
func (e *Executor) enforceLimit() {
	e.mu.Lock()
	live := make([]*proc.Process, 0, len(e.live))
	for p := range e.live {
		live = append(live, p)
	}
	e.mu.Unlock()
	if len(live) == 0 || !proclimit.Reached(e.uid, e.nproc) {
		return
	}
	var top *proc.Process
	most := 0
	for _, p := range live {
		if n := p.Tasks(); n > most {
			top, most = p, n
		}
	}
	if top == nil || most < max(1, e.nproc/minLimitShare) {
		return
	}
	e.mu.Lock()
	if limited, ok := e.live[top]; ok && !chanClosed(limited) {
		close(limited)
	}
	e.mu.Unlock()
	top.ForceKill() // no grace: the tree holds every task the user's commands may have
}

// settleLimit is called once p has settled. When p's group still has members, it checks the
// limit now (a fork bomb's leader exits at once, and the run settles while the bomb lives); when
// p's tree was stopped for the limit, it waits until the tree is gone, so that the next command
// finds the user's tasks free again, and reports true.
func (e *Executor) settleLimit(p *proc.Process, limited <-chan struct{}) bool {
	if !chanClosed(limited) && p.GroupAlive() {
		e.enforceLimit()
	}
	if !chanClosed(limited) {
		return false
	}
	<-p.Stopped()
	return true
}

// chanClosed reports whether ch is closed.
func chanClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
