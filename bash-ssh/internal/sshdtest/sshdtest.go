// Package sshdtest runs a real OpenSSH server (sshd) on loopback for tests: a throwaway host key, an
// authorized client key and a configuration in a private directory, on a free 127.0.0.1 port, as
// the current user. It can stop the server hard (the listener and every per-connection sshd
// process, as a crash or a reboot would), start it again on the same port, and freeze its
// connections (SIGSTOP), which no mock could do faithfully.
//
// It needs the sshd binary (Debian: apt-get install openssh-server). When it is missing, New
// returns an error that says so: the tests that use it fail rather than skip.
package sshdtest

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Options configure a server.
type Options struct {
	// Config holds extra sshd_config lines, such as "MaxSessions 3". Do not put SetEnv there (sshd
	// reads only the first SetEnv line): use Env.
	Config []string
	// Env holds NAME=VALUE entries (no spaces) sshd sets in every session, such as PATH=/nonexistent.
	Env []string
	// User is the account sessions run as; empty means the current user. Another user needs the
	// server to run as root; the account must exist (see EnsureUser). Its home (Server.Home) and
	// authorized_keys are then kept in a directory under /tmp that it may read, removed by Close.
	User string
}

// TestUser is the unprivileged account the tests run remote sessions as, for the escapes that
// root would see through. nobody cannot serve: sshd runs commands through the account's shell,
// which is nologin.
const TestUser = "dsh-sshdtest"

// EnsureUser creates the system account name (no password, shell /bin/bash) when it does not
// exist, with useradd; it is kept for later runs. It must run as root.
func EnsureUser(name string) error {
	if _, err := user.Lookup(name); err == nil {
		return nil
	}
	out, err := exec.Command("useradd", "--system", "--password", "*", "--shell", "/bin/bash", name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sshdtest: useradd %s: %v: %s", name, err, out)
	}
	return nil
}

// Server is a running sshd. Its fields are fixed for its life; its methods are safe for concurrent
// use.
type Server struct {
	Dir        string // private directory: keys, config, log
	Home       string // the remote user's $HOME in sessions (a fresh directory under Dir)
	Host       string // "127.0.0.1"
	Port       int
	User       string
	ClientKey  string // private key file authorized for User
	KnownHosts string // known_hosts file with the server's host key
	HostKey    ssh.PublicKey
	// HostKeyFile is the host's private key; HostKeyFile+".pub" its public key, for ssh-keygen -s.
	HostKeyFile string

	sshd    string
	cfgPath string
	logPath string
	signer  ssh.Signer

	authKeys string // the authorized_keys file
	public   string // a directory the remote user may read, removed by Close ("" for none)

	mu   sync.Mutex
	cmd  *exec.Cmd
	opts Options
}

// SSHD returns the path of the sshd binary, or an error telling how to install it.
func SSHD() (string, error) {
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
	}
	return "", errors.New("the OpenSSH server (sshd) is not installed; these tests need a real one: apt-get install -y openssh-server")
}

