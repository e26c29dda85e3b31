package bashssh

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/bash-ssh/internal/sshdtest"
)

const testGrace = 200 * time.Millisecond

var (
	sharedOnce sync.Once
	shared     *sshdtest.Server
	sharedErr  error
	sharedDir  string
)

// TestMain stops the shared server after the tests and then checks that no goroutine is left.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// sharedServer returns the sshd most tests share; tests that break their server start their own.
func sharedServer(t testing.TB) *sshdtest.Server {
	t.Helper()
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "bashssh-sshd-")
		if sharedErr == nil {
			// Variables of the remote login environment, for the scrubbing tests.
			shared, sharedErr = sshdtest.New(sharedDir, sshdtest.Options{Env: strings.Fields(ambientEnv)})
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// ambientEnv is what the shared server puts in every session's environment (after HOME).
const ambientEnv = "BASHSSH_AMBIENT_API_KEY=secret DSH_STALE=stale BASHSSH_PLAIN=plain"

// serverConfig returns a configuration that reaches s with its test key.
func serverConfig(s *sshdtest.Server) Config {
	return Config{
		Host:            s.Host,
		Port:            s.Port,
		User:            s.User,
		KnownHostsFiles: []string{s.KnownHosts},
		IdentityFiles:   []string{s.ClientKey},
		NoAgent:         true,
		Grace:           testGrace,
	}
}

// newExecutor returns an executor for cfg, closed when t ends.
func newExecutor(t testing.TB, cfg Config) *Executor {
	t.Helper()
	ex, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ex.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return ex
}

// sshdStart starts a server of the test's own, for tests that break it or need a special one.
func sshdStart(t *testing.T, opts sshdtest.Options) *sshdtest.Server {
	t.Helper()
	return sshdtest.Start(t, opts)
}
