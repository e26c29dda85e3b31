package persistentbash

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tool-bash-persistent/internal/ptyshell"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultTimeout        = 300 * time.Second
	DefaultMaxOutputChars = ptyshell.DefaultMaxOutputChars // the shell's own, declared once there
	DefaultKillGrace      = ptyshell.DefaultKillGrace
	// DefaultDescription is the tool description the model reads.
	DefaultDescription = "Run commands in a persistent bash shell. State, including the current directory and exported environment variables, persists across calls for this agent. Commands get no interactive input: a program that waits for input on the terminal is sent end-of-file."
	// CommandDescription describes the command argument to the model.
	CommandDescription = "The bash command to run. Relative path is preferred in the command."
)

// Config configures the persistent bash tool. The zero value is usable: zero fields take their
// defaults. New refuses a negative Timeout, MaxOutputChars or KillGrace, a Description that is
// set but blank, and a relative Workdir, with an error naming the field.
type Config struct {
	// Description is the tool description the model reads (DefaultDescription).
	Description string
	// Timeout bounds one call: starting a shell when the owner has none, and running the
	// command (300 s). On expiry the partial output is returned and the shell is reset.
	Timeout time.Duration
	// MaxOutputChars is the number of characters (runes) of output a result keeps, split
	// between head and tail (16,000).
	MaxOutputChars int
	// Workdir is where a new shell starts when the calling agent has no directory; a relative
	// agent directory is resolved against it. Empty means the process's working directory when
	// New runs; otherwise it must be absolute.
	Workdir string
	// Bash is the bash binary; empty means "bash" looked up in PATH when a shell starts.
	Bash string
	// ScrubPatterns and ScrubPrefixes select the ambient variables not passed to the shell, by the
	// same rule and defaults as the one-shot executors' (nil means the defaults: a name containing
	// KEY, SECRET, TOKEN, PASSWORD, PASSPHRASE or CREDENTIAL, or starting with DSH_; an empty
	// non-nil slice scrubs nothing of that kind). KeepEnv names variables passed even when they
	// match.
	ScrubPatterns []string
	ScrubPrefixes []string
	KeepEnv       []string
	// Env holds variables set in every shell, over the scrubbed environment and the terminal
	// overrides (NO_COLOR=1 TERM=dumb PAGER=cat GIT_PAGER=cat GIT_TERMINAL_PROMPT=0).
	Env map[string]string
	// KillGrace is how long a closing shell's processes get between SIGTERM and SIGKILL (2 s).
	KillGrace time.Duration
	// Sandbox confines every shell (Linux): the whole shell runs in it, so every command of it
	// does. Its mode is off (the zero value), read-only (write only the tool's private TMPDIR)
	// or workspace-write (also Workdir and the policy's WritableRoots); Network and DenyRead as
	// for the one-shot executor (see bash.Sandbox). On a machine that cannot enforce it, New
	// returns an error matching bash.ErrSandboxUnavailable unless BestEffort is set. New refuses
	// an invalid policy with an error naming the field.
	Sandbox bash.Sandbox
}

func (c Config) withDefaults() (Config, error) {
	const pre = "persistentbash: "
	switch {
	case c.Timeout < 0:
		return c, fmt.Errorf(pre+"Timeout must be positive, got %v", c.Timeout)
	case c.MaxOutputChars < 0:
		return c, fmt.Errorf(pre+"MaxOutputChars must be positive, got %d", c.MaxOutputChars)
	case c.KillGrace < 0:
		return c, fmt.Errorf(pre+"KillGrace must not be negative, got %v", c.KillGrace)
	case c.Description != "" && strings.TrimSpace(c.Description) == "":
		return c, fmt.Errorf(pre + "Description must be non-empty when set")
	case c.Workdir != "" && !filepath.IsAbs(c.Workdir):
		return c, fmt.Errorf(pre+"Workdir must be absolute, got %q", c.Workdir)
	}
	if c.Description == "" {
		c.Description = DefaultDescription
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxOutputChars == 0 {
		c.MaxOutputChars = DefaultMaxOutputChars
	}
	if c.KillGrace == 0 {
		c.KillGrace = DefaultKillGrace
	}
	if c.Workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return c, fmt.Errorf(pre+"working directory: %w", err)
		}
		c.Workdir = wd
	}
	return c, nil
}
