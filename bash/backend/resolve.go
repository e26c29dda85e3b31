package backend

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/bash"
)

// Resolve returns req as bash.Executor.Resolve documents it for an executor with limits lim
// (after SetDefaults) whose default working directory is workdir: an empty Workdir becomes
// workdir, a zero Timeout becomes lim.Timeout, any Timeout is capped at lim.MaxTimeout, and a
// zero StdoutMaxBytes becomes lim.MaxOutputBytes. It returns CheckRequest's error for an invalid
// request. Resolving a resolved request changes nothing.
func Resolve(req bash.Request, lim bash.Limits, workdir string) (bash.Request, error) {
	if err := CheckRequest(req); err != nil {
		return bash.Request{}, err
	}
	if req.Workdir == "" {
		req.Workdir = workdir
	}
	if req.Timeout == 0 {
		req.Timeout = lim.Timeout
	}
	req.Timeout = min(req.Timeout, lim.MaxTimeout)
	if req.StdoutMaxBytes == 0 {
		req.StdoutMaxBytes = lim.MaxOutputBytes
	}
	return req, nil
}

// CheckRequest returns an error naming the field when req.Command is blank, req.Timeout is
// negative, req.StdoutMaxBytes is negative, req.Sandbox fails bash.Sandbox.Validate or req.TTY fails bash.TTY.Validate, and nil
// otherwise.
func CheckRequest(req bash.Request) error {
	if err := req.Sandbox.Validate(); err != nil {
		return fmt.Errorf("backend: Request: %w", err)
	}
	switch {
	case strings.TrimSpace(req.Command) == "":
		return errors.New("backend: Request.Command must not be empty")
	case req.Timeout < 0:
		return errors.New("backend: Request.Timeout must not be negative")
	case req.StdoutMaxBytes < 0:
		return errors.New("backend: Request.StdoutMaxBytes must not be negative")
	}
	if req.TTY != nil {
		if err := req.TTY.Validate(); err != nil {
			return fmt.Errorf("backend: Request: %w", err)
		}
	}
	return nil
}

// Streams are the two collectors of one command.
type Streams struct {
	Stdout, Stderr *Collector
}

// NewStreams returns the collectors of one command under lim (after SetDefaults): stdout keeps
// stdoutMax bytes in memory (lim.MaxOutputBytes when zero), stderr lim.MaxOutputBytes, each with
// lim.HeadBytes of head (a quarter of a smaller stdout budget). A stream that overflows spills to
// the file create opens for it ("stdout" or "stderr"); a nil create keeps everything in memory.
func NewStreams(lim bash.Limits, stdoutMax int, create func(stream string) (SpillFile, error)) Streams {
	if stdoutMax <= 0 {
		stdoutMax = lim.MaxOutputBytes
	}
	return Streams{
		Stdout: newStream(lim, stdoutMax, "stdout", create),
		Stderr: newStream(lim, lim.MaxOutputBytes, "stderr", create),
	}
}

func newStream(lim bash.Limits, maxBytes int, stream string, create func(string) (SpillFile, error)) *Collector {
	cfg := CollectorConfig{MaxBytes: maxBytes, HeadBytes: lim.HeadBytes, MaxSpillBytes: lim.MaxSpillBytes}
	if maxBytes != lim.MaxOutputBytes {
		cfg.HeadBytes = min(lim.HeadBytes, maxBytes/4)
	}
	if create != nil {
		cfg.Create = func() (SpillFile, error) { return create(stream) }
	}
	c, err := NewCollector(cfg)
	if err != nil {
		// Limits.Validate and CheckRequest admit no budget NewCollector refuses; a backend that
		// skipped them gets in-memory defaults rather than a panic.
		c, _ = NewCollector(CollectorConfig{MaxBytes: bash.DefaultMaxOutputBytes, HeadBytes: bash.DefaultHeadBytes})
	}
	return c
}

// Seal seals both streams.
func (s Streams) Seal() {
	s.Stdout.Seal()
	s.Stderr.Seal()
}

// Output returns both streams' collected output.
func (s Streams) Output() (stdout, stderr bash.Output) { return s.Stdout.Output(), s.Stderr.Output() }

// FailSpawn ends e's task as a command that could not be started, the one way the contract
// states: its streams are sealed, its next read carries "spawn failed: " and err's text, it is
// marked killed, and it is settled with notify (the listeners) on a goroutine counted in wg,
// because listeners never run inside Start.
func (e *TaskEntry) FailSpawn(err error, notify func(*bash.Task), wg *sync.WaitGroup) {
	e.SetNote("spawn failed: " + err.Error())
	e.Control.MarkKilled()
	wg.Go(func() { e.Control.Settle(nil, "", notify) })
}

// Settle ends e's task with the exit facts of its command (code nil when a signal, named by
// signal, killed it): its streams are sealed, then the task is settled with notify.
func (e *TaskEntry) Settle(code *int, signal string, notify func(*bash.Task)) {
	e.Stdout.Seal()
	e.Stderr.Seal()
	e.Control.Settle(code, signal, notify)
}
