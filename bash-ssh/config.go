package bashssh

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/envpolicy"

	"golang.org/x/crypto/ssh"
)

// Defaults applied by New to zero fields of Config. The executor's limits (timeouts, output
// budgets, grace) are those of every backend, bash.Limits, so that swapping backends changes
// nothing a model sees.
const (
	DefaultPort = 22
	// DefaultMaxSessions is OpenSSH's own default limit of sessions per connection (sshd_config
	// MaxSessions).
	DefaultMaxSessions    = 10
	DefaultMaxConnections = 4
	DefaultDialTimeout    = 15 * time.Second
	DefaultKeepalive      = 15 * time.Second
	DefaultWorkdir        = "~"
	DefaultRemoteBash     = "bash"
)

// Config configures an Executor. Host is required and at least one way to authenticate must be
// available (IdentityFiles, or an SSH agent); every other zero field takes its default. New refuses
// an invalid value with an error naming the field.
//
// There is no way to skip host key verification by leaving fields empty: keys are checked against
// KnownHostsFiles (default ~/.ssh/known_hosts) unless the caller supplies its own HostKeyCallback.
type Config struct {
	// Host is the remote host name or address; Port its SSH port (22); User the remote user (the
	// local user's name when empty).
	Host string
	Port int
	User string

	// KnownHostsFiles are OpenSSH known_hosts files the server's host key must be listed in, or
	// that trust the authority that signed its host certificate (@cert-authority); @revoked keys
	// are refused. Empty means ~/.ssh/known_hosts. Entries are matched as OpenSSH matches them:
	// hosts on a port other than 22 are written "[host]:port", and patterns ("*", "?", "!") and
	// hashed names are understood.
	KnownHostsFiles []string
	// HostKeyCallback, when set, verifies host keys instead of KnownHostsFiles. It is for callers
	// with their own trust store; an error it returns is reported as a host key error.
	HostKeyCallback ssh.HostKeyCallback

	// IdentityFiles are private key files (OpenSSH or PEM format, not passphrase-protected: load
	// protected keys into an agent instead).
	IdentityFiles []string
	// AgentSocket is the ssh-agent socket. Empty means $SSH_AUTH_SOCK when it is set. NoAgent turns
	// agent authentication off.
	AgentSocket string
	NoAgent     bool

	// MaxSessions is the number of sessions one connection carries at once (10, OpenSSH's default).
	// One of them is kept for signalling, so MaxSessions-1 commands run at once per connection; a
	// command beyond that goes to another connection, up to MaxConnections (4), then waits for a free
	// session. MaxSessions must be at least 2 and must not exceed the server's own limit.
	MaxSessions    int
	MaxConnections int
	// DialTimeout bounds connecting: TCP connect, handshake and authentication (15 s).
	DialTimeout time.Duration
	// KeepaliveInterval is how often each connection is probed (15 s); a probe that gets no answer
	// within another KeepaliveInterval marks the connection lost, and the calls it carried fail. A
	// negative value turns keepalives off: then only the server closing the connection is noticed.
	KeepaliveInterval time.Duration

	// Limits bound every command in time and memory (see bash.Limits for the defaults). Grace is
	// also how long output is still collected after the command's shell exited.
	bash.Limits
	// Workdir is where commands start on the remote host when a request names no directory. The
	// default "~" is the remote user's home; "~/x" is relative to it, and so is a relative path.
	Workdir string
	// SpillDir is where the executor's private spill directory is created, on the local machine.
	// Empty means the OS temp dir.
	SpillDir string
	// KeepSpills keeps spill files after Close; by default Close removes the private directory.
	KeepSpills bool
	// ScrubPatterns and ScrubPrefixes select variables of the remote login environment that are
	// not passed to commands, by the same rule and defaults as the local backend's (nil means the
	// defaults; an empty non-nil slice scrubs nothing of that kind). KeepEnv names variables to
	// pass even when they match. Patterns and prefixes must be letters, digits and underscores.
	ScrubPatterns []string
	ScrubPrefixes []string
	KeepEnv       []string
	// RemoteBash is the bash the remote side runs ("bash", looked up in the remote PATH).
	RemoteBash string
	// Logger receives reports of contained failures (a panicking listener, a spill file that could
	// not be written, a remote cleanup that failed). Nil means slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, envpolicy.Policy, error) {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.User == "" {
		c.User = localUser()
	}
	if len(c.KnownHostsFiles) == 0 && c.HostKeyCallback == nil {
		home, err := os.UserHomeDir()
		if err != nil {
			return c, envpolicy.Policy{}, fieldError("KnownHostsFiles", "is empty and the home directory is unknown: "+err.Error())
		}
		c.KnownHostsFiles = []string{filepath.Join(home, ".ssh", "known_hosts")}
	}
	if c.AgentSocket == "" && !c.NoAgent {
		c.AgentSocket = os.Getenv("SSH_AUTH_SOCK")
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.KeepaliveInterval == 0 {
		c.KeepaliveInterval = DefaultKeepalive
	}
	if c.Workdir == "" {
		c.Workdir = DefaultWorkdir
	}
	if c.RemoteBash == "" {
		c.RemoteBash = DefaultRemoteBash
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Limits.SetDefaults()
	if err := c.validate(); err != nil {
		return c, envpolicy.Policy{}, err
	}
	scrub, err := envpolicy.New(c.ScrubPatterns, c.ScrubPrefixes, c.KeepEnv)
	if err != nil {
		return c, envpolicy.Policy{}, fmt.Errorf("bashssh: %w", err)
	}
	return c, scrub, nil
}

func (c Config) validate() error {
	switch {
	case strings.TrimSpace(c.Host) == "":
		return fieldError("Host", "must not be empty")
	case strings.ContainsAny(c.Host, " \t\r\n/@"):
		return fieldError("Host", fmt.Sprintf("%q is not a host name or address", c.Host))
	case c.Port < 1 || c.Port > 65535:
		return fieldError("Port", fmt.Sprintf("%d is not between 1 and 65535", c.Port))
	case c.User == "":
		return fieldError("User", "is empty and the local user is unknown")
	case len(c.IdentityFiles) == 0 && c.AgentSocket == "":
		return errors.New("bashssh: no way to authenticate: set Config.IdentityFiles or run an ssh-agent (SSH_AUTH_SOCK)")
	case c.MaxSessions < 2:
		return fieldError("MaxSessions", "must be at least 2 (one session is kept for signalling)")
	case c.MaxConnections < 1:
		return fieldError("MaxConnections", "must be positive")
	case c.DialTimeout < 0:
		return fieldError("DialTimeout", "must be positive")
	case strings.ContainsRune(c.Workdir, 0):
		return fieldError("Workdir", "must not contain a NUL byte")
	case strings.ContainsAny(c.RemoteBash, "\x00\n"):
		return fieldError("RemoteBash", "must not contain a NUL byte or a newline")
	}
	if err := c.Limits.Validate(); err != nil {
		return fmt.Errorf("bashssh: Config: %w", err)
	}
	return nil
}

func fieldError(field, problem string) error {
	return fmt.Errorf("bashssh: Config.%s %s", field, problem)
}

func localUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}
