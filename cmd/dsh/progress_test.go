package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressRecorder collects the progress notifications a client receives.
type progressRecorder struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
	at    []time.Time
}

func (r *progressRecorder) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, req.Params)
	r.at = append(r.at, time.Now())
}

// take returns the notifications received so far and forgets them.
func (r *progressRecorder) take() ([]*mcp.ProgressNotificationParams, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, a := r.notes, r.at
	r.notes, r.at = nil, nil
	return n, a
}

// progressCommand writes a line every 200 ms for 1.6 s, one of them holding the planted secret.
const progressCommand = `for i in 1 2 3 4 5 6 7 8; do echo "step $i"; sleep 0.2; done; echo "key ` + progressSecret + `"; sleep 0.8; echo done`

const progressSecret = "progress-secret-value-42"

// checkProgress runs progressCommand through cs with and without a progress token and checks
// what rec received: with a token, notifications under it, growing, at most one per
// progressInterval, carrying the last line with the secret redacted, none after the result;
// without a token, none at all.
func checkProgress(t *testing.T, cs *mcp.ClientSession, rec *progressRecorder) {
	t.Helper()
	p := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": progressCommand, "description": "Count"}}
	p.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	notes, at := rec.take()
	if n := len(notes); n < 4 || n > 10 {
		t.Fatalf("%d progress notifications; want 4 to 10 for 2.4 s of output", n)
	}
	sawSecretLine := false
	for i, n := range notes {
		if n.ProgressToken != "tok-1" {
			t.Errorf("notification %d: token %v; want tok-1", i, n.ProgressToken)
		}
		if strings.Contains(n.Message, progressSecret) {
			t.Errorf("notification %d carries the secret: %q", i, n.Message)
		}
		if strings.HasPrefix(n.Message, "key [redacted: ") {
			sawSecretLine = true
		} else if !strings.HasPrefix(n.Message, "step ") {
			t.Errorf("notification %d: message %q; want the last line of output", i, n.Message)
		}
		if i > 0 {
			if n.Progress <= notes[i-1].Progress {
				t.Errorf("notification %d: progress %v after %v; want more", i, n.Progress, notes[i-1].Progress)
			}
			if gap := at[i].Sub(at[i-1]); gap < progressInterval/2 {
				// Received, not sent: the transport may bunch two up a little.
				t.Errorf("notification %d came %v after the previous", i, gap)
			}
		}
	}
	if !sawSecretLine {
		t.Errorf("no notification carried the redacted secret line: %+v", notes)
	}
	// Nothing after the result: one more round trip flushes anything still on its way.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true", "description": "Flush"}}); err != nil {
		t.Fatal(err)
	}
	if late, _ := rec.take(); len(late) != 0 {
		t.Errorf("%d notifications after the result: %+v", len(late), late)
	}
	// No token: no notification.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "for i in 1 2 3 4 5; do echo x; sleep 0.2; done", "description": "Count"}})
	if err != nil || res.IsError {
		t.Fatalf("call without a token: %v %v", err, res)
	}
	if none, _ := rec.take(); len(none) != 0 {
		t.Errorf("a call without a progress token got %d notifications", len(none))
	}
}

// TestProgressStdio checks progress over the stdio line transport, the way dsh mcp serves it.
func TestProgressStdio(t *testing.T) {
	t.Setenv("DSH_TEST_PROGRESS_TOKEN", progressSecret) // a harness secret: redacted
	srv := testServer(t, config{})
	rec := &progressRecorder{}
	sc, cc := socketPair(t)
	if _, err := srv.connect(context.Background(), lineTransport(sc, sc, maxLine, 0, nil)); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dsh-test", Version: "v0"}, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler}).
		Connect(context.Background(), &mcp.IOTransport{Reader: cc, Writer: cc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	checkProgress(t, cs, rec)
}

// TestProgressPersistent checks progress from the persistent shell through dsh mcp -persistent:
// notifications under the call's token, growing, each a whole line of output with the planted
// secret redacted, none after the result and none without a token.
func TestProgressPersistent(t *testing.T) {
	t.Setenv("DSH_TEST_PROGRESS_TOKEN", progressSecret) // a harness secret: redacted
	srv := testServer(t, config{Persistent: true})
	rec := &progressRecorder{}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.connect(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dsh-test", Version: "v0"}, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler}).
		Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	checkProgress(t, cs, rec)
}
