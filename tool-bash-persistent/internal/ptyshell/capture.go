package ptyshell

import (
	"bytes"
	"strings"
)

// Output is what a command printed, clipped to a rune budget: Head is the first runes, Tail the
// last ones, and OmittedChars runes holding OmittedLines newlines were dropped between them.
// When nothing was dropped the whole output is in Head and Tail is empty. Output never holds
// wrapper markers or the shell prompt, and is valid UTF-8 without control characters other than
// newline and tab.
type Output struct {
	Head         string
	Tail         string
	OmittedChars int64
	OmittedLines int64
}

// Clipped reports whether runes were dropped between Head and Tail.
func (o Output) Clipped() bool { return o.OmittedChars > 0 }

// Empty reports whether the command printed nothing.
func (o Output) Empty() bool { return o.Head == "" && o.Tail == "" && o.OmittedChars == 0 }

// clipper keeps the first headMax runes of a stream and a tail of at least tailMax runes (at
// most twice that between trims), counting what falls between them. Memory is bounded by the
// budgets whatever the stream length.
type clipper struct {
	headMax, tailMax int
	head             strings.Builder
	headRunes        int
	tail             []byte
	tailRunes        int
	omitted          int64
	omittedLines     int64
	bytes            int64 // everything written, kept or not
}

func (c *clipper) write(s string) {
	if s == "" {
		return
	}
	c.bytes += int64(len(s))
	if c.headRunes < c.headMax {
		cut := runeOffset(s, c.headMax-c.headRunes)
		c.head.WriteString(s[:cut])
		c.headRunes += runeCount(s[:cut])
		s = s[cut:]
	}
	if s == "" {
		return
	}
	n := runeCount(s)
	if n < c.tailMax {
		c.tail = append(c.tail, s...)
		c.tailRunes += n
		if c.tailRunes > 2*c.tailMax+1024 {
			c.trim()
		}
		return
	}
	// s alone fills the tail (the reader hands over large batches): what the tail held and
	// all of s but its last tailMax runes are omitted, counted without being copied.
	cut := lastRunes(s, c.tailMax)
	c.omitted += int64(c.tailRunes + n - c.tailMax)
	c.omittedLines += int64(bytes.Count(c.tail, []byte{'\n'}) + strings.Count(s[:cut], "\n"))
	c.tail = append(c.tail[:0], s[cut:]...)
	c.tailRunes = c.tailMax
}

// trim drops runes from the front of the tail until tailMax remain.
func (c *clipper) trim() {
	drop := c.tailRunes - c.tailMax
	if drop <= 0 {
		return
	}
	i := runeOffset(c.tail, drop)
	c.omittedLines += int64(bytes.Count(c.tail[:i], []byte{'\n'}))
	c.omitted += int64(drop)
	c.tailRunes -= drop
	c.tail = append(c.tail[:0], c.tail[i:]...)
}

func (c *clipper) output() Output {
	c.trim()
	if c.omitted == 0 {
		return Output{Head: c.head.String() + string(c.tail)}
	}
	return Output{
		Head:         c.head.String(),
		Tail:         string(c.tail),
		OmittedChars: c.omitted,
		OmittedLines: c.omittedLines,
	}
}

// lastLine returns the last whole non-empty line written so far (ended by a newline; a line
// still being written is left out) that does not hold skip, without its newline, or "". A line
// cut by the omission counts from the omission on.
func (c *clipper) lastLine(skip string) string {
	text := string(c.tail)
	if c.omitted == 0 {
		text = c.head.String() + text // nothing omitted: the head and the tail are one text
	}
	i := strings.LastIndexByte(text, '\n')
	for i > 0 {
		text = text[:i]
		i = strings.LastIndexByte(text, '\n')
		if line := text[i+1:]; line != "" && (skip == "" || !strings.Contains(line, skip)) {
			return line
		}
	}
	return ""
}

// phase is where a command stands in the stream of the shell.
type phase uint8

const (
	phaseWaitStart phase = iota // line written, start marker not seen yet
	phaseBody                   // start marker seen: output belongs to the command
	phaseEnded                  // end marker and status seen, waiting for the prompt
	phaseReady                  // prompt seen after the end marker: complete
	phasePrompt                 // prompt seen without an end marker
)

// tracker follows one command through the sanitized stream: it finds the start marker, collects
// the output into a clipper, and finds the end marker with the exit status. Markers carry a
// per-command nonce, so output that merely looks like a marker (or an old command's marker) does
// not end the command. Its methods are called with the shell's lock held.
type tracker struct {
	nonce     string
	startMark string // start marker line, newline included
	endMark   string // end marker, followed by the status digits and a newline
	phase     phase
	pending   string // text not yet given to the clipper (a possible marker prefix)
	clip      clipper
	status    int
	cont      bool // continuation prompt seen while the command was pending
	shown     bool // PS1 displayed after the start marker, with no end or prompt marker
}

func newTracker(nonce string, maxChars int) *tracker {
	head := maxChars / 2
	return &tracker{
		nonce:     nonce,
		startMark: startMarker(nonce) + "\n",
		endMark:   endMarker(nonce),
		clip:      clipper{headMax: head, tailMax: maxChars - head},
	}
}

