package backend

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dsh-go/dsh/bash"
)

// SpillFile is where a Collector writes the stream once it overflows memory. *os.File satisfies it.
type SpillFile interface {
	io.Writer
	Close() error
	Name() string
}

// CollectorConfig sets a Collector's budgets. MaxBytes must be positive and HeadBytes must lie in
// [0, MaxBytes). When Create is nil the stream is never spilled; otherwise MaxSpillBytes must be
// positive.
type CollectorConfig struct {
	// MaxBytes is the number of bytes kept in memory, head and tail together.
	MaxBytes int
	// HeadBytes is the number of leading bytes kept whatever follows (rounded down to a character
	// boundary). The tail gets MaxBytes-HeadBytes.
	HeadBytes int
	// MaxSpillBytes caps the spill file: past it the file keeps the first MaxSpillBytes bytes and is
	// marked partial.
	MaxSpillBytes int64
	// Create opens the spill file on the first overflow; SpillDir.Create fits. Nil disables spilling.
	Create func() (SpillFile, error)
}

// Validate reports the first problem with c, naming the field.
func (c CollectorConfig) Validate() error {
	switch {
	case c.MaxBytes <= 0:
		return errors.New("backend: CollectorConfig.MaxBytes must be positive")
	case c.HeadBytes < 0 || c.HeadBytes >= c.MaxBytes:
		return fmt.Errorf("backend: CollectorConfig.HeadBytes must be at least 0 and less than MaxBytes (%d)", c.MaxBytes)
	case c.Create != nil && c.MaxSpillBytes <= 0:
		return errors.New("backend: CollectorConfig.MaxSpillBytes must be positive")
	}
	return nil
}

// Collector is an io.Writer that keeps a stream's head and tail within CollectorConfig's budget and spills
// the stream to a file on overflow. It is safe for concurrent use: one goroutine typically writes
// while others read. Writes never fail; a spill file that cannot be written is abandoned (closed,
// removed, no longer reported) and collection goes on in memory.
type Collector struct {
	cfg     CollectorConfig
	tailCap int

	mu           sync.Mutex
	head         []byte
	headFrozen   bool
	tail         []byte // tail[tailOff:] holds stream bytes [tailStart, total)
	tailOff      int
	beforeTail   byte // the stream byte just before the tail, once bytes were dropped there
	total        int64
	spill        SpillFile
	spillPath    string
	spillBytes   int64
	spillDone    bool // no more spill attempts (abandoned or disabled)
	spillPartial bool
	sealed       bool
	grow         chan struct{} // closed and cleared by the next Write; see Grown
}

// NewCollector returns a Collector for cfg. It returns an error naming the field when cfg is invalid.
func NewCollector(cfg CollectorConfig) (*Collector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Collector{cfg: cfg, tailCap: cfg.MaxBytes - cfg.HeadBytes, spillDone: cfg.Create == nil}, nil
}

