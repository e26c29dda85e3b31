package backend

import (
	"bytes"
	"errors"
	"github.com/dsh-go/dsh/bash"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// memSpill is a spill file in memory whose Write and Close can be made to fail.
type memSpill struct {
	buf       bytes.Buffer
	failWrite bool
	failClose bool
	closed    bool
	name      string
}

func (m *memSpill) Write(p []byte) (int, error) {
	if m.failWrite {
		return 0, errors.New("no space left on device")
	}
	return m.buf.Write(p)
}
func (m *memSpill) Close() error {
	m.closed = true
	if m.failClose {
		return errors.New("input/output error")
	}
	return nil
}
func (m *memSpill) Name() string { return m.name }

func newCollector(t *testing.T, cfg CollectorConfig) *Collector {
	t.Helper()
	c, err := NewCollector(cfg)
	if err != nil {
		t.Fatalf("NewCollector(%+v): %v", cfg, err)
	}
	return c
}

func memCreate(spills *[]*memSpill, tweak func(*memSpill)) func() (SpillFile, error) {
	return func() (SpillFile, error) {
		m := &memSpill{name: "mem-" + string(rune('a'+len(*spills)))}
		if tweak != nil {
			tweak(m)
		}
		*spills = append(*spills, m)
		return m, nil
	}
}

func TestCollectorTable(t *testing.T) {
	tests := []struct {
		name      string
		max, head int
		spillCap  int64
		chunks    []string
		wantHead  string
		wantTail  string
		wantOmit  int64
		wantSpill string // "" means no spill file created
		wantPart  bool
	}{
		{name: "fits", max: 10, chunks: []string{"abc", "def"}, wantTail: "abcdef", spillCap: 100},
		{name: "exactly at cap is not truncation", max: 10, chunks: []string{"0123456789"}, wantTail: "0123456789", spillCap: 100},
		{name: "one chunk over cap keeps the byte-exact tail", max: 10, chunks: []string{"0123456789abcdef"},
			wantTail: "6789abcdef", wantOmit: 6, wantSpill: "0123456789abcdef", spillCap: 100},
		{name: "tail is byte exact across chunks", max: 10, chunks: []string{"aaaa", "bbbbbb", "cc"},
			wantTail: "aabbbbbbcc", wantOmit: 2, wantSpill: "aaaabbbbbbcc", spillCap: 100},
		{name: "head and tail", max: 10, head: 4, chunks: []string{"HEAD", "xxxxxxxx", "tail12"},
			wantHead: "HEAD", wantTail: "tail12", wantOmit: 8, wantSpill: "HEADxxxxxxxxtail12", spillCap: 100},
		{name: "head fills across chunks", max: 6, head: 3, chunks: []string{"a", "bc", "d", "efghij"},
			wantHead: "abc", wantTail: "hij", wantOmit: 4, wantSpill: "abcdefghij", spillCap: 100},
		{name: "partial spill keeps the first bytes", max: 4, chunks: []string{"aaaa", "bbbb", "cccc", "dddd"},
			wantTail: "dddd", wantOmit: 12, wantSpill: "aaaabbbb", wantPart: true, spillCap: 8},
		{name: "first overflow larger than spill cap", max: 4, chunks: []string{"0123456789"},
			wantTail: "6789", wantOmit: 6, wantSpill: "012", wantPart: true, spillCap: 3},
		{name: "head never splits a character", max: 8, head: 4, chunks: []string{"abc€", "12345678"},
			wantHead: "abc", wantTail: "45678", wantOmit: 6, wantSpill: "abc€12345678", spillCap: 100},
		{name: "tail never starts inside a character", max: 5, chunks: []string{"xx", "€€"},
			wantTail: "€", wantOmit: 5, wantSpill: "xx€€", spillCap: 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var spills []*memSpill
			c := newCollector(t, CollectorConfig{MaxBytes: tc.max, HeadBytes: tc.head, MaxSpillBytes: tc.spillCap, Create: memCreate(&spills, nil)})
			total := 0
			for _, ch := range tc.chunks {
				c.Write([]byte(ch))
				total += len(ch)
			}
			c.Seal()
			got := c.Output()
			if got.Head != tc.wantHead || got.Tail != tc.wantTail || got.OmittedBytes != tc.wantOmit {
				t.Errorf("Output = head %q tail %q omitted %d; want head %q tail %q omitted %d",
					got.Head, got.Tail, got.OmittedBytes, tc.wantHead, tc.wantTail, tc.wantOmit)
			}
			if got.TotalBytes != int64(total) {
				t.Errorf("TotalBytes = %d, want %d", got.TotalBytes, total)
			}
			if tc.wantSpill == "" {
				if len(spills) != 0 || got.Spill.Path != "" {
					t.Errorf("spill created (%d files, path %q), want none", len(spills), got.Spill.Path)
				}
				return
			}
			if len(spills) != 1 {
				t.Fatalf("%d spill files, want 1", len(spills))
			}
			if s := spills[0].buf.String(); s != tc.wantSpill {
				t.Errorf("spill holds %q, want %q", s, tc.wantSpill)
			}
			if !spills[0].closed {
				t.Error("spill file not closed by Seal")
			}
			if got.Spill.Path != spills[0].name || got.Spill.Partial != tc.wantPart || got.Spill.Bytes != int64(len(tc.wantSpill)) {
				t.Errorf("Spill = %+v, want path %q partial %v", got.Spill, spills[0].name, tc.wantPart)
			}
		})
	}
}

