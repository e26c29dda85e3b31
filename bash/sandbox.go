package bash

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// SandboxMode says how far a sandboxed command may write.
type SandboxMode string

// The sandbox modes. In a [Request], the zero mode means "the executor's policy"; in a backend's
// configuration it means off.
const (
	// SandboxOff runs the command unconfined.
	SandboxOff SandboxMode = "off"
	// SandboxReadOnly lets the command read what the policy does not deny and write only to the
	// executor's private temporary directory (and the few device files every shell writes, such as
	// /dev/null).
	SandboxReadOnly SandboxMode = "read-only"
	// SandboxWorkspaceWrite also lets it write under the workspace, the executor's own working
	// directory (not the call's, which a model may choose), and the policy's extra writable
	// roots.
	SandboxWorkspaceWrite SandboxMode = "workspace-write"
)

// NetworkMode says whether a sandboxed command may use the network.
type NetworkMode string

// The network modes. The zero mode is NetworkOff.
const (
	// NetworkOff closes every socket that could reach another process: TCP, UDP, raw and Unix
	// sockets alike (a connected pair the command makes for itself still works).
	NetworkOff NetworkMode = "off"
	// NetworkOn lets the command use the host's network; Unix sockets that lead outside the
	// sandbox stay closed.
	NetworkOn NetworkMode = "on"
)

// DefaultDenyRead are the paths a sandboxed command may not read when a policy names none: the
// usual homes of credentials. A leading "~/" stands for the home directory of the user the
// command runs as, resolved by the backend.
var DefaultDenyRead = []string{"~/.ssh", "~/.aws", "~/.gnupg", "~/.kube", "~/.docker", "~/.netrc", "~/.config/gcloud"}

// Sandbox is a sandbox policy: what a command may do once it runs, whatever it is. A backend's
// configuration carries one for every call and a [Request] may carry its own, which replaces the
// configured one as a whole. A backend that cannot enforce a requested policy refuses the call
// with an error matching [ErrSandboxUnavailable]; it never runs the command less confined than
// asked, unless BestEffort says so.
//
// The zero value is "the executor's policy" in a Request and "off" in a configuration.
type Sandbox struct {
	// Mode is off, read-only or workspace-write.
	Mode SandboxMode
	// Network is off (the zero value) or on.
	Network NetworkMode
	// WritableRoots are directories that workspace-write also lets the command write under, besides
	// the workspace and the executor's private temporary directory (which is exported as TMPDIR).
	// Each must be absolute and exist.
	WritableRoots []string
	// DenyRead are files and directories the command may not read (nor list the contents of, nor
	// execute from). Nil means DefaultDenyRead; an empty non-nil slice denies nothing. Each must be
	// absolute or start with "~/", and none may lie inside a writable root or contain one.
	DenyRead []string
	// BestEffort runs the command with what this machine can enforce when it cannot enforce all
	// of the policy, instead of refusing the call; every result then says what was not enforced.
	BestEffort bool
}

// Enabled reports whether s confines the command (read-only or workspace-write).
func (s Sandbox) Enabled() bool { return s.Mode == SandboxReadOnly || s.Mode == SandboxWorkspaceWrite }

// DenyPaths returns s.DenyRead, or DefaultDenyRead when s.DenyRead is nil.
func (s Sandbox) DenyPaths() []string {
	if s.DenyRead == nil {
		return append([]string(nil), DefaultDenyRead...)
	}
	return s.DenyRead
}