// Write collects p. It always returns len(p) and a nil error; bytes written after Seal are dropped.
func (c *Collector) Write(p []byte) (int, error) {
	n := len(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed || n == 0 {
		return n, nil
	}
	if c.spill == nil && !c.spillDone && c.total+int64(n) > int64(c.cfg.MaxBytes) {
		c.openSpill()
	}
	if c.spill != nil && !c.spillPartial {
		c.writeSpill(p)
	}
	if !c.headFrozen {
		take := min(c.cfg.HeadBytes-len(c.head), len(p))
		c.head = append(c.head, p[:take]...)
		p = p[take:]
		if len(c.head) == c.cfg.HeadBytes {
			c.freezeHead()
		}
	}
	c.appendTail(p)
	c.total += int64(n)
	if c.grow != nil {
		close(c.grow)
		c.grow = nil
	}
	return n, nil
}

// freezeHead ends the head at a character boundary; bytes of a character cut by the budget move
// to the tail.
func (c *Collector) freezeHead() {
	c.headFrozen = true
	cut := len(c.head) - incompleteSuffix(c.head)
	if cut < len(c.head) {
		c.tail = append(c.tail[:0], c.head[cut:]...)
		c.tailOff = 0
		c.head = c.head[:cut:cut]
		// The budget the head gives up goes to the tail, so nothing within MaxBytes is dropped.
		c.tailCap = c.cfg.MaxBytes - cut
	}
}

func (c *Collector) appendTail(p []byte) {
	if len(p) == 0 {
		return
	}
	if len(p) >= c.tailCap {
		switch {
		case len(p) > c.tailCap:
			c.beforeTail = p[len(p)-c.tailCap-1]
		case len(c.tail) > c.tailOff:
			c.beforeTail = c.tail[len(c.tail)-1]
		case len(c.head) > 0:
			c.beforeTail = c.head[len(c.head)-1]
		}
		c.tail = append(c.tail[:0], p[len(p)-c.tailCap:]...)
		c.tailOff = 0
		return
	}
	c.tail = append(c.tail, p...)
	if extra := len(c.tail) - c.tailOff - c.tailCap; extra > 0 {
		c.tailOff += extra
		c.beforeTail = c.tail[c.tailOff-1]
	}
	if c.tailOff > c.tailCap {
		kept := copy(c.tail, c.tail[c.tailOff:])
		c.tail = c.tail[:kept]
		c.tailOff = 0
	}
}

func (c *Collector) tailStart() int64 { return c.total - int64(len(c.tail)-c.tailOff) }

func (c *Collector) openSpill() {
	f, err := c.cfg.Create()
	if err != nil {
		c.spillDone = true
		return
	}
	c.spill, c.spillPath = f, f.Name()
	// Nothing has been dropped yet: head and tail together are the stream so far.
	c.writeSpill(c.head)
	if c.spill != nil {
		c.writeSpill(c.tail[c.tailOff:])
	}
}

func (c *Collector) writeSpill(p []byte) {
	room := c.cfg.MaxSpillBytes - c.spillBytes
	if int64(len(p)) > room {
		p = p[:room]
		c.spillPartial = true
	}
	if len(p) == 0 {
		return
	}
	n, err := c.spill.Write(p)
	c.spillBytes += int64(n)
	if err != nil {
		c.abandonSpill()
	}
}

// abandonSpill drops a spill file that could not be written: it may not hold what it claims.
func (c *Collector) abandonSpill() {
	c.spill.Close()
	os.Remove(c.spillPath)
	c.spill, c.spillPath, c.spillDone, c.spillPartial = nil, "", true, false
}

// Seal ends collection: later writes are dropped and the spill file is closed. A spill file whose
// close fails (a delayed write error) is removed and no longer reported. Seal is idempotent.
func (c *Collector) Seal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed {
		return
	}
	c.sealed = true
	if c.spill != nil {
		if err := c.spill.Close(); err != nil {
			os.Remove(c.spillPath)
			c.spillPath, c.spillPartial = "", false
		}
		c.spill = nil
	}
}

// Output returns the stream collected so far as head, omitted count and tail, with the spill file
// when bytes were omitted and a spill file is available.
func (c *Collector) Output() bash.Output {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail[c.tailOff:]
	omitted := c.tailStart() - int64(len(c.head))
	if omitted > 0 {
		skip := leadingContinuation(tail)
		tail = tail[skip:]
		omitted += int64(skip)
	}
	out := bash.Output{
		Head:         validUTF8(c.head),
		Tail:         validUTF8(tail),
		OmittedBytes: omitted,
		TotalBytes:   c.total,
	}
	if omitted > 0 {
		out.Spill = c.spillInfo()
	}
	return out
}

func (c *Collector) spillInfo() bash.Spill {
	if c.spillPath == "" {
		return bash.Spill{}
	}
	return bash.Spill{Path: c.spillPath, Partial: c.spillPartial, Bytes: c.spillBytes}
}

