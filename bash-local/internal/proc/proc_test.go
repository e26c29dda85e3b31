package proc

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCopyKeepsWhatThePipeHolds: a read that fails on the deadline set after the grace period
// still copies what the pipe already held (the reader may have been starved of CPU until then),
// and a writer that keeps the pipe full cannot make the final copy go on without end.
func TestCopyKeepsWhatThePipeHolds(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := w.Write([]byte("written before the deadline\n")); err != nil {
		t.Fatal(err)
	}
	if err := r.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	copyUntilError(&got, r)
	if got.String() != "written before the deadline\n" {
		t.Fatalf("copied %q; want what the pipe held", got.String())
	}
}

// TestFinalDrainIsBounded: the copy after the deadline stops at maxFinalDrain even when the
// other end never stops writing.
func TestFinalDrainIsBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // an escapee that writes for ever
		defer close(done)
		defer w.Close()
		chunk := []byte(strings.Repeat("x", 4096))
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = w.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
			_, _ = w.Write(chunk)
		}
	}()
	if err := r.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	copyUntilError(&got, r)
	close(stop)
	<-done
	if got.Len() > maxFinalDrain {
		t.Fatalf("copied %d bytes after the deadline; want at most %d", got.Len(), maxFinalDrain)
	}
}
