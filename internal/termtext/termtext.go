// Package termtext turns what programs write to a terminal into plain text a model can read,
// and that no terminal will interpret: escape sequences (colours, titles, clipboard writes,
// hyperlinks), control characters and invalid UTF-8 removed, line ends made one newline. The
// persistent shell runs its pseudo-terminal through a [Sanitizer] that also reports its own
// markers; the one-shot tool cleans whole results with [String].
package termtext

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// Event tells what a [Sanitizer] found in the stream: Text, or a marker its match function
// recognised (any other value, the caller's own).
type Event uint8

// Text is the event of printable text: valid UTF-8 with only newline and tab as controls.
const Text Event = 0

// maxEscape bounds the intermediate bytes of an ESC sequence before it is abandoned.
const maxEscape = 4096

// maxOSCPayload is the longest OSC payload kept for marker matching; ours are far shorter.
const maxOSCPayload = 256

type escState uint8

const (
	escNone    escState = iota
	escStart            // after ESC
	escInter            // ESC + intermediate bytes (0x20–0x2F), waiting for a final byte
	escCSI              // ESC [ ...
	escString           // OSC / DCS / SOS / PM / APC payload
	escStringE          // ESC seen inside a string sequence (maybe ST)
)

// Sanitizer turns the raw byte stream of a terminal into plain text and events. It is a
// streaming, line-oriented filter, not a terminal emulator: escape sequences are dropped (CSI,
// OSC, DCS and friends, two-byte escapes), controls other than newline and tab are dropped,
// a run of CRs becomes one LF, and so does a run of CRs followed by LF (a program's CR LF reaches
// us as CR CR LF when the terminal adds its own CR), invalid UTF-8 becomes U+FFFD, C1 controls
// are dropped. An OSC sequence whose payload match recognises becomes an event instead.
// Every escape is bounded by maxEscape, so no input makes it buffer without limit.
//
// A Sanitizer is not safe for concurrent use.
type Sanitizer struct {
	match func(payload string) (Event, int, bool) // nil: no OSC is an event

	state   escState
	escLen  int    // bytes consumed by the current escape
	osc     []byte // payload of the current string sequence (first maxOSCPayload bytes)
	oscOver bool   // payload longer than maxOSCPayload: cannot be a marker
	isOSC   bool   // the current string sequence is an OSC (others are never markers)
	carry   []byte // incomplete UTF-8 sequence at the end of the previous chunk
	heldCR  bool   // CRs not yet written: one LF, with the LF that may follow them

	text strings.Builder
}

// New returns a Sanitizer that reports the OSC payloads match recognises as events: match
// returns the event, a number to go with it, and whether the payload is a marker at all. With
// a nil match every OSC is dropped.
func New(match func(payload string) (ev Event, status int, ok bool)) *Sanitizer {
	return &Sanitizer{match: match}
}

// Emit receives sanitized text (event Text) and events, in stream order.
type Emit func(ev Event, text string, status int)

// Feed sanitizes p and reports text and events through emit, in order. Text is reported in
// pieces that never split a UTF-8 sequence; a sequence cut by the end of p is completed by the
// next call (or becomes U+FFFD at Flush).
func (z *Sanitizer) Feed(p []byte, emit Emit) {
	if len(z.carry) > 0 {
		p = append(z.carry, p...)
		z.carry = nil
	}
	z.feedBytes(p, emit)
	z.flushText(emit)
}

func (z *Sanitizer) feedBytes(p []byte, emit Emit) {
	for i := 0; i < len(p); {
		b := p[i]
		if z.state != escNone {
			z.escape(b, emit)
			i++
			continue
		}
		if b == '\r' {
			z.heldCR = true // resolved by the next byte that is not a CR, or by flush
			i++
			continue
		}
		if z.heldCR {
			z.heldCR = false
			z.text.WriteByte('\n')
			if b == '\n' {
				i++
				continue
			}
		}
		switch {
		case b == 0x1b:
			z.state, z.escLen = escStart, 1
			i++
		case plain[b]:
			j := i + plainLen(p[i:])
			z.text.Write(p[i:j])
			i = j
		case b < 0x80:
			i++ // other C0 controls and DEL are dropped
		default:
			if !utf8.FullRune(p[i:]) {
				z.carry = append([]byte(nil), p[i:]...)
				return
			}
			r, size := utf8.DecodeRune(p[i:])
			z.putRune(r)
			i += size
		}
	}
}

// putRune appends r unless it is a C1 control (U+0080–U+009F), which some terminals still
// interpret (U+009B is a CSI).
func (z *Sanitizer) putRune(r rune) {
	if r >= 0x80 && r <= 0x9f {
		return
	}
	z.text.WriteRune(r)
}

