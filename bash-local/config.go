package bashlocal

import (
	"fmt"
	"log/slog"
	"time"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultTimeout        = 120 * time.Second
	DefaultMaxTimeout     = 600 * time.Second
	DefaultMaxOutputBytes = 64_000
	DefaultHeadBytes      = 16_000
	DefaultMaxSpillBytes  = 64 << 20
	DefaultGrace          = 3 * time.Second
	// MaxGrace bounds Grace; a larger value is refused.
	MaxGrace = 2_147_483_647 * time.Millisecond
)

// DefaultScrubPatterns are the substrings that mark an ambient variable as a credential. A name that
// contains one (case-insensitively) is not passed to commands unless listed in Config.KeepEnv or set
// explicitly through Request.Env.
var DefaultScrubPatterns = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSPHRASE", "CREDENTIAL"}

// DefaultScrubPrefixes are the name prefixes of ambient variables that are never passed on: DSH_*
// belongs to the harness that runs us, never to a child.
var DefaultScrubPrefixes = []string{"DSH_"}

// TerminalOverrides are set in every command's environment, after scrubbing and before the
// request's own variables, so that tools print plain text and never wait for a pager or a prompt.
var TerminalOverrides = []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}

// Config configures an Executor. The zero value is usable: every zero field takes its default. A
// negative value (or a Grace above MaxGrace, or HeadBytes not below MaxOutputBytes) is refused by
// New with an error naming the field.
type Config struct {
	// Workdir is where commands start when a request names no directory. Empty means the harness
	// process's working directory at the time of the call.
	Workdir string
	// Timeout is the default foreground timeout (120 s); MaxTimeout caps it and every request's
	// timeout (600 s).
	Timeout    time.Duration
	MaxTimeout time.Duration
	// MaxOutputBytes is the per-stream in-memory budget (64,000 bytes), of which the first
	// HeadBytes (16,000) are kept whatever follows and the rest is a byte-exact tail.
	MaxOutputBytes int
	HeadBytes      int
	// MaxSpillBytes caps each spill file (64 MiB): past it the file keeps the first MaxSpillBytes
	// bytes and is reported as partial.
	MaxSpillBytes int64
	// Grace is the time between SIGTERM and SIGKILL, and how long output is still collected after
	// the command's shell has exited (3 s).
	Grace time.Duration
	// SpillDir is where the executor's private spill directory is created. Empty means the OS
	// temp dir.
	SpillDir string
	// KeepSpills keeps spill files after Close; by default Close removes the private directory.
	KeepSpills bool
	// ScrubPatterns and ScrubPrefixes select the ambient variables that are not passed to commands
	// (nil means DefaultScrubPatterns and DefaultScrubPrefixes; an empty non-nil slice scrubs
	// nothing of that kind). KeepEnv names variables to pass even when they match.
	ScrubPatterns []string
	ScrubPrefixes []string
	KeepEnv       []string
	// BashPath is the bash binary. Empty means "bash" looked up in PATH when New runs.
	BashPath string
	// Logger receives reports of contained failures (a panicking listener). Nil means slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxTimeout == 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.MaxOutputBytes == 0 {
		c.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if c.HeadBytes == 0 {
		c.HeadBytes = min(DefaultHeadBytes, c.MaxOutputBytes/4)
	}
	if c.MaxSpillBytes == 0 {
		c.MaxSpillBytes = DefaultMaxSpillBytes
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.ScrubPatterns == nil {
		c.ScrubPatterns = DefaultScrubPatterns
	}
	if c.ScrubPrefixes == nil {
		c.ScrubPrefixes = DefaultScrubPrefixes
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	switch {
	case c.Timeout < 0:
		return c, fieldError("Timeout", "must be positive")
	case c.MaxTimeout < 0:
		return c, fieldError("MaxTimeout", "must be positive")
	case c.MaxOutputBytes < 0:
		return c, fieldError("MaxOutputBytes", "must be positive")
	case c.HeadBytes < 0 || c.HeadBytes >= c.MaxOutputBytes:
		return c, fieldError("HeadBytes", fmt.Sprintf("must be at least 0 and less than MaxOutputBytes (%d)", c.MaxOutputBytes))
	case c.MaxSpillBytes < 0:
		return c, fieldError("MaxSpillBytes", "must be positive")
	case c.Grace < 0:
		return c, fieldError("Grace", "must be positive")
	case c.Grace > MaxGrace:
		return c, fieldError("Grace", fmt.Sprintf("must be no greater than %v", MaxGrace))
	}
	return c, nil
}

func fieldError(field, problem string) error {
	return fmt.Errorf("bashlocal: Config.%s %s", field, problem)
}
