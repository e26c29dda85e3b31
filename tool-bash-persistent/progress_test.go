//go:build linux

package persistentbash

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

// TestProgress: a call run with a progress reporter in its context reports the command's output
// so far (sanitized, its last whole line, growing byte counts), at most every interval and never after
// the call returned; a call without a reporter reports nothing and starts no watch.
func TestProgress(t *testing.T) {
	h := newHarness(t, Config{})
	var mu sync.Mutex
	var got []tools.Progress
	var at []time.Time
	returned := false
	ctx := tools.WithProgress(context.Background(), func(p tools.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if returned {
			t.Errorf("a report after the call returned: %+v", p)
		}
		got, at = append(got, p), append(at, time.Now())
	})
	r := h.callCtx(ctx, "a", "", `for i in 1 2 3 4 5; do printf '\033]0;t\007\033[31mstep %s\033[0m\n' $i; sleep 0.2; done`)
	mu.Lock()
	returned = true
	mu.Unlock()
	if r.IsError || !strings.HasSuffix(r.Text(), "step 5") {
		t.Fatalf("call: %q", r.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 {
		t.Fatalf("%d reports %+v; want at least 2 over 1 s of output", len(got), got)
	}
	if last := got[len(got)-1]; last.Message == "" {
		t.Errorf("the last report %+v carries no line", last)
	}
	for i, p := range got {
		// Only whole lines are reported: none before the first line has ended.
		if p.Message != "" && !regexp.MustCompile(`^step [1-5]$`).MatchString(p.Message) || p.Bytes <= 0 {
			t.Errorf("report %+v; want the sanitized last line and the bytes so far", p)
		}
		if i > 0 && (p.Bytes <= got[i-1].Bytes || at[i].Sub(at[i-1]) < bash.ProgressInterval) {
			t.Errorf("report %d %+v at +%v after %+v: want more bytes, at least %v apart", i, p, at[i].Sub(at[i-1]), got[i-1], bash.ProgressInterval)
		}
	}
}

func TestLastBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "def"},
		{"aé€", 4, "€"}, // "é€" is 5 bytes: the cut lands inside é
		{"é€", 3, "€"},
	} {
		if got := lastBytes(c.in, c.max); got != c.want || !utf8.ValidString(got) {
			t.Errorf("lastBytes(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
