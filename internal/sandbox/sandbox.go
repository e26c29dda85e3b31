// Package sandbox confines a command before it starts, with no helper binary and no root: on
// Linux, Landlock file-system rules (everything readable but the denied paths, writable only under
// the writable roots), Landlock scoping (no signal, ptrace or abstract Unix socket reaching a
// process outside the sandbox), a seccomp filter (no socket that could reach another process when
// the network is off, no Unix socket at all, no io_uring), no_new_privs and no capabilities.
//
// The restrictions are applied to a locked OS thread of the calling process, which then starts the
// command and is discarded: the child inherits them, the rest of the process never has them. The
// design, its costs and the alternatives that were rejected are in
// docs/rfc/implemented/2026-12-03-sandboxed-execution.md. Elsewhere than Linux every confined
// start fails with an error matching ErrUnavailable.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// ErrUnavailable is matched by the error Prepare returns when this machine cannot enforce a
// policy that is not best effort, an *UnavailableError.
var ErrUnavailable = errors.New("sandbox unavailable")

// UnavailableError reports what this machine lacks for a policy. Its message is
// "sandbox unavailable: <what is missing>".
type UnavailableError struct {
	// Missing lists each missing feature as "<name> (<needs>)".
	Missing []string
}

// Error returns "sandbox unavailable: " and the missing features, separated by "; ".
func (e *UnavailableError) Error() string {
	return "sandbox unavailable: " + strings.Join(e.Missing, "; ")
}

// Is reports whether target is ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Policy is what one confined command may do. Paths are absolute; Prepare resolves symbolic links.
type Policy struct {
	// Writable are the directories the command may write under (create, remove, rename, write,
	// truncate): the workspace and the private temporary directory in workspace-write mode, the
	// temporary directory alone in read-only mode. Each must exist.
	Writable []string
	// DenyRead are files and directories the command may not read, list the contents of or
	// execute from. They need not exist: one created later is denied too. None may overlap a
	// writable root.
	DenyRead []string
	// Network lets the command open Internet sockets. Unix sockets stay closed either way.
	Network bool
	// BestEffort confines the command with what this machine offers when it lacks something the
	// policy needs, instead of refusing.
	BestEffort bool
}

// devices are the device files every shell writes to; they stay writable whatever the mode.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// Feature is one mechanism the sandbox uses.
type Feature struct {
	// Name says what the mechanism enforces, for a person.
	Name string
	// Needs says what the kernel must offer ("Landlock ABI 6").
	Needs string
	// Available reports whether this machine offers it.
	Available bool
	// Required reports whether a sandboxed call fails without it (unless best effort).
	Required bool
}

// Support is what this machine offers the sandbox.
type Support struct {
	// LandlockABI is the Landlock ABI version of the kernel, 0 without Landlock.
	LandlockABI int
	// Seccomp reports that seccomp filters can be installed.
	Seccomp bool
	// ThreadPidfd reports pidfds for single threads (Linux 6.9), which tell when the thread that
	// started a command is gone; without them its end is polled for.
	ThreadPidfd bool
	// Platform is empty where the sandbox is implemented, and otherwise says why not ("not
	// Linux").
	Platform string
}

// Features lists every mechanism the sandbox uses and whether s offers it, in the order
// sandbox-check prints them.
func (s Support) Features() []Feature {
	abi := func(v int) bool { return s.Platform == "" && s.LandlockABI >= v }
	return []Feature{
		{Name: "file-system rules (read, write, execute)", Needs: "Landlock ABI 1", Available: abi(1), Required: true},
		{Name: "rename and link across directories", Needs: "Landlock ABI 2", Available: abi(2)},
		{Name: "truncation outside the writable roots", Needs: "Landlock ABI 3", Available: abi(3), Required: true},
		{Name: "TCP bind and connect rules", Needs: "Landlock ABI 4", Available: abi(4)},
		{Name: "device ioctl rules", Needs: "Landlock ABI 5", Available: abi(5)},
		{Name: "signal and abstract Unix socket scoping", Needs: "Landlock ABI 6", Available: abi(6), Required: true},
		{Name: "socket filter (network off, no Unix sockets, no io_uring)", Needs: "seccomp filters on amd64 or arm64", Available: s.Platform == "" && s.Seccomp, Required: true},
		{Name: "end of the starting thread seen at once", Needs: "pidfds for threads (Linux 6.9)", Available: s.Platform == "" && s.ThreadPidfd},
	}
}

// Missing returns the required features s lacks, each as "<name> (<needs>)", or nil.
func (s Support) Missing() []string {
	var out []string
	if s.Platform != "" {
		return []string{s.Platform}
	}
	for _, f := range s.Features() {
		if f.Required && !f.Available {
			out = append(out, f.Name+" ("+f.Needs+")")
		}
	}
	return out
}

// Options configure a Sandbox.
type Options struct {
	// ABI, when positive, is used instead of the kernel's Landlock ABI version, and -1 acts as if
	// the kernel had no Landlock: a test hook that acts out an older kernel. A value above the
	// kernel's makes every confined start fail.
	ABI int
}

// Shell is the sandbox of a shell in the terms of the bash tools' policy (bash.Sandbox): one
// home for what each mode may write, for the local executor and the persistent shell alike.
type Shell struct {
	Tmp            string   // the shell's private temporary directory: always writable
	Workspace      string   // writable with WorkspaceWrite
	WorkspaceWrite bool     // false: read-only, only Tmp is writable
	Roots          []string // more writable roots, with WorkspaceWrite
	Deny           []string // deny paths; a leading "~/" is the user's home directory
	Network        bool
	BestEffort     bool
}