func TestCollectorSpillFailures(t *testing.T) {
	t.Run("close failure drops the path but keeps the tail", func(t *testing.T) {
		var spills []*memSpill
		c := newCollector(t, CollectorConfig{MaxBytes: 4, MaxSpillBytes: 100, Create: memCreate(&spills, func(m *memSpill) { m.failClose = true })})
		c.Write([]byte("0123456789"))
		c.Seal()
		got := c.Output()
		if got.Spill.Path != "" || got.Tail != "6789" || !got.Truncated() {
			t.Errorf("Output = %+v; want tail 6789, truncated, no spill path", got)
		}
	})
	t.Run("write failure abandons the spill", func(t *testing.T) {
		var spills []*memSpill
		c := newCollector(t, CollectorConfig{MaxBytes: 4, MaxSpillBytes: 100, Create: memCreate(&spills, func(m *memSpill) { m.failWrite = true })})
		c.Write([]byte("0123456789"))
		c.Write([]byte("abc"))
		c.Seal()
		got := c.Output()
		if got.Spill.Path != "" || got.Tail != "9abc" || len(spills) != 1 || !spills[0].closed {
			t.Errorf("Output = %+v (%d spills); want tail 9abc, one closed spill, no path", got, len(spills))
		}
	})
	t.Run("create failure collects in memory", func(t *testing.T) {
		c := newCollector(t, CollectorConfig{MaxBytes: 4, MaxSpillBytes: 100, Create: func() (SpillFile, error) { return nil, errors.New("read-only file system") }})
		c.Write([]byte("0123456789"))
		c.Seal()
		if got := c.Output(); got.Spill.Path != "" || got.Tail != "6789" {
			t.Errorf("Output = %+v; want tail 6789 and no spill", got)
		}
	})
	t.Run("no spilling configured", func(t *testing.T) {
		c := newCollector(t, CollectorConfig{MaxBytes: 4})
		c.Write([]byte("0123456789"))
		r := c.ReadFrom(0)
		if r.Text != bash.DroppedMarker(6)+"6789" || r.Omitted != 6 || r.Spill.Path != "" {
			t.Errorf("ReadFrom(0) = %+v; want lossy tail 6789, no spill", r)
		}
	})
}

func TestCollectorReads(t *testing.T) {
	var spills []*memSpill
	c := newCollector(t, CollectorConfig{MaxBytes: 10, MaxSpillBytes: 100, Create: memCreate(&spills, nil)})
	c.Write([]byte("aaaaa"))
	r := c.ReadFrom(0)
	if r.Text != "aaaaa" || r.Next != 5 || r.Omitted != 0 || r.Spill.Path != "" {
		t.Fatalf("first read = %+v", r)
	}
	c.Write([]byte("bbbbb"))
	r = c.ReadFrom(r.Next)
	if r.Text != "bbbbb" || r.Next != 10 || r.Omitted != 0 {
		t.Fatalf("second read = %+v", r)
	}
	c.Write([]byte(strings.Repeat("c", 20)))
	r = c.ReadFrom(r.Next)
	if r.Text != bash.DroppedMarker(10)+strings.Repeat("c", 10) || r.Omitted != 10 || r.Next != 30 || r.Spill.Path == "" {
		t.Fatalf("lossy read = %+v; want 10 c, 10 omitted, spill path", r)
	}
	if r = c.ReadFrom(r.Next); r.Text != "" || r.Omitted != 0 {
		t.Fatalf("read at end = %+v; want empty", r)
	}
}

