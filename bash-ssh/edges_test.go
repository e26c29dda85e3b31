package bashssh

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// silentServer returns the port of a TCP server that accepts connections and never speaks SSH, so
// that dialling it hangs until DialTimeout.
func silentServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	var accepting sync.WaitGroup
	accepting.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		l.Close()
		accepting.Wait()
		for _, c := range held {
			c.Close()
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}

// TestKillWhileConnecting: Kill of a task whose connection is still being made gives the start
// the longer of the grace period and one second, then cancels the dial: the task ends killed at
// once, not "spawn failed" when DialTimeout (15 s) expires (item 22).
func TestKillWhileConnecting(t *testing.T) {
	cfg := serverConfig(sharedServer(t))
	cfg.Port = silentServer(t)
	ex := newExecutor(t, cfg)
	task, err := ex.Start(bash.Request{Command: "sleep 600"})
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if ok, err := ex.Kill(task.ID()); !ok || err != nil {
		t.Fatalf("Kill = %v, %v", ok, err)
	}
	select {
	case <-task.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("the task did not end within 5s of Kill (DialTimeout is %v)", DefaultDialTimeout)
	}
	if took := time.Since(begin); took < startGrace {
		t.Errorf("the task ended %v after Kill, before the start had %v", took, startGrace)
	}
	r, err := ex.ReadOutput(task.ID())
	if err != nil {
		t.Fatal(err)
	}
	if task.Status() != bash.TaskKilled || strings.Contains(r.Delta, "spawn failed") {
		t.Errorf("after Kill while connecting: %s, read %q; want killed without a spawn failure", factsString(task), r.Delta)
	}
}

// TestLongWorkdirError: a workdir whose error message is longer than what a login shell may print
// before the command starts is still reported as a workdir error, with a bounded message (item 22).
func TestLongWorkdirError(t *testing.T) {
	ex := newExecutor(t, serverConfig(sharedServer(t)))
	dir := "/nonexistent/" + strings.Repeat("d", 100<<10)
	_, err := runReq(ex, bash.Request{Command: "true", Workdir: dir})
	var se *SpawnError
	if !errors.As(err, &se) || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(se.Reason, "workdir ") {
		t.Fatalf("Run returned %v, want a workdir SpawnError matching fs.ErrNotExist", err)
	}
	t.Logf("reason: %.300s (%d bytes)", se.Reason, len(se.Reason))
	if len(se.Reason) > 2*maxReason {
		t.Errorf("the reason takes %d bytes", len(se.Reason))
	}
}

// TestErrorPrefix: errors of Resolve and Connect carry the package's prefix; bash.ErrClosed stays
// exact, as the seam documents it.
func TestErrorPrefix(t *testing.T) {
	ex := newExecutor(t, serverConfig(sharedServer(t)))
	if _, err := ex.Resolve(bash.Request{Command: " "}); err == nil || !strings.HasPrefix(err.Error(), "bashssh: ") {
		t.Errorf("Resolve of a blank command = %v, want a bashssh: error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ex.Connect(ctx); err == nil || !strings.HasPrefix(err.Error(), "bashssh: ") || !errors.Is(err, context.Canceled) {
		t.Errorf("Connect with a cancelled context = %v, want a bashssh: error matching context.Canceled", err)
	}
	if err := ex.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ex.Connect(context.Background()); err != bash.ErrClosed {
		t.Errorf("Connect after Close = %v, want bash.ErrClosed itself", err)
	}
}