func (t *tracker) event(kind eventKind, text string, _ int) {
	switch kind {
	case evText:
		t.text(text)
	case evCont:
		if t.phase == phaseWaitStart || t.phase == phaseBody {
			t.cont = true
		}
	case evShown:
		// PS1 is displayed after the prompt marker, which ends the command first; the PS1 of
		// the prompt the line was typed at comes before the start marker and is ignored.
		switch t.phase {
		case phaseBody:
			t.shown = true
		case phaseEnded:
			t.phase = phaseReady // the prompt marker did not come (PROMPT_COMMAND changed)
		}
	case evPrompt:
		switch t.phase {
		case phaseWaitStart:
			t.pending = ""
			t.phase = phasePrompt
		case phaseBody:
			t.clip.write(t.pending)
			t.pending = ""
			t.phase = phasePrompt
		case phaseEnded:
			t.phase = phaseReady
		}
	}
}

func (t *tracker) text(s string) {
	switch t.phase {
	case phaseWaitStart:
		t.pending += s
		i := strings.Index(t.pending, t.startMark)
		if i < 0 {
			if keep := len(t.startMark) - 1; len(t.pending) > keep {
				t.pending = t.pending[len(t.pending)-keep:]
			}
			return
		}
		rest := t.pending[i+len(t.startMark):]
		t.pending = ""
		t.phase = phaseBody
		t.body(rest)
	case phaseBody:
		t.body(s)
	}
}

// body adds s to the command output, looking for the end marker.
func (t *tracker) body(s string) {
	p := s
	if t.pending != "" {
		// pending is kept because it may begin the end marker. Unless a marker starts in it,
		// it is output, and s is searched alone: no copy of s.
		edge := t.pending + s[:min(len(s), len(t.endMark)-1)]
		if i := strings.Index(edge, t.endMark); len(s) < len(t.endMark) || (i >= 0 && i < len(t.pending)) {
			p = t.pending + s
		} else {
			t.clip.write(t.pending)
		}
		t.pending = ""
	}
	for {
		i := strings.Index(p, t.endMark)
		if i < 0 {
			break
		}
		after := p[i+len(t.endMark):]
		j := 0
		for j < len(after) && j < 4 && after[j] >= '0' && after[j] <= '9' {
			j++
		}
		if j == len(after) && j < 4 {
			// Torn marker: the digits or the newline have not arrived yet.
			t.clip.write(p[:i])
			t.pending = p[i:]
			return
		}
		if status, ok := parseStatus(after[:j]); ok && after[j] == '\n' {
			t.clip.write(p[:i])
			t.pending = ""
			t.status = status
			t.phase = phaseEnded
			return
		}
		// Marker-looking text that is not our end line: it is output.
		t.clip.write(p[:i+len(t.endMark)])
		p = after
	}
	// Keep back only a tail that begins the end marker: the rest is output now, so the output so
	// far (a progress report) is never a line behind while the command is quiet. The marker is
	// ASCII, so the cut falls on a rune boundary.
	cut := markerStart(p, t.endMark)
	t.clip.write(p[:cut])
	t.pending = p[cut:]
}

// markerStart returns where the longest suffix of p that is a proper prefix of mark begins, or
// len(p) when no suffix of p begins mark.
func markerStart(p, mark string) int {
	for k := max(0, len(p)-(len(mark)-1)); k < len(p); k++ {
		if p[k] == mark[0] && strings.HasPrefix(mark, p[k:]) {
			return k
		}
	}
	return len(p)
}

// output returns what the command printed so far: pending text is included, lines holding the
// command's nonce (wrapper text shown by, for instance, `set -x`) are removed, and the newline
// before the end marker is dropped; partial output (no end marker) loses all trailing newlines,
// such as the one bash prints when a program is interrupted.
func (t *tracker) output() Output {
	if t.phase == phaseBody {
		t.clip.write(t.pending)
		t.pending = ""
	}
	o := t.clip.output()
	o.Head = dropLinesContaining(o.Head, t.nonce)
	o.Tail = dropLinesContaining(o.Tail, t.nonce)
	trim := func(s string) string { return strings.TrimSuffix(s, "\n") }
	if t.phase != phaseEnded && t.phase != phaseReady {
		trim = func(s string) string { return strings.TrimRight(s, "\n") }
	}
	if o.Tail != "" {
		o.Tail = trim(o.Tail)
	} else {
		o.Head = trim(o.Head)
	}
	return o
}

// dropLinesContaining removes every line of s that contains needle, with its newline.
func dropLinesContaining(s, needle string) string {
	if !strings.Contains(s, needle) {
		return s
	}
	var b strings.Builder
	for line := range strings.SplitAfterSeq(s, "\n") {
		if !strings.Contains(line, needle) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// trimPrompt removes the shell's primary prompt, and the newlines before it, from the end of o:
// a shell whose markers no longer reach us still prints its prompt on standard error.
func trimPrompt(o Output) Output {
	cut := func(s string) string { return strings.TrimRight(strings.TrimSuffix(s, Prompt), "\n") }
	if o.Tail != "" {
		o.Tail = cut(o.Tail)
	} else {
		o.Head = cut(o.Head)
	}
	return o
}
