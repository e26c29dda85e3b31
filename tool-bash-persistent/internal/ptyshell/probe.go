package ptyshell

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Probe timing: the first look for a program blocked on the terminal comes after probeFirst
// and the interval doubles up to probeMax. A look only finds candidates; whether one is
// waiting is decided by a barrier (see Shell.sendBarrier), never by elapsed time.
const (
	probeFirst = 8 * time.Millisecond
	probeMax   = 100 * time.Millisecond
)

// probe looks, while one command runs, for a thread of the terminal's foreground process group
// blocked reading the terminal. A blocked thread is only a candidate: output it wrote before
// blocking (the end marker, say) may still be on its way to the reader. So a barrier is sent
// through the terminal, and the candidate is confirmed once the reader has passed that barrier,
// if the same thread still sits in the same read and the command's phase has not moved.
type probe struct {
	s        *Shell
	timer    *time.Timer
	interval time.Duration
	pending  *waiter // candidate waiting for its barrier
	barrier  uint64  // the barrier pending waits for
	phase    phase   // the phase pending was seen in
	answered *waiter // thread last sent end-of-file: no candidate until it has read it
}

func newProbe(s *Shell) *probe {
	return &probe{s: s, timer: time.NewTimer(probeFirst), interval: probeFirst}
}

// C returns the channel that says when the next look is due.
func (p *probe) C() <-chan time.Time { return p.timer.C }

func (p *probe) stop() { p.timer.Stop() }

// look is called when a look is due, with the command's phase ph. It schedules the next look
// and, when a thread worth judging is blocked reading the terminal, sends a barrier for it.
func (p *probe) look(ph phase) {
	p.interval = min(p.interval*2, probeMax)
	p.timer.Reset(p.interval)
	if ph == phaseReady || ph == phasePrompt {
		return
	}
	w, _, ok := p.s.blockedReader()
	if !ok || (ph == phaseBody && p.answered != nil && *p.answered == w) {
		return // nobody waits, or our end-of-file has not been consumed yet
	}
	if n, ok := p.s.sendBarrier(); ok {
		p.pending, p.barrier, p.phase = &w, n, ph
	}
}

// confirmed returns the candidate and the foreground group once the reader has passed the
// candidate's barrier (synced is the last barrier it passed), if the same thread still sits in
// the same read and the phase is still ph.
func (p *probe) confirmed(ph phase, synced uint64) (waiter, int, bool) {
	if p.pending == nil || synced < p.barrier {
		return waiter{}, 0, false
	}
	cand := *p.pending
	p.pending = nil
	w, fg, ok := p.s.blockedReader()
	if !ok || w != cand || ph != p.phase {
		return waiter{}, 0, false
	}
	return w, fg, true
}

// sentEOF records that w was sent end-of-file.
func (p *probe) sentEOF(w waiter) { p.answered = &w }

// Stdin-wait answers: each process blocked reading the terminal is sent end-of-file up to
// eofPerProcess times (eofPerRun in all), then SIGINT once, then SIGKILL.
const (
	eofPerProcess = 3
	eofPerRun     = 16
)

// rung is one answer to a process blocked reading the terminal.
type rung uint8

const (
	rungEOF       rung = iota // send end-of-file
	rungInterrupt             // send SIGINT to its process group
	rungKill                  // end-of-file and SIGINT did not help
)

// ladder counts the answers given during one command to each process blocked reading the
// terminal (by pid and start time) and says which comes next.
type ladder struct {
	given map[[2]uint64]answered
	eofs  int // end-of-files sent in all
}

// answered counts the answers given to one process.
type answered struct{ eofs, ints int }

// next returns the answer due to the process of w and counts it as given.
func (l *ladder) next(w waiter) rung {
	if l.given == nil {
		l.given = map[[2]uint64]answered{}
	}
	key := [2]uint64{uint64(w.pid), w.start}
	a := l.given[key]
	var r rung
	switch {
	case a.eofs < eofPerProcess && l.eofs < eofPerRun:
		a.eofs++
		l.eofs++
		r = rungEOF
	case a.ints == 0:
		a.ints++
		r = rungInterrupt
	default:
		r = rungKill
	}
	l.given[key] = a
	return r
}

// sendBarrier writes a sync escape with a new sequence number to the terminal's slave side,
// where it queues behind everything the shell's processes wrote before. When the reader
// reports it (s.synced), all of that output has been processed. It returns false when the
// terminal cannot be written (the barrier is then simply not sent).
func (s *Shell) sendBarrier() (uint64, bool) {
	s.mu.Lock()
	s.syncSent++
	n := s.syncSent
	s.mu.Unlock()
	fd, err := unix.Open(s.ttyPath, unix.O_WRONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	// CAN first: it ends any escape sequence a program left unfinished, so ours is parsed.
	msg := "\x18\x1b]dsh-sync;" + s.token + ";" + strconv.FormatUint(n, 10) + "\x07"
	if _, err := unix.Write(fd, []byte(msg)); err != nil {
		return 0, false
	}
	return n, true
}

// blockedReader returns the first thread of the foreground group blocked reading the terminal.
func (s *Shell) blockedReader() (waiter, int, bool) {
	fg := -1
	if sc, err := s.ptmx.SyscallConn(); err == nil {
		_ = sc.Control(func(fd uintptr) {
			if g, err := foregroundGroup(fd); err == nil {
				fg = g
			}
		})
	}
	if fg <= 0 {
		return waiter{}, 0, false
	}
	ws := ttyWaiters(s.pid, fg, s.tty)
	if len(ws) == 0 {
		return waiter{}, fg, false
	}
	return ws[0], fg, true
}
