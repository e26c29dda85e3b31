package launcher

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// Channel runs cmd on the remote side (a container exec, a pod exec, an SSH session) with stdin as
// its standard input, waits for it and returns its standard output. An error means the channel
// failed (the engine unreachable, the container gone); it should name what to run or check. It
// must return once the command has exited, without waiting for stdin to end: Stop closes stdin
// only after the Channel returns.
type Channel func(ctx context.Context, cmd Command, stdin io.Reader) ([]byte, error)

// Stop runs c, a controller in mode "stop", over ch and waits for it: it returns the processes a
// final stop left running because their environment cannot be read, or an error. Closing kill asks
// for SIGKILL before the grace has passed (kill may be nil).
func Stop(ctx context.Context, ch Channel, c Control, kill <-chan struct{}) ([]Unreadable, error) {
	c.Mode = "stop"
	pr, pw := io.Pipe()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-kill:
			_, _ = pw.Write([]byte("kill\n"))
			<-done
		case <-done:
		}
	}()
	out, err := ch(ctx, c.Build(), pr)
	close(done)
	pw.Close()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	r, ok := Report(out, c.Marker)
	if !ok {
		return nil, fmt.Errorf("controller printed no report: %q", clip(out))
	}
	return ParseStop(r)
}

// Check runs c, a controller in mode "check", over ch and returns the process groups of its
// targets that still have live members.
func Check(ctx context.Context, ch Channel, c Control) (map[int]bool, error) {
	c.Mode = "check"
	out, err := ch(ctx, c.Build(), nil)
	if err != nil {
		return nil, err
	}
	r, ok := Report(out, c.Marker)
	if !ok {
		return nil, fmt.Errorf("controller printed no report: %q", clip(out))
	}
	return ParseCheck(r)
}

func clip(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}
