package bashssh

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-ssh/internal/sshdtest"
	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/escapetest"
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
	escapetest.Helper()
	code := m.Run()
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
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
		// The "remote" host is this machine: every process a test's executor started carries its
		// tag, and none may be left.
		if left := taggedProcesses(); len(left) > 0 {
			fmt.Fprintln(os.Stderr, "leaked remote processes:\n"+strings.Join(left, "\n"))
			code = 1
		}
	}
	os.Exit(code)
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

// taggedProcesses returns the live processes on this machine that carry the tag of an executor the
// tests created.
func taggedProcesses() []string {
	tagsMu.Lock()
	defer tagsMu.Unlock()
	var left []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil || bytes.Contains(stat, []byte(") Z ")) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			value, ok := bytes.CutPrefix(kv, []byte(envpolicy.TagVar+"="))
			if !ok {
				continue
			}
			for _, tag := range tags {
				if bytes.HasPrefix(value, []byte(tag+"-")) {
					cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
					left = append(left, dir+": "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
				}
			}
		}
	}
	return left
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
