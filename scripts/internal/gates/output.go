package gates

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// Stream numbers for [Output.Write].
const (
	Stdout = 1
	Stderr = 2
)

// Default limits of an [Output].
const (
	DefaultMemLimit   = 4 << 20   // bytes kept in memory before spilling
	DefaultSpillLimit = 256 << 20 // bytes kept in the spill file; the rest is counted and dropped
)

// Output keeps a gate's stdout and stderr as ordered chunks so they can be
// replayed, interleaved as they arrived, to the two streams. The first
// MemLimit bytes stay in memory, the next SpillLimit go to a temporary
// file, and anything beyond is dropped and counted. It is safe for
// concurrent use; Close removes the spill file.
type Output struct {
	MemLimit, SpillLimit int64

	mu      sync.Mutex
	chunks  []chunk
	mem     int64
	spill   *os.File
	spilled int64
	dropped int64
	err     error // first spill error; the output after it is dropped
}

type chunk struct {
	stream int
	data   []byte // in memory, or nil when spilled
	off, n int64  // position in the spill file
}

// NewOutput returns an empty Output with the default limits.
func NewOutput() *Output {
	return &Output{MemLimit: DefaultMemLimit, SpillLimit: DefaultSpillLimit}
}

// Writer returns an io.Writer that appends to stream (Stdout or Stderr).
func (o *Output) Writer(stream int) io.Writer { return streamWriter{o, stream} }

type streamWriter struct {
	o      *Output
	stream int
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.o.write(w.stream, p)
	return len(p), nil
}

func (o *Output) write(stream int, p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(p) == 0 {
		return
	}
	if o.spill == nil && o.mem+int64(len(p)) <= o.MemLimit {
		if k := len(o.chunks) - 1; k >= 0 && o.chunks[k].stream == stream {
			o.chunks[k].data = append(o.chunks[k].data, p...)
		} else {
			o.chunks = append(o.chunks, chunk{stream: stream, data: append([]byte(nil), p...)})
		}
		o.mem += int64(len(p))
		return
	}
	if o.err != nil || o.spilled >= o.SpillLimit {
		o.dropped += int64(len(p))
		return
	}
	if o.spill == nil {
		f, err := os.CreateTemp("", "doc-sync-output-*")
		if err != nil {
			o.err = err
			o.dropped += int64(len(p))
			return
		}
		o.spill = f
	}
	take := min(int64(len(p)), o.SpillLimit-o.spilled)
	if _, err := o.spill.Write(p[:take]); err != nil {
		o.err = err
		o.dropped += int64(len(p))
		return
	}
	o.chunks = append(o.chunks, chunk{stream: stream, off: o.spilled, n: take})
	o.spilled += take
	o.dropped += int64(len(p)) - take
}

// Len returns the number of bytes kept, in memory and spilled.
func (o *Output) Len() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mem + o.spilled
}

// Replay writes the kept chunks in arrival order, stdout chunks to stdout
// and stderr chunks to stderr, then a note on stderr if output was
// dropped. It returns the first error.
func (o *Output) Replay(stdout, stderr io.Writer) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.chunks {
		w := stdout
		if c.stream == Stderr {
			w = stderr
		}
		if c.data != nil {
			if _, err := w.Write(c.data); err != nil {
				return err
			}
			continue
		}
		if _, err := io.Copy(w, io.NewSectionReader(o.spill, c.off, c.n)); err != nil {
			return err
		}
	}
	if o.dropped > 0 {
		why := "over the output limit"
		if o.err != nil {
			why = o.err.Error()
		}
		fmt.Fprintf(stderr, "[%d bytes of output dropped: %s]\n", o.dropped, why)
	}
	return nil
}

// Close removes the spill file, if any. The Output is empty afterwards.
func (o *Output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.chunks, o.mem = nil, 0
	if o.spill == nil {
		return nil
	}
	name := o.spill.Name()
	err := o.spill.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	o.spill = nil
	return err
}
