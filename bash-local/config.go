package bashlocal

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/envpolicy"
)

// Config configures an Executor. The zero value is usable: every zero field takes its default.
// New refuses an invalid value with an error naming the field.
type Config struct {
	// Limits bound every command in time and memory (see bash.Limits for the defaults: 120 s
	// timeout capped at 600 s, 64,000 bytes per stream of which 16,000 are the head, spill files of
	// at most 64 MiB, a grace of 3 s).
	bash.Limits
	// Workdir is where commands start when a request names no directory. Empty means the harness
	// process's working directory at the time of the call.
	Workdir string
	// SpillDir is where the executor's private spill directory is created. Empty means the OS
	// temp dir.
	SpillDir string
	// KeepSpills keeps spill files after Close; by default Close removes the private directory.
	KeepSpills bool
	// ScrubPatterns and ScrubPrefixes select the ambient variables that are not passed to commands:
	// a name containing one of the patterns or starting with one of the prefixes, compared
	// case-insensitively (nil means the defaults, a name containing KEY, SECRET, TOKEN, PASSWORD,
	// PASSPHRASE or CREDENTIAL, or starting with DSH_; an empty non-nil slice scrubs nothing of
	// that kind). Entries must be letters, digits and underscores. KeepEnv names variables to pass
	// even when they match.
	ScrubPatterns []string
	ScrubPrefixes []string
	KeepEnv       []string
	// Sandbox is the sandbox policy of every call whose request names none (see bash.Sandbox).
	// The zero value is off. New refuses an invalid policy and a writable root that is not an
	// existing directory; a call whose policy this machine cannot enforce fails with an error
	// matching bash.ErrSandboxUnavailable (on Linux, see the README for what it needs).
	Sandbox bash.Sandbox
	// MaxProcesses is the RLIMIT_NPROC every command gets: the tasks (processes and threads) of
	// the user beyond which its forks fail. Zero derives it from the harness's own limit, less a
	// reserve of 64 for the harness's threads (proclimit.Cap), or, when the harness has none, half
	// the smaller of kernel.pid_max and kernel.threads-max. A larger value than the derived one is
	// lowered to it when the harness has a limit. Negative is invalid.
	MaxProcesses int
	// BashPath is the bash binary. Empty means "bash" looked up in PATH when New runs.
	BashPath string
	// Logger receives reports of contained failures (a panicking listener). Nil means slog.Default().
	Logger *slog.Logger

	// landlockABI is a test hook: when non-zero, the sandbox acts as if the kernel offered this
	// Landlock ABI (-1: none).
	landlockABI int
}

// withDefaults returns c with every default applied and the scrub policy it describes, or an
// error naming the first invalid field.
func (c Config) withDefaults() (Config, envpolicy.Policy, error) {
	c.Limits.SetDefaults()
	if err := c.Limits.Validate(); err != nil {
		return c, envpolicy.Policy{}, fmt.Errorf("bashlocal: Config: %w", err)
	}
	if err := c.Sandbox.Validate(); err != nil {
		return c, envpolicy.Policy{}, fmt.Errorf("bashlocal: Config: %w", err)
	}
	for i, root := range c.Sandbox.WritableRoots {
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			return c, envpolicy.Policy{}, fmt.Errorf("bashlocal: Config: Sandbox.WritableRoots[%d] %q is not an existing directory", i, root)
		}
	}
	if c.MaxProcesses < 0 {
		return c, envpolicy.Policy{}, fmt.Errorf("bashlocal: Config.MaxProcesses %d is negative (0 derives it from the harness's own limit)", c.MaxProcesses)
	}
	scrub, err := envpolicy.New(c.ScrubPatterns, c.ScrubPrefixes, c.KeepEnv)
	if err != nil {
		return c, envpolicy.Policy{}, fmt.Errorf("bashlocal: %w", err)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, scrub, nil
}