func TestCollectorReadsHoldIncompleteCharacters(t *testing.T) {
	c := newCollector(t, CollectorConfig{MaxBytes: 100})
	euro := []byte("€") // 3 bytes
	c.Write([]byte("a"))
	c.Write(euro[:2])
	r := c.ReadFrom(0)
	if r.Text != "a" || r.Next != 1 {
		t.Fatalf("read with a half character = %+v; want %q and next 1", r, "a")
	}
	c.Write(euro[2:])
	r = c.ReadFrom(r.Next)
	if r.Text != "€" || r.Next != 4 {
		t.Fatalf("read after completion = %+v; want € and next 4", r)
	}
	c.Write([]byte{0xE2}) // never completed
	c.Seal()
	r = c.ReadFrom(r.Next)
	if r.Text != "\uFFFD" || r.Next != 5 {
		t.Fatalf("read after seal = %+v; want a replacement character", r)
	}
}

func TestConfigValidate(t *testing.T) {
	create := func() (SpillFile, error) { return nil, nil }
	for _, tc := range []struct {
		cfg  CollectorConfig
		want string
	}{
		{CollectorConfig{MaxBytes: 0}, "MaxBytes"},
		{CollectorConfig{MaxBytes: -1}, "MaxBytes"},
		{CollectorConfig{MaxBytes: 10, HeadBytes: 10}, "HeadBytes"},
		{CollectorConfig{MaxBytes: 10, HeadBytes: -1}, "HeadBytes"},
		{CollectorConfig{MaxBytes: 10, Create: create}, "MaxSpillBytes"},
	} {
		_, err := NewCollector(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewCollector(%+v) = %v; want an error naming %s", tc.cfg, err, tc.want)
		}
	}
}

func TestSpillDir(t *testing.T) {
	d := &SpillDir{Parent: t.TempDir()}
	f, err := d.Create("stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir, _ := d.Path()
	if !regexp.MustCompile(`^dsh-bash-`).MatchString(filepath.Base(dir)) {
		t.Errorf("dir %s lacks the dsh-bash- prefix", dir)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", st.Mode().Perm())
	}
	if !regexp.MustCompile(`dsh-bash-\d+-\d+-[0-9a-f]{12}-stdout\.log$`).MatchString(f.Name()) {
		t.Errorf("spill name %s does not match the pattern", f.Name())
	}
	if st, _ := os.Stat(f.Name()); st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", st.Mode().Perm())
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("dir still exists after Remove: %v", err)
	}
	if _, err := d.Create("stderr"); err == nil {
		t.Error("Create after Remove succeeded")
	}
}

// FuzzCollector writes arbitrary chunks and checks the collector's invariants: head + omitted + tail
// account for every byte, the texts are valid UTF-8 and, for valid input, are the stream's own
// first and last bytes, the spill holds the stream's start, and consuming reads deliver each byte
// at most once.
func FuzzCollector(f *testing.F) {
	f.Add([]byte("hello world"), uint8(4), uint8(2), uint8(3), uint8(16))
	f.Add([]byte("aaaabbbbbbcc"), uint8(10), uint8(0), uint8(4), uint8(100))
	f.Add([]byte("€€€€ünïcödé€€€"), uint8(7), uint8(3), uint8(2), uint8(9))
	f.Add([]byte{0xff, 0xfe, 0xE2, 0x82, 'a', 0xE2}, uint8(3), uint8(1), uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, maxB, headB, chunk, spillCap uint8) {
		max := int(maxB)%64 + 1
		head := int(headB) % max
		step := int(chunk)%7 + 1
		var spills []*memSpill
		c, err := NewCollector(CollectorConfig{MaxBytes: max, HeadBytes: head, MaxSpillBytes: int64(spillCap) + 1, Create: memCreate(&spills, nil)})
		if err != nil {
			t.Fatal(err)
		}
		var read strings.Builder
		var next, omittedByReads int64
		valid := utf8.Valid(data)
		consume := func(r Chunk) {
			if r.Next < next {
				t.Fatalf("read cursor went back from %d to %d", next, r.Next)
			}
			if valid {
				checkChunk(t, data, next, r)
			}
			next = r.Next
			omittedByReads += r.Omitted
			read.WriteString(r.Text)
		}
		for i := 0; i < len(data); i += step {
			c.Write(data[i:min(i+step, len(data))])
			consume(c.ReadFrom(next))
		}
		c.Seal()
		consume(c.ReadFrom(next))
		if next != int64(len(data)) {
			t.Fatalf("final read ends at %d, want %d", next, len(data))
		}
		out := c.Output()
		if !utf8.ValidString(out.Head) || !utf8.ValidString(out.Tail) || !utf8.ValidString(read.String()) {
			t.Fatal("output is not valid UTF-8")
		}
		if out.TotalBytes != int64(len(data)) {
			t.Fatalf("TotalBytes %d, want %d", out.TotalBytes, len(data))
		}
		if utf8.Valid(data) {
			if int64(len(out.Head))+out.OmittedBytes+int64(len(out.Tail)) != int64(len(data)) {
				t.Fatalf("head %d + omitted %d + tail %d != total %d", len(out.Head), out.OmittedBytes, len(out.Tail), len(data))
			}
			if !strings.HasPrefix(string(data), out.Head) || !strings.HasSuffix(string(data), out.Tail) {
				t.Fatalf("head %q / tail %q are not the stream's ends", out.Head, out.Tail)
			}
			if omittedByReads == 0 && read.String() != string(data) {
				t.Fatalf("lossless reads delivered %q, want %q", read.String(), data)
			}
		}
		if len(data) > max {
			if len(spills) != 1 {
				t.Fatalf("%d spill files for an overflowing stream", len(spills))
			}
			s := spills[0].buf.Bytes()
			if !bytes.HasPrefix(data, s) || (len(s) < len(data)) != out.Spill.Partial {
				t.Fatalf("spill holds %d bytes (partial=%v) of %d; want the stream's prefix", len(s), out.Spill.Partial, len(data))
			}
		} else if len(spills) != 0 || out.Truncated() {
			t.Fatal("stream within budget was spilled or truncated")
		}
	})
}

