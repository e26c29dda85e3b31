package bashssh

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-ssh/internal/sshdtest"
)

// runAsync runs req on ex on a goroutine and delivers the error.
func runAsync(ex *Executor, req bash.Request) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := runReq(ex, req)
		errc <- err
	}()
	return errc
}

func recvErr(t *testing.T, errc <-chan error, within time.Duration, what string) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(within):
		t.Fatalf("%s did not return within %v", what, within)
		return nil
	}
}

// wantLost checks that err reports a lost connection, naming the host and one of causes.
func wantLost(t *testing.T, ex *Executor, err error, causes ...string) {
	t.Helper()
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("got %v, want an error matching ErrConnectionLost", err)
	}
	if !strings.Contains(err.Error(), ex.Host()) {
		t.Errorf("error %q does not name the host %s", err, ex.Host())
	}
	for _, c := range causes {
		if strings.Contains(err.Error(), c) {
			return
		}
	}
	t.Errorf("error %q gives none of the causes %q", err, causes)
}

func TestServerStoppedDuringRun(t *testing.T) {
	s := sshdStart(t, sshdtest.Options{})
	ex := newExecutor(t, serverConfig(s))
	mark := newMark(t)
	errc := runAsync(ex, bash.Request{Command: "exec -a " + mark + " sleep 600", Timeout: time.Minute})
	waitProcs(t, s, mark, 1)
	s.Stop()
	wantLost(t, ex, recvErr(t, errc, 10*time.Second, "Run on a server that went away"), "the server closed the connection", "connection reset by peer")

	// The next call reconnects once the server is back, and the command the lost connection left
	// running on the host is stopped then.
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if res := mustRun(t, ex, bash.Request{Command: "echo back"}); res.Stdout.Text() != "back\n" {
		t.Errorf("after the restart, stdout %q", res.Stdout.Text())
	}
	waitProcs(t, s, mark, 0)
}

