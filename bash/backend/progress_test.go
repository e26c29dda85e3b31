package backend

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

func TestCollectorLastLine(t *testing.T) {
	long := strings.Repeat("x", bash.MaxProgressLine+10)
	tests := []struct {
		name  string
		cfg   CollectorConfig
		write []string
		want  string
	}{
		{name: "empty", write: nil, want: ""},
		{name: "one line", write: []string{"hello\n"}, want: "hello"},
		{name: "a line being written is left out", write: []string{"a\nbuil", "ding"}, want: "a"},
		{name: "no whole line yet", write: []string{"building"}, want: ""},
		{name: "carriage return ends a line", write: []string{"10%\r20%\r30"}, want: "20%"},
		{name: "blank lines skipped", write: []string{"first\n\n\r\n\n"}, want: "first"},
		{name: "carriage return dropped", write: []string{"crlf\r\n"}, want: "crlf"},
		{name: "only newlines", write: []string{"\n\n\n"}, want: ""},
		{name: "line across head and tail", cfg: CollectorConfig{MaxBytes: 64, HeadBytes: 4}, write: []string{"abcdefgh\n"}, want: "abcdefgh"},
		{name: "after a drop the tail only", cfg: CollectorConfig{MaxBytes: 8, HeadBytes: 2}, write: []string{"x\nabcdefghijklmnop\n"}, want: "lmnop"},
		{name: "long line keeps its end", write: []string{long + "END\n"}, want: long[:bash.MaxProgressLine-3] + "END"},
		{name: "cut never splits a character", write: []string{strings.Repeat("é", bash.MaxProgressLine) + "\n"}, want: strings.Repeat("é", bash.MaxProgressLine/2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.MaxBytes == 0 {
				cfg = CollectorConfig{MaxBytes: 4096, HeadBytes: 1024}
			}
			c := newCollector(t, cfg)
			for _, w := range tc.write {
				c.Write([]byte(w))
			}
			got := c.LastLine()
			if got != tc.want {
				t.Errorf("LastLine() = %q; want %q", got, tc.want)
			}
			if len(got) > bash.MaxProgressLine {
				t.Errorf("LastLine() is %d bytes; want at most %d", len(got), bash.MaxProgressLine)
			}
		})
	}
}

// TestWatchProgress checks the rules of WatchProgress against writes made between ticks: a
// report only when the streams grew, the line of the stream that grew, and none after stop.
func TestWatchProgress(t *testing.T) {
	streams := NewStreams(bash.Limits{MaxOutputBytes: 4096, HeadBytes: 1024}, 0, nil)
	var mu sync.Mutex
	var got []bash.Progress
	stopped := false
	reported := make(chan struct{}, 16)
	stop := WatchProgress(streams, 20*time.Millisecond, func(p bash.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			t.Errorf("report %+v after stop returned", p)
		}
		got = append(got, p)
		reported <- struct{}{}
	})
	streams.Stdout.Write([]byte("one\n"))
	<-reported
	streams.Stderr.Write([]byte("warning: two\n"))
	<-reported
	// Quiet for many ticks: no report.
	time.Sleep(100 * time.Millisecond) // lets ticks pass; the assertion is that none reported
	streams.Stdout.Write([]byte("three"))
	<-reported
	stop()
	mu.Lock()
	stopped = true
	mu.Unlock()
	streams.Stdout.Write([]byte("four\n"))
	time.Sleep(60 * time.Millisecond) // lets ticks pass; none may report after stop
	stop()                            // a second stop is harmless
	want := []bash.Progress{{Bytes: 4, LastLine: "one"}, {Bytes: 17, LastLine: "warning: two"}, {Bytes: 22, LastLine: "one"}}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("reports %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("report %d = %+v; want %+v", i, got[i], want[i])
		}
	}
}

func TestWatchProgressNil(t *testing.T) {
	streams := NewStreams(bash.Limits{MaxOutputBytes: 4096, HeadBytes: 1024}, 0, nil)
	stop := WatchProgress(streams, 0, nil)
	stop()
}