// checkChunk checks a read r of the valid UTF-8 stream data that started at offset prev: without
// omitted bytes it is data[prev:r.Next]; with them, it is the bytes kept before the gap (ended
// by a newline the collector may have added), one DroppedMarker line, and the bytes kept after
// it, which start at a line start and end at r.Next, and the three account for every byte.
func checkChunk(t *testing.T, data []byte, prev int64, r Chunk) {
	t.Helper()
	stream := string(data[prev:r.Next])
	if r.Omitted == 0 {
		if r.Text != stream {
			t.Fatalf("read from %d = %q, want %q", prev, r.Text, stream)
		}
		return
	}
	m := bash.DroppedMarker(r.Omitted)
	i := strings.Index(r.Text, m)
	if i < 0 {
		t.Fatalf("read from %d omitted %d bytes but says nothing: %q", prev, r.Omitted, r.Text)
	}
	before, after := r.Text[:i], r.Text[i+len(m):]
	if !strings.HasPrefix(stream, before) {
		if !strings.HasSuffix(before, "\n") || !strings.HasPrefix(stream, before[:len(before)-1]) {
			t.Fatalf("read from %d: %q before the marker is not the stream's next bytes %q", prev, before, stream)
		}
		before = before[:len(before)-1]
	}
	if !strings.HasSuffix(stream, after) {
		t.Fatalf("read from %d: %q after the marker is not the stream's last bytes %q", prev, after, stream)
	}
	if int64(len(before))+r.Omitted+int64(len(after)) != r.Next-prev {
		t.Fatalf("read from %d to %d: %d kept + %d omitted + %d kept do not add up", prev, r.Next, len(before), r.Omitted, len(after))
	}
	gapEnd := int(r.Next) - len(after)
	if len(after) > 0 && gapEnd > 0 && data[gapEnd-1] != '\n' && strings.Contains(after, "\n") {
		t.Fatalf("read from %d resumes mid-line after the gap although the kept bytes hold a newline: %q", prev, after)
	}

}

// TestLossyReadLineBoundaries checks where a lossy read resumes: at the tail's start when the
// tail starts a line, after the tail's first newline when it starts mid-line, and at the tail's
// start when the tail holds no newline at all.
func TestLossyReadLineBoundaries(t *testing.T) {
	tests := []struct {
		name  string
		write string
		max   int
		want  string
	}{
		{"tail starts a line", "aaaa\nbbbb\ncccc\n", 7, "aa\n" + bash.DroppedMarker(8) + "cccc\n"},
		{"tail starts mid-line", "aaaa\nbbbb\ncccc\n", 10, "aa\n" + bash.DroppedMarker(8) + "cccc\n"},
		{"tail without a newline", "aaaaaaaaaaaaaaaaaaaa", 8, "aa\n" + bash.DroppedMarker(12) + "aaaaaa"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollector(t, CollectorConfig{MaxBytes: tt.max, HeadBytes: 2})
			c.Write([]byte(tt.write))
			c.Seal()
			if r := c.ReadFrom(0); r.Text != tt.want {
				t.Errorf("ReadFrom(0) = %q, want %q", r.Text, tt.want)
			}
		})
	}
}