// Policy returns the rules of sh: Tmp writable, and with WorkspaceWrite the Workspace and Roots
// too; Deny expanded against the user's home directory. It returns Expand's error.
func (sh Shell) Policy() (Policy, error) {
	writable := []string{sh.Tmp}
	if sh.WorkspaceWrite {
		writable = append(append(writable, sh.Workspace), sh.Roots...)
	}
	home, _ := os.UserHomeDir()
	deny, err := Expand(sh.Deny, home)
	if err != nil {
		return Policy{}, err
	}
	return Policy{Writable: writable, DenyRead: deny, Network: sh.Network, BestEffort: sh.BestEffort}, nil
}

// Env returns the variables a shell confined by sh is given: TMPDIR, and XDG_CACHE_HOME under it
// (the real caches are not writable, and one that later unconfined builds trust, such as Go's
// build cache, must not be writable from inside).
func (sh Shell) Env() map[string]string {
	return map[string]string{"TMPDIR": sh.Tmp, "XDG_CACHE_HOME": filepath.Join(sh.Tmp, ".cache")}
}

// Expand returns paths with a leading "~/" replaced by home and each path cleaned. It returns an
// error for a "~/" path when home is empty.
func Expand(paths []string, home string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home == "" {
				return nil, fmt.Errorf("sandbox: %q names the home directory, which is unknown", p)
			}
			p = filepath.Join(home, rest)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// resolved is a policy with its paths checked and their symbolic links resolved.
type resolved struct {
	writable []string
	deny     []string
}

// resolve checks p's paths and resolves their links: a writable root must be an existing
// directory; a deny path is resolved as far as it exists; the two sets must not overlap.
func resolve(p Policy) (resolved, error) {
	var r resolved
	for i, w := range p.Writable {
		if !filepath.IsAbs(w) {
			return r, fmt.Errorf("sandbox: writable root %d %q is not absolute", i, w)
		}
		real, err := filepath.EvalSymlinks(w)
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
				err = errors.New("not a directory")
			}
		}
		if err != nil {
			return r, fmt.Errorf("sandbox: writable root %q: %w", w, err)
		}
		r.writable = append(r.writable, real)
	}
	for i, d := range p.DenyRead {
		if !filepath.IsAbs(d) {
			return r, fmt.Errorf("sandbox: deny path %d %q is not absolute", i, d)
		}
		real := resolveExisting(filepath.Clean(d))
		for _, w := range r.writable {
			if overlaps(real, w) {
				return r, fmt.Errorf("sandbox: deny path %q overlaps writable root %q: a path cannot be both writable and unreadable", d, w)
			}
		}
		r.deny = append(r.deny, real)
	}
	slices.Sort(r.writable)
	slices.Sort(r.deny)
	r.writable, r.deny = slices.Compact(r.writable), slices.Compact(r.deny)
	return r, nil
}

// resolveExisting resolves the symbolic links of the longest prefix of p that exists and keeps the
// rest as written.
func resolveExisting(p string) string {
	var rest []string
	for cur := p; ; cur = filepath.Dir(cur) {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		if cur == "/" || cur == "." {
			return p
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
	}
}

// overlaps reports whether clean paths a and b are equal or one lies inside the other.
func overlaps(a, b string) bool { return a == b || within(a, b) || within(b, a) }

// within reports whether clean path p lies strictly inside dir.
func within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// Sandbox confines commands for one executor: it probes the machine once and keeps the compiled
// rule sets of the policies it has seen, so that a call costs a lookup. Close releases them. Its
// methods are safe for concurrent use.
type Sandbox struct {
	support Support
	rules   ruleCache
	close   sync.Once
}

// New probes this machine and returns a Sandbox; opts may act out an older kernel.
func New(opts Options) *Sandbox {
	s := &Sandbox{support: Probe()}
	switch {
	case opts.ABI > 0:
		s.support.LandlockABI = opts.ABI
	case opts.ABI < 0:
		s.support.LandlockABI = 0
	}
	s.rules.abi = s.support.LandlockABI
	threads.acquire()
	return s
}

// Support returns what the sandbox found on this machine (after the Options' test hook).
func (s *Sandbox) Support() Support { return s.support }

// Prepared is a policy ready to confine commands started with Start.
type Prepared struct {
	sb         *Sandbox
	policy     Policy
	rules      *ruleset // nil when Landlock is unavailable (best effort)
	unenforced []string
}

// Unenforced lists what this machine could not enforce of a best-effort policy, each as
// "<name> (<needs>)"; it is empty when everything is enforced.
func (p *Prepared) Unenforced() []string { return p.unenforced }

// Prepare checks policy against this machine and compiles its rules (or finds them compiled). It
// returns an error naming the path for a writable root that does not exist or is not a directory
// and for a deny path that overlaps a writable root, and one matching ErrUnavailable when the
// machine lacks something the policy needs and the policy is not best effort.
func (s *Sandbox) Prepare(policy Policy) (*Prepared, error) {
	missing := s.support.Missing()
	if len(missing) > 0 && !policy.BestEffort {
		return nil, &UnavailableError{Missing: missing}
	}
	r, err := resolve(policy)
	if err != nil {
		return nil, err
	}
	p := &Prepared{sb: s, policy: policy, unenforced: missing}
	if s.support.Platform == "" && s.support.LandlockABI > 0 {
		if p.rules, err = s.rules.get(r, policy.Network); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Close releases the compiled rule sets and, with the last Sandbox of the process, the thread kept
// ready for the next start. Commands already started keep their confinement. A second call does
// nothing.
func (s *Sandbox) Close() {
	s.close.Do(func() {
		s.rules.close()
		threads.release()
	})
}