func (z *Sanitizer) escape(b byte, emit Emit) {
	z.escLen++
	if b == 0x18 || b == 0x1a { // CAN and SUB cancel any sequence
		z.state = escNone
		return
	}
	switch z.state {
	case escStart:
		switch {
		case b == '[':
			z.state = escCSI
		case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
			z.state = escString
			z.isOSC = b == ']'
			z.osc = z.osc[:0]
			z.oscOver = false
		case b == 0x1b:
			z.state, z.escLen = escStart, 1 // ESC ESC: the first one is dropped
		case b >= 0x20 && b <= 0x2f:
			z.state = escInter
		default:
			z.state = escNone // two-byte escape (or a control after ESC): dropped
		}
	case escInter:
		if b == 0x1b {
			z.state, z.escLen = escStart, 1
		} else if b < 0x20 || b > 0x2f || z.escLen > maxEscape {
			z.state = escNone
		}
	case escCSI:
		if b >= 0x40 && b <= 0x7e {
			z.state = escNone
		} else if b == 0x1b {
			z.state, z.escLen = escStart, 1
		} else if b < 0x20 || b > 0x3f {
			// Not a CSI byte: the sequence is malformed. Drop it and this byte.
			z.state = escNone
		}
		// A CSI is never stored, so an over-long one costs nothing: it is discarded through
		// its final byte.
	case escString:
		switch b {
		case 0x07:
			z.endString(emit)
		case 0x1b:
			z.state = escStringE
		default:
			if len(z.osc) < maxOSCPayload {
				z.osc = append(z.osc, b)
			} else {
				z.oscOver = true
			}
		}
	case escStringE:
		if b == '\\' {
			z.endString(emit)
			return
		}
		// ESC not followed by '\': the string is abandoned and a new escape starts here.
		z.state, z.escLen = escStart, 1
		z.escape(b, emit)
	}
}

func (z *Sanitizer) endString(emit Emit) {
	z.state = escNone
	if !z.isOSC || z.oscOver || z.match == nil {
		return
	}
	if kind, status, ok := z.match(string(z.osc)); ok {
		z.flushText(emit)
		emit(kind, "", status)
	}
}

// Flush ends the stream: a held CR becomes a newline, a dangling UTF-8 sequence becomes U+FFFD
// and an unfinished escape is dropped.
func (z *Sanitizer) Flush(emit Emit) {
	if z.heldCR {
		z.heldCR = false
		z.text.WriteByte('\n')
	}
	if len(z.carry) > 0 {
		z.carry = nil
		z.text.WriteRune(utf8.RuneError)
	}
	z.state = escNone
	z.flushText(emit)
}

func (z *Sanitizer) flushText(emit Emit) {
	if z.text.Len() == 0 {
		return
	}
	s := z.text.String()
	z.text.Reset()
	emit(Text, s, 0)
}

// plain holds the bytes that pass the sanitizer as they are: printable ASCII, newline and tab.
var plain = func() (t [256]bool) {
	for b := 0x20; b < 0x7f; b++ {
		t[b] = true
	}
	t['\n'], t['\t'] = true, true
	return t
}()

// plainLen returns the length of the longest prefix of p made of plain bytes. Most output is
// plain, so it is checked eight bytes at a time (see plainWord); a word that is not plain is
// looked at byte by byte.
func plainLen(p []byte) int {
	i := 0
	for {
		for i+8 <= len(p) && plainWord(binary.LittleEndian.Uint64(p[i:i+8])) {
			i += 8
		}
		for end := min(i+8, len(p)); i < end; i++ {
			if !plain[p[i]] {
				return i
			}
		}
		if i == len(p) {
			return i
		}
	}
}

// plainWord reports whether the eight bytes of w are all plain: none has its high bit set,
// none is below 0x09, between 0x0a and 0x20 (exclusive) or equal to 0x7f. The tests are the
// classic bit tricks for "some byte less than n" and "some byte between m and n", exact for
// bytes below 0x80.
func plainWord(w uint64) bool {
	const lo, hi, low7 = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	if w&hi != 0 {
		return false
	}
	below9 := (w - 0x09*lo) &^ w & hi
	x := w & low7
	ctl := (lo*(127+0x20) - x) &^ w & (x + lo*(127-0x0a)) & hi // 0x0a < byte < 0x20
	d := w ^ 0x7f*lo
	del := (d - lo) &^ d & hi
	return below9|ctl|del == 0
}

// String returns s sanitized as a whole stream by a Sanitizer with no markers: every escape
// sequence, every control but newline and tab, and every C1 control removed, a run of CRs (with
// the LF that may follow it) made one newline, invalid UTF-8 replaced by U+FFFD. An escape cut
// off by the end of s is dropped. Text that needs none of this is returned as it is, without
// copying.
func String(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	z := New(nil)
	emit := func(_ Event, text string, _ int) { b.WriteString(text) }
	z.Feed([]byte(s), emit)
	z.Flush(emit)
	return b.String()
}

// isPlain reports whether every byte of s passes a Sanitizer as it is.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plain[s[i]] {
			return false
		}
	}
	return true
}