// Validate reports the problems of s that need no file system to see, each naming its field
// ("bash: Sandbox.Mode "strict" is not one of off, read-only, workspace-write"): an unknown mode
// or network mode, an empty, relative or unclean path, and a deny path that lies inside a
// writable root or contains one, compared lexically. The zero Mode is accepted. Whether the paths
// exist, and what they are once symbolic links are resolved, is the backend's to check.
func (s Sandbox) Validate() error {
	var errs []error
	switch s.Mode {
	case "", SandboxOff, SandboxReadOnly, SandboxWorkspaceWrite:
	default:
		errs = append(errs, fmt.Errorf("bash: Sandbox.Mode %q is not one of off, read-only, workspace-write", s.Mode))
	}
	switch s.Network {
	case "", NetworkOff, NetworkOn:
	default:
		errs = append(errs, fmt.Errorf("bash: Sandbox.Network %q is not one of off, on", s.Network))
	}
	for i, p := range s.WritableRoots {
		if err := checkSandboxPath(p, false); err != nil {
			errs = append(errs, fmt.Errorf("bash: Sandbox.WritableRoots[%d] %q %v", i, p, err))
		}
	}
	for i, p := range s.DenyRead {
		if err := checkSandboxPath(p, true); err != nil {
			errs = append(errs, fmt.Errorf("bash: Sandbox.DenyRead[%d] %q %v", i, p, err))
			continue
		}
		for _, root := range s.WritableRoots {
			if overlaps(p, root) {
				errs = append(errs, fmt.Errorf("bash: Sandbox.DenyRead[%d] %q overlaps writable root %q: a path cannot be both writable and unreadable", i, p, root))
			}
		}
	}
	return errors.Join(errs...)
}

func checkSandboxPath(p string, home bool) error {
	rest := p
	if home && strings.HasPrefix(p, "~/") {
		rest = "/" + p[2:]
	}
	switch {
	case p == "":
		return errors.New("is empty")
	case !path.IsAbs(rest):
		if home {
			return errors.New(`is neither absolute nor under "~/"`)
		}
		return errors.New("is not absolute")
	case path.Clean(rest) != rest:
		return fmt.Errorf("is not clean (want %q)", path.Clean(rest))
	}
	return nil
}

// overlaps reports whether the clean slash-separated paths a and b are the same or one lies inside
// the other.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, strings.TrimSuffix(b, "/")+"/") ||
		strings.HasPrefix(b, strings.TrimSuffix(a, "/")+"/")
}

// String describes s in one line for a model or a log: "workspace-write, network off" and, when
// there are any, the extra writable roots and the denied paths.
func (s Sandbox) String() string {
	if !s.Enabled() {
		return "off"
	}
	net := s.Network
	if net == "" {
		net = NetworkOff
	}
	out := string(s.Mode) + ", network " + string(net)
	if s.Mode == SandboxWorkspaceWrite && len(s.WritableRoots) > 0 {
		out += "; also writable: " + strings.Join(s.WritableRoots, ", ")
	}
	if deny := s.DenyPaths(); len(deny) > 0 {
		out += "; unreadable: " + strings.Join(deny, ", ")
	}
	if s.BestEffort {
		out += "; best effort"
	}
	return out
}

// ErrSandboxUnavailable is matched (with errors.Is) by the error a backend returns when it cannot
// enforce the sandbox a call asks for. The message is "sandbox unavailable: <what is missing>".
var ErrSandboxUnavailable = errors.New("sandbox unavailable")

// SandboxReport says how a sandboxed run was confined. A [RunResult] of an unsandboxed run has
// none.
type SandboxReport struct {
	// Policy is the policy in force, resolved: DenyRead is the effective list, with "~/" expanded
	// where the backend knows the home directory, and WritableRoots lists every writable root,
	// the workspace and the private temporary directory included.
	Policy Sandbox
	// Unenforced lists, for a best-effort policy, what this machine could not enforce ("signal
	// scoping (Landlock ABI 6)"); it is empty when everything was.
	Unenforced []string
	// Denial is set when the command failed and the sandbox may be why: what was denied when
	// the backend could tell ("write outside the workspace denied: /etc/hosts"), or otherwise a
	// line naming the policy in force.
	Denial string
}

// SandboxDescriber is implemented by an executor that can state the sandbox policy it applies to
// a request that names none; a tool uses it to tell the model.
type SandboxDescriber interface {
	// SandboxPolicy returns the executor's configured policy.
	SandboxPolicy() Sandbox
}