func TestServerStoppedDuringTask(t *testing.T) {
	s := sshdStart(t, sshdtest.Options{})
	ex := newExecutor(t, serverConfig(s))
	done := make(chan bash.TaskStatus, 1)
	ex.OnTaskDone(func(task *bash.Task) { done <- task.Status() })
	mark := newMark(t)
	spec, _ := ex.Resolve(bash.Request{Command: "echo started; exec -a " + mark + " sleep 600"})
	task, err := ex.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	waitProcs(t, s, mark, 1)
	// Read the output first: the server may be stopped before it has forwarded what it read.
	var got string
	deadline := time.Now().Add(10 * time.Second)
	for got != "started\n" {
		r, err := ex.ReadOutput(task.ID())
		if err != nil {
			t.Fatal(err)
		}
		if got += r.Delta; time.Now().After(deadline) {
			t.Fatalf("the task's reads gave %q, want %q", got, "started\n")
		}
		time.Sleep(5 * time.Millisecond) // polling the task's output
	}
	s.Stop()
	select {
	case st := <-done:
		if st != bash.TaskKilled {
			t.Errorf("the listener saw status %s, want killed", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not end within 10 s of losing its connection")
	}
	if task.ExitCode() != nil || task.Signal() != "" {
		t.Errorf("a task whose connection was lost has exit facts: %v", factsString(task))
	}
	r, err := ex.ReadOutput(task.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Delta, "[stderr]\nconnection lost: ") || !strings.Contains(r.Delta, ex.Host()) {
		t.Errorf("read %q, want a [stderr] note \"connection lost: …\" naming the host", r.Delta)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if res := mustRun(t, ex, bash.Request{Command: "echo back"}); res.Stdout.Text() != "back\n" {
		t.Errorf("after the restart, stdout %q", res.Stdout.Text())
	}
	waitProcs(t, s, mark, 0)
}

// TestCloseUnreachable closes an executor whose host went away while a command ran: Close cannot
// stop what may be left there and says so, naming the host.
func TestCloseUnreachable(t *testing.T) {
	s := sshdStart(t, sshdtest.Options{})
	ex, err := New(serverConfig(s))
	if err != nil {
		t.Fatal(err)
	}
	trackTags(ex)
	mark := newMark(t)
	spec, _ := ex.Resolve(bash.Request{Command: "exec -a " + mark + " sleep 600"})
	task, err := ex.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	waitProcs(t, s, mark, 1)
	s.Stop()
	<-task.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = ex.Close(ctx)
	var ce *ConnectError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "may be left on "+ex.Host()) {
		t.Errorf("Close = %v, want an error saying remote processes may be left on %s, and why", err, ex.Host())
	}
	// Clean up what the test left behind, through a server of its own.
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	procs, err := s.Processes(mark)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if _, err := s.Exec("kill -KILL " + strings.Fields(p)[0]); err != nil {
			t.Error(err)
		}
	}
	waitProcs(t, s, mark, 0)
}

func factsString(task *bash.Task) string {
	code := "none"
	if c := task.ExitCode(); c != nil {
		code = strconv.Itoa(*c)
	}
	return "status " + string(task.Status()) + ", code " + code + ", signal " + task.Signal()
}

// TestKeepaliveDetectsSilentServer freezes the server's side of the connection (SIGSTOP): nothing
// closes the TCP connection, only the missing keepalive answers tell.
func TestKeepaliveDetectsSilentServer(t *testing.T) {
	s := sshdStart(t, sshdtest.Options{})
	cfg := serverConfig(s)
	cfg.KeepaliveInterval = 200 * time.Millisecond
	ex := newExecutor(t, cfg)
	mark := newMark(t)
	errc := runAsync(ex, bash.Request{Command: "exec -a " + mark + " sleep 600", Timeout: time.Minute})
	waitProcs(t, s, mark, 1)
	frozen := s.Freeze()
	err := recvErr(t, errc, 10*time.Second, "Run on a frozen connection")
	s.Thaw(frozen)
	wantLost(t, ex, err, "keepalive")
	if res := mustRun(t, ex, bash.Request{Command: "echo back"}); res.Stdout.Text() != "back\n" {
		t.Errorf("after the freeze, stdout %q", res.Stdout.Text())
	}
	waitProcs(t, s, mark, 0)
}

func writeKnownHosts(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newKey(t *testing.T) (ssh.PublicKey, ed25519.PrivateKey, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sshPub, priv, path
}

func ecdsaKey(t *testing.T) ssh.PublicKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func TestHostKeyRefused(t *testing.T) {
	s := sharedServer(t)
	host := knownhosts.Normalize(s.Addr())
	other, _, _ := newKey(t)
	fp := ssh.FingerprintSHA256(s.HostKey)
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"unknown host", []string{"# nothing yet"}, []string{"is not in known_hosts", fp, host}},
		{"changed key", []string{knownhosts.Line([]string{s.Addr()}, other)},
			[]string{"HOST KEY CHANGED", host, fp, ssh.FingerprintSHA256(other), ":1 holds"}},
		{"key of another type", []string{knownhosts.Line([]string{s.Addr()}, ecdsaKey(t))},
			[]string{"offers none of the key types", "ecdsa-sha2-nistp256", host}},
		{"revoked key", []string{"@revoked * " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.HostKey))), knownhosts.Line([]string{s.Addr()}, s.HostKey)},
			[]string{"@revoked", host, fp}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := serverConfig(s)
			cfg.KnownHostsFiles = []string{writeKnownHosts(t, tt.lines...)}
			ex := newExecutor(t, cfg)
			_, err := runReq(ex, bash.Request{Command: "true"})
			var hk *HostKeyError
			var ce *ConnectError
			if !errors.As(err, &ce) || !errors.As(err, &hk) && !strings.Contains(err.Error(), "host key verification failed") {
				t.Fatalf("Run returned %v, want a *ConnectError for a host key verification failure", err)
			}
			for _, w := range append(tt.want, ex.Host()) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if hk == nil {
				return // refused before a key was offered: no fingerprint to report
			}
			if err := ex.Connect(context.Background()); !errors.As(err, &hk) {
				t.Errorf("Connect returned %v, want the host key error", err)
			}
			spec, _ := ex.Resolve(bash.Request{Command: "true"})
			task, _ := ex.Start(spec)
			<-task.Done()
			if r, _ := ex.ReadOutput(task.ID()); !strings.Contains(r.Delta, "spawn failed: ") || !strings.Contains(r.Delta, fp) {
				t.Errorf("the task's read %q does not report the refused key", r.Delta)
			}
		})
	}
	t.Run("custom callback", func(t *testing.T) {
		cfg := serverConfig(s)
		cfg.KnownHostsFiles = nil
		cfg.HostKeyCallback = func(string, net.Addr, ssh.PublicKey) error { return errors.New("not in the vault") }
		ex := newExecutor(t, cfg)
		_, err := runReq(ex, bash.Request{Command: "true"})
		var hk *HostKeyError
		if !errors.As(err, &hk) || !strings.Contains(err.Error(), "not in the vault") || !strings.Contains(err.Error(), fp) {
			t.Errorf("Run returned %v, want a host key error with the callback's reason and the fingerprint", err)
		}
	})
}