// Chunk is the result of ReadFrom.
type Chunk struct {
	// Text is the stream from the requested offset, valid UTF-8.
	Text string
	// Next is the offset to read from next time.
	Next int64
	// Omitted counts bytes after the requested offset that were dropped before they could be read.
	Omitted int64
	// Spill is the stream's spill file, when it has one.
	Spill bash.Spill
	// Total is the number of bytes written to the stream when the read was taken, held-back
	// and dropped bytes included: the n of a later Grown(n) that waits for what this read missed.
	Total int64
}

// ReadFrom returns what the stream holds from byte offset off on, without consuming anything:
// callers keep the offset (Chunk.Next) themselves. Bytes dropped from memory since off are skipped
// and counted in Chunk.Omitted, and the text says where: a bash.DroppedMarker line stands between what
// was kept before the gap and the first whole line after it. Until Seal, a character whose last bytes have not been written yet is
// held back: Next then points at its first byte.
func (c *Collector) ReadFrom(off int64) Chunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	var r Chunk
	var buf []byte
	headLen := int64(len(c.head))
	if off < headLen {
		buf = append(buf, c.head[off:]...)
		off = headLen
	}
	tail := c.tail[c.tailOff:]
	start := c.tailStart()
	if off < start {
		// Bytes between off and the tail were dropped. Resume at the tail's first line start (a
		// partial line would read as a line the command never printed; with no newline in the
		// tail, at its first whole character), and say so on a line of its own.
		skip := leadingContinuation(tail)
		if nl := bytes.IndexByte(tail, '\n'); nl >= 0 && c.beforeTail != '\n' {
			skip = nl + 1
		}
		r.Omitted = start - off + int64(skip)
		off = start + int64(skip)
		if len(buf) > 0 && buf[len(buf)-1] != '\n' {
			buf = append(buf, '\n')
		}
		buf = append(buf, bash.DroppedMarker(r.Omitted)...)
	}
	if idx := off - start; idx < int64(len(tail)) {
		buf = append(buf, tail[idx:]...)
	}
	r.Next, r.Total = c.total, c.total
	if !c.sealed {
		hold := incompleteSuffix(buf)
		buf = buf[:len(buf)-hold]
		r.Next -= int64(hold)
	}
	r.Text = validUTF8(buf)
	r.Spill = c.spillInfo()
	return r
}

// Total returns the number of bytes written so far.
func (c *Collector) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// incompleteSuffix returns how many bytes at the end of b form the start of a UTF-8 character whose
// remaining bytes are missing.
func incompleteSuffix(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		ch := b[len(b)-i]
		if ch < 0x80 {
			return 0
		}
		if ch >= 0xC0 { // a leading byte
			need := 0
			switch {
			case ch >= 0xF0 && ch <= 0xF4:
				need = 4
			case ch >= 0xE0 && ch <= 0xEF:
				need = 3
			case ch >= 0xC2 && ch <= 0xDF:
				need = 2
			default:
				return 0 // not a valid leading byte: nothing to wait for
			}
			if need > i && !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// leadingContinuation returns how many bytes at the start of b continue a character that began
// before b (at most three).
func leadingContinuation(b []byte) int {
	n := 0
	for n < len(b) && n < utf8.UTFMax-1 && b[n]&0xC0 == 0x80 {
		n++
	}
	return n
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// MergeStreams joins a background task's new stdout and stderr text the way bash.TaskRead.Delta
// documents: stdout, then "[stderr]\n" and stderr when stderr is not empty, with a newline between them when
// stdout does not end with one.
func MergeStreams(stdout, stderr string) string {
	if stderr == "" {
		return stdout
	}
	sep := ""
	if stdout != "" && !strings.HasSuffix(stdout, "\n") {
		sep = "\n"
	}
	return stdout + sep + "[stderr]\n" + stderr
}
