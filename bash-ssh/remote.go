package bashssh

import (
	"fmt"
	"time"

	"github.com/dsh-go/dsh/internal/envpolicy"
	"github.com/dsh-go/dsh/internal/launcher"
)

// The remote side of the executor is internal/launcher's launcher and controller, sent with every
// session as one command line (launcher.Command.Line) that the remote user's login shell reads; it
// must understand POSIX single quotes (sh, bash, dash, zsh, ksh).

// maxCommandLine is the longest command line a session may carry.
const maxCommandLine = launcher.MaxCommandLine

// quote returns s as one word for a POSIX shell (launcher.Quote).
func quote(s string) string { return launcher.Quote(s) }

// launchArgs is what the launcher needs to start one command.
type launchArgs struct {
	marker  string
	workdir string
	stdin   bool
	bash    string
	scrub   envpolicy.Rules
	env     []string // NAME=VALUE, applied in order (a later entry wins)
	command string
}

// build returns the session command line for a, or an error naming what cannot be sent.
func (a launchArgs) build() (string, error) {
	c, err := launcher.Launch{Name: "dsh-bash-ssh", Marker: a.marker, Workdir: a.workdir, Stdin: a.stdin,
		Bash: a.bash, Scrub: a.scrub, Env: a.env, Command: a.command}.Build()
	if err != nil {
		return "", err
	}
	if len(c.Line) > maxCommandLine {
		return "", fmt.Errorf("the command and its environment take %d bytes on the remote command line, more than the %d one argument may hold", len(c.Line), maxCommandLine)
	}
	return c.Line, nil
}

// envEntries returns the NAME=VALUE entries every command gets (launcher.EnvEntries).
func envEntries(extra map[string]string, tag string) ([]string, error) {
	return launcher.EnvEntries(extra, tag)
}

// controlCommand builds the command line of a controller session.
func controlCommand(bashPath, marker, mode string, grace time.Duration, own, sweep, since string, targets []target) string {
	ts := make([]launcher.Target, 0, len(targets))
	for _, t := range targets {
		ts = append(ts, launcher.Target{PGID: t.pgid, Start: t.start, Tag: t.tag})
	}
	return launcher.Control{Name: "dsh-bash-ssh-control", Bash: bashPath, Marker: marker, Mode: mode, Grace: grace,
		Own: own, Sweep: sweep, Since: since, Targets: ts}.Build().Line
}

func ownPattern(execTag string) string { return launcher.OwnPattern(execTag) }

func tagsPattern(tags []string) string { return launcher.TagsPattern(tags) }