func TestConnectFailures(t *testing.T) {
	s := sharedServer(t)
	_, _, stranger := newKey(t)

	refusedPort := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}()

	// A TCP server that accepts and never speaks SSH.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var heldMu sync.Mutex
	var accepting sync.WaitGroup
	accepting.Go(func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			heldMu.Lock()
			held = append(held, c)
			heldMu.Unlock()
		}
	})
	t.Cleanup(func() {
		silent.Close()
		accepting.Wait()
		for _, c := range held {
			c.Close()
		}
	})

	tests := []struct {
		name string
		edit func(*Config)
		is   error
		want []string
	}{
		{"refused authentication", func(c *Config) { c.IdentityFiles = []string{stranger} }, ErrAuthRefused,
			[]string{"authentication refused", "user " + s.User}},
		{"nothing listening", func(c *Config) { c.Port = refusedPort }, nil, []string{"connection refused"}},
		{"not an SSH server", func(c *Config) {
			c.Port = silent.Addr().(*net.TCPAddr).Port
			c.DialTimeout = 300 * time.Millisecond
		}, nil, []string{"no SSH handshake within 300ms"}},
		{"no agent", func(c *Config) {
			c.IdentityFiles, c.NoAgent = nil, false
			c.AgentSocket = filepath.Join(t.TempDir(), "no-agent.sock")
		}, nil, []string{"ssh-agent at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := serverConfig(s)
			tt.edit(&cfg)
			ex := newExecutor(t, cfg)
			begin := time.Now()
			_, err := runReq(ex, bash.Request{Command: "true"})
			var ce *ConnectError
			if !errors.As(err, &ce) {
				t.Fatalf("Run returned %v, want a *ConnectError", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not match %v", err, tt.is)
			}
			for _, w := range append(tt.want, ex.Host()) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if took := time.Since(begin); took > 10*time.Second {
				t.Errorf("Run took %v to fail", took)
			}
		})
	}
}

