package toolbash

import (
	"context"
	"strings"
	"sync"
	"testing"

	bashlocal "github.com/dsh-go/dsh/bash-local"
	"github.com/dsh-go/dsh/tools"
)

// TestProgressPassedOn: a foreground call run with a progress reporter in its context reports
// the command's output so far, its last line sanitized like a result; a background call and a
// call without a reporter report nothing.
func TestProgressPassedOn(t *testing.T) {
	h := newLocalHarness(t, bashlocal.Config{})
	var mu sync.Mutex
	var got []tools.Progress
	ctx := tools.WithProgress(context.Background(), func(p tools.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	})
	res := h.callCtx(ctx, nil, "bash", `{"command":"for i in 1 2 3 4 5; do printf '\\033]0;title\\007\\033[31mstep %s\\033[0m\\n' $i; sleep 0.2; done","description":"Count"}`)
	if res.IsError {
		t.Fatalf("call failed: %+v", res)
	}
	mu.Lock()
	if len(got) < 2 {
		t.Errorf("%d reports %+v; want at least 2 over 1 s of output", len(got), got)
	}
	for _, p := range got {
		if !strings.HasPrefix(p.Message, "step ") || strings.ContainsAny(p.Message, "\x1b\a") || p.Bytes <= 0 {
			t.Errorf("report %+v; want the last line and the bytes so far", p)
		}
	}
	got = nil
	mu.Unlock()
	id := h.startBackground(nil, "for i in 1 2 3 4; do echo bg; sleep 0.2; done")
	h.waitDone(id)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("a background task reported %+v; want nothing", got)
	}
}
