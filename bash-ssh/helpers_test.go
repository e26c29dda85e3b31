package bashssh

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-ssh/internal/sshdtest"
	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/escapetest"
	"github.com/dsh-go/dsh/internal/leaktest"
)

const testGrace = 200 * time.Millisecond

var (
	sharedOnce sync.Once
	shared     *sshdtest.Server
	sharedErr  error
	sharedDir  string
)

// TestMain runs the tests under the repository's leak check (internal/leaktest): no goroutine, no
// descriptor, no child process, and, the "remote" host being this machine, no process carrying the
// tag of an executor the tests created may be left once the shared servers are stopped.
func TestMain(m *testing.M) {
	escapetest.Helper()
	leaktest.Main(m, leaktest.Options{
		Tags: executorTags,
		After: func() {
			for _, s := range []*sshdtest.Server{shared, userServer} {
				if s != nil {
					s.Close()
				}
			}
			for _, d := range []string{sharedDir, userDir} {
				if d != "" {
					os.RemoveAll(d)
				}
			}
		},
	})
}

var (
	tagsMu sync.Mutex
	tags   []string
)

// trackTags remembers the tag of ex, for the final leak check.
func trackTags(ex *Executor) {
	tagsMu.Lock()
	defer tagsMu.Unlock()
	tags = append(tags, ex.tag)
}

// executorTags returns the tag entries of every executor the tests created, for leaktest.
func executorTags() []string {
	tagsMu.Lock()
	defer tagsMu.Unlock()
	out := make([]string, 0, len(tags))
	for _, tag := range tags {
		out = append(out, envpolicy.TagVar+"="+tag+"-*")
	}
	return out
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
		Limits:          bash.Limits{Grace: testGrace},
	}
}

// newExecutor returns an executor for cfg, closed when t ends.
func newExecutor(t testing.TB, cfg Config) *Executor {
	t.Helper()
	ex, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	trackTags(ex)
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