func TestAgentAuth(t *testing.T) {
	s := sharedServer(t)
	agentPath, err := exec.LookPath("ssh-agent")
	if err != nil {
		t.Fatal("ssh-agent is needed (Debian: openssh-client):", err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	cmd := exec.Command(agentPath, "-D", "-a", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	var conn net.Conn
	deadline := time.Now().Add(10 * time.Second)
	for conn == nil {
		if conn, err = net.Dial("unix", sock); err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("ssh-agent did not listen on %s: %v", sock, err)
			}
			time.Sleep(10 * time.Millisecond) // polling for the agent's socket
		}
	}
	pem, err := os.ReadFile(s.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.ParseRawPrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.NewClient(conn).Add(agent.AddedKey{PrivateKey: key}); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	cfg := serverConfig(s)
	cfg.IdentityFiles, cfg.NoAgent, cfg.AgentSocket = nil, false, sock
	ex := newExecutor(t, cfg)
	if res := mustRun(t, ex, bash.Request{Command: "echo via-agent"}); res.Stdout.Text() != "via-agent\n" {
		t.Errorf("stdout %q", res.Stdout.Text())
	}
}

// gateCommand writes a file in dir named after its shell, then waits until dir/gate exists.
func gateCommand(dir string) string {
	return "touch " + quote(dir) + "/started.$$; while [ ! -e " + quote(dir) + "/gate ]; do sleep 0.01; done; echo done"
}

func countStarted(t *testing.T, dir string) int {
	entries, err := filepath.Glob(filepath.Join(dir, "started.*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func TestSessionLimits(t *testing.T) {
	s := sshdStart(t, sshdtest.Options{Config: []string{"MaxSessions 3"}})
	tests := []struct {
		name        string
		maxSessions int
		maxConns    int
		commands    int
		concurrent  int  // commands seen running at once
		refusals    bool // the server's limit is lower than the executor's: it refuses sessions
	}{
		{"one connection: the rest wait", 3, 1, 5, 2, false},
		{"beyond one connection: another one", 3, 2, 6, 4, false},
		{"server limit below ours: handled", 10, 1, 4, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := serverConfig(s)
			cfg.MaxSessions, cfg.MaxConnections = tt.maxSessions, tt.maxConns
			ex := newExecutor(t, cfg)
			dir := t.TempDir()
			var errs []<-chan error
			for range tt.commands {
				errs = append(errs, runAsync(ex, bash.Request{Command: gateCommand(dir), Timeout: time.Minute}))
			}
			deadline := time.Now().Add(20 * time.Second)
			for countStarted(t, dir) < tt.concurrent {
				if time.Now().After(deadline) {
					t.Fatalf("%d commands running at once after 20 s, want %d", countStarted(t, dir), tt.concurrent)
				}
				time.Sleep(10 * time.Millisecond) // polling the commands' files
			}
			if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			for i, errc := range errs {
				if err := recvErr(t, errc, 30*time.Second, "a gated command"); err != nil {
					t.Errorf("command %d: %v", i, err)
				}
			}
			if n := countStarted(t, dir); n != tt.commands {
				t.Errorf("%d commands ran, want %d", n, tt.commands)
			}
			if peak := ex.pool.peak.Load(); peak > int64(tt.maxSessions) {
				t.Errorf("%d sessions were open at once on one connection, more than the limit %d", peak, tt.maxSessions)
			}
			if got := ex.pool.refusals.Load(); tt.refusals && got < refusalsToFull {
				t.Errorf("the server refused %d sessions, want at least %d: the executor's limit is above the server's", got, refusalsToFull)
			}
		})
	}
}

// TestSpillDiskFull makes the local spill file fail as on a full disk (writes go to /dev/full): the
// run still succeeds with its head and tail, names no spill file, and the log says why, naming the
// host.
func TestSpillDiskFull(t *testing.T) {
	var logs bytes.Buffer
	var logMu sync.Mutex
	cfg := serverConfig(sharedServer(t))
	cfg.MaxOutputBytes, cfg.HeadBytes = 4000, 1000
	cfg.Logger = slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil))
	ex := newExecutor(t, cfg)
	dir := t.TempDir()
	ex.createSpill = func(stream string) (*os.File, error) {
		// Through a symbolic link, so that removing the abandoned spill removes the link only.
		link := filepath.Join(dir, stream+".log")
		if err := os.Symlink("/dev/full", link); err != nil {
			return nil, err
		}
		return os.OpenFile(link, os.O_WRONLY, 0)
	}
	res := mustRun(t, ex, bash.Request{Command: "seq 1 100000"})
	if !res.Stdout.Truncated() || res.Stdout.Spill.Path != "" || res.Stdout.TotalBytes != 588895 {
		t.Errorf("stdout: truncated %v, spill %q, total %d; want truncated, no spill, 588895 bytes", res.Stdout.Truncated(), res.Stdout.Spill.Path, res.Stdout.TotalBytes)
	}
	if !strings.HasPrefix(res.Stdout.Head, "1\n2\n3\n") || !strings.HasSuffix(res.Stdout.Tail, "99999\n100000\n") {
		t.Errorf("head %q… tail …%q are not the stream's ends", res.Stdout.Head[:10], res.Stdout.Tail[len(res.Stdout.Tail)-14:])
	}
	logMu.Lock()
	got := logs.String()
	logMu.Unlock()
	for _, w := range []string{"local spill file failed", ex.Host(), "no space left on device"} {
		if !strings.Contains(got, w) {
			t.Errorf("the log %q does not mention %q", got, w)
		}
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