// Start starts a server for tb and stops it when tb ends. It fails tb when the server cannot run.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := New(tb.TempDir(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// New starts a server whose files live in dir.
func New(dir string, opts Options) (*Server, error) {
	sshd, err := SSHD()
	if err != nil {
		return nil, err
	}
	if err := privsepDir(); err != nil {
		return nil, err
	}
	u, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("sshdtest: current user: %w", err)
	}
	s := &Server{Dir: dir, Host: "127.0.0.1", User: u.Username, sshd: sshd,
		cfgPath: filepath.Join(dir, "sshd_config"), logPath: filepath.Join(dir, "sshd.log")}
	s.Home = filepath.Join(dir, "home")
	s.authKeys = filepath.Join(dir, "authorized_keys")
	if opts.User != "" && opts.User != u.Username {
		if err := s.publicHome(opts.User); err != nil {
			return nil, err
		}
	} else if err := os.Mkdir(s.Home, 0o700); err != nil {
		return nil, err
	}
	s.opts = opts
	s.HostKeyFile = filepath.Join(dir, "host_ed25519")
	hostPub, _, err := writeKey(s.HostKeyFile)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.HostKeyFile+".pub", ssh.MarshalAuthorizedKey(hostPub), 0o644); err != nil {
		return nil, err
	}
	s.HostKey = hostPub
	s.ClientKey = filepath.Join(dir, "client_ed25519")
	clientPub, signer, err := writeKey(s.ClientKey)
	if err != nil {
		return nil, err
	}
	s.signer = signer
	if err := os.WriteFile(s.authKeys, ssh.MarshalAuthorizedKey(clientPub), 0o644); err != nil {
		return nil, err
	}
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.Port = port
		if err := s.writeConfig(); err != nil {
			return nil, err
		}
		s.KnownHosts = filepath.Join(dir, "known_hosts")
		line := knownhosts.Line([]string{net.JoinHostPort(s.Host, strconv.Itoa(port))}, hostPub)
		if err := os.WriteFile(s.KnownHosts, []byte(line+"\n"), 0o600); err != nil {
			return nil, err
		}
		if lastErr = s.Restart(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// publicHome makes the server's sessions run as name, with a home and an authorized_keys file in a
// directory under /tmp that name may read (sshd reads authorized_keys as the user).
func (s *Server) publicHome(name string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("sshdtest: sessions as %s need the server to run as root", name)
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("sshdtest: %w (EnsureUser creates it)", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	s.public, err = os.MkdirTemp("/tmp", "sshdtest-")
	if err != nil {
		return err
	}
	s.User = name
	s.Home = filepath.Join(s.public, "home")
	s.authKeys = filepath.Join(s.public, "authorized_keys")
	if err := os.Chmod(s.public, 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(s.Home, 0o700); err != nil {
		return err
	}
	return os.Chown(s.Home, uid, gid)
}

// privsepDir creates the directory sshd insists on for privilege separation when it is missing
// (containers often lack it).
func privsepDir() error {
	const dir = "/run/sshd"
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sshdtest: sshd needs %s and it cannot be created: %w", dir, err)
	}
	return nil
}

func writeKey(path string) (ssh.PublicKey, ssh.Signer, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, nil, err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, err
	}
	return sshPub, signer, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("sshdtest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) writeConfig() error {
	opts := s.opts
	lines := []string{
		"Port " + strconv.Itoa(s.Port),
		"ListenAddress " + s.Host,
		"HostKey " + s.HostKeyFile,
		"AuthorizedKeysFile " + s.authKeys,
		"PidFile " + filepath.Join(s.Dir, "sshd.pid"),
		"PermitRootLogin prohibit-password",
		"UsePAM no",
		"StrictModes no",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes",
		"AllowAgentForwarding no",
		"AllowTcpForwarding no",
		"X11Forwarding no",
		"PrintMotd no",
		"PrintLastLog no",
		"UseDNS no",
		"MaxStartups 200",
		"LogLevel ERROR",
		// A home of its own keeps the machine's dotfiles out: Debian's bash reads ~/.bashrc for
		// commands sshd starts, and a slow or noisy one would be measured and seen by every test.
		"SetEnv " + strings.Join(append([]string{"HOME=" + s.Home}, opts.Env...), " "),
	}
	lines = append(lines, opts.Config...)
	return os.WriteFile(s.cfgPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// SetHostCertificate restarts the server so that it presents the host certificate in file (made
// with ssh-keygen -s … -h from HostKeyFile+".pub"), or no certificate when file is empty.
func (s *Server) SetHostCertificate(file string) error {
	s.Stop()
	var cfg []string
	for _, l := range s.opts.Config {
		if !strings.HasPrefix(l, "HostCertificate ") {
			cfg = append(cfg, l)
		}
	}
	if file != "" {
		cfg = append(cfg, "HostCertificate "+file)
	}
	s.opts.Config = cfg
	if err := s.writeConfig(); err != nil {
		return err
	}
	return s.Restart()
}

// Addr returns "127.0.0.1:PORT".
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Restart starts sshd (again) on the server's port and waits until it greets a client.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("sshdtest: server already running")
	}
	log, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(s.sshd, "-D", "-e", "-f", s.cfgPath)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sshdtest: start %s: %w", s.sshd, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if greets(s.Addr()) {
			s.cmd = cmd
			go func() { <-exited }() // reaped by the goroutine above; keep it from blocking
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("sshdtest: sshd exited at start (%v): %s", err, s.Log())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			return fmt.Errorf("sshdtest: sshd did not answer on %s within 10s: %s", s.Addr(), s.Log())
		}
		time.Sleep(10 * time.Millisecond) // polling for a listener that has no readiness signal
	}
}

