package bashssh

import (
	"runtime"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/bashtest"
)

// TestConformance runs the seam's conformance kit against executors on a real OpenSSH server.
func TestConformance(t *testing.T) {
	s := sharedServer(t)
	workdir := t.TempDir()
	cfg := serverConfig(s)
	cfg.Workdir = workdir
	cfg.Timeout = 30 * time.Second
	cfg.MaxTimeout = 60 * time.Second
	cfg.MaxOutputBytes = 4000
	cfg.HeadBytes = 1000
	bashtest.Run(t, func(t *testing.T) bash.Executor {
		ex, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		trackTags(ex)
		return ex
	}, bashtest.Options{
		Workdir:  workdir,
		Limits:   cfg.Limits,
		Escapees: runtime.GOOS == "linux", // the "remote" host is this machine
		Progress: true,
	})
}