// greets reports whether an SSH server answers with its banner at addr.
func greets(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "SSH-2.0-")
}

// Log returns what sshd logged.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath)
	return strings.TrimSpace(string(b))
}

// sshdProcs returns the process ids of the sshd processes this server runs: the listener and every
// sshd descendant (the per-connection monitors and their unprivileged children), not the commands
// they run. It reads /proc.
func (s *Server) sshdProcs(includeListener bool) []int {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	root := cmd.Process.Pid
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	if includeListener {
		out = append(out, root)
	}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(c), "exe")); err == nil && exe == s.sshd {
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// Stop kills the server hard: the listener and every per-connection sshd process get SIGKILL, so
// every connection drops at once while the commands it ran are left running, as after a crash.
// Restart starts it again on the same port.
func (s *Server) Stop() {
	pids := s.sshdProcs(true)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	s.mu.Lock()
	s.cmd = nil
	s.mu.Unlock()
	// Wait until the port is free again, so that Restart can bind it.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond); err != nil {
			return
		} else {
			c.Close()
		}
		time.Sleep(5 * time.Millisecond) // polling for the kernel to release the listener
	}
}

// Freeze stops (SIGSTOP) every per-connection sshd process: established connections stay open
// but nothing answers on them, like a link that silently went dead. New connections still work.
// It returns the processes frozen, for Thaw.
func (s *Server) Freeze() []int {
	pids := s.sshdProcs(false)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	return pids
}

// Thaw resumes the processes Freeze stopped.
func (s *Server) Thaw(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGCONT)
	}
}

// Close stops the server and removes the directory of a non-root user's home.
func (s *Server) Close() error {
	s.Stop()
	if s.public != "" {
		return os.RemoveAll(s.public)
	}
	return nil
}

// Exec runs command on the server over a fresh connection of its own (not the executor's) and
// returns its stdout. It is how tests look at the remote side, for example with ps.
func (s *Server) Exec(command string) (string, error) {
	cb, err := knownhosts.New(s.KnownHosts)
	if err != nil {
		return "", err
	}
	client, err := ssh.Dial("tcp", s.Addr(), &ssh.ClientConfig{
		User:            s.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(s.signer)},
		HostKeyCallback: cb,
		Timeout:         5 * time.Second,
	})
	if err != nil {
		return "", fmt.Errorf("sshdtest: dial %s: %w", s.Addr(), err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return "", err
	}
	defer sess.Close()
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	if err := sess.Run(command); err != nil {
		return stdout.String(), fmt.Errorf("sshdtest: run %q: %w: %s", command, err, stderr.String())
	}
	return stdout.String(), nil
}

// Processes returns the live (not zombie) processes on the server whose command line contains
// needle, one "PID STAT ARGS" line each, as ps(1) run over a second connection reports them.
func (s *Server) Processes(needle string) ([]string, error) {
	out, err := s.Exec("ps -eo pid=,stat=,args=")
	if err != nil {
		return nil, err
	}
	var found []string
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 || strings.HasPrefix(fields[1], "Z") {
			continue
		}
		if strings.Contains(line, needle) && !strings.Contains(line, "ps -eo") {
			found = append(found, strings.TrimSpace(line))
		}
	}
	return found, nil
}
