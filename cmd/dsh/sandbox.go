package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/sandbox"
)

// sandboxFlags are -sandbox, -network, -deny-read and -sandbox-best-effort, which every command
// that builds the tools takes.
type sandboxFlags struct {
	mode       string
	network    string
	deny       denyList
	bestEffort bool
}

// denyList is the repeatable -deny-read: each value is added to the default list, and "none"
// empties the list first.
type denyList struct {
	paths []string
	set   bool
}

func (d *denyList) String() string { return strings.Join(d.paths, ",") }

func (d *denyList) Set(v string) error {
	if !d.set {
		d.paths, d.set = append([]string(nil), bash.DefaultDenyRead...), true
	}
	if v == "none" {
		d.paths = []string{}
		return nil
	}
	if !filepath.IsAbs(v) && !strings.HasPrefix(v, "~/") {
		return fmt.Errorf("%q is neither an absolute path nor under ~/", v)
	}
	d.paths = append(d.paths, filepath.Clean(v))
	return nil
}

func (s *sandboxFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.mode, "sandbox", "off", "confine every command: off, read-only or workspace-write (see dsh sandbox-check)")
	fs.StringVar(&s.network, "network", "off", "with -sandbox: on or off")
	fs.Var(&s.deny, "deny-read", "with -sandbox: a path commands may not read, added to ~/.ssh ~/.aws ~/.gnupg ~/.kube ~/.docker ~/.netrc ~/.config/gcloud (repeatable; none drops them)")
	fs.BoolVar(&s.bestEffort, "sandbox-best-effort", false, "with -sandbox: run with what this machine can enforce and say in every result what was not")
}

// policy returns the policy the flags describe, or an error naming the bad flag.
func (s *sandboxFlags) policy() (bash.Sandbox, error) {
	sb := bash.Sandbox{Mode: bash.SandboxMode(s.mode), Network: bash.NetworkMode(s.network), BestEffort: s.bestEffort}
	if s.deny.set {
		sb.DenyRead = s.deny.paths
	}
	switch {
	case sb.Mode != bash.SandboxOff && !sb.Enabled():
		return sb, fmt.Errorf("-sandbox %q is not one of off, read-only, workspace-write", s.mode)
	case sb.Network != bash.NetworkOff && sb.Network != bash.NetworkOn:
		return sb, fmt.Errorf("-network %q is not one of on, off", s.network)
	case !sb.Enabled() && (s.network != "off" || s.deny.set || s.bestEffort):
		return sb, fmt.Errorf("-network, -deny-read and -sandbox-best-effort need -sandbox read-only or workspace-write")
	}
	return sb, nil
}

// denyOwnFiles returns sb with dsh's own configuration and state added to what a confined
// command may not read, whatever -deny-read says: its configuration directory (where the default
// token file lives), the token file, the policy file and the TLS certificate and key. A command
// that could read a token could open a session of its own and approve its own asks. Without a
// sandbox, sb is returned as it is.
func (f *flags) denyOwnFiles(sb bash.Sandbox) bash.Sandbox {
	if !sb.Enabled() {
		return sb
	}
	deny := sb.DenyPaths()
	own := []string{f.policyFile, f.http.TokenFile, f.http.TLSCert, f.http.TLSKey}
	if dir, err := os.UserConfigDir(); err == nil {
		own = append(own, filepath.Join(dir, "dsh"))
	}
	for _, p := range own {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil && !slices.Contains(deny, abs) {
			deny = append(deny, abs)
		}
	}
	sb.DenyRead = deny
	return sb
}

// runSandboxCheck is dsh sandbox-check: it prints what this machine offers the sandbox and exits
// 0 when a sandboxed call can run, 1 when something it needs is missing.
func runSandboxCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dsh sandbox-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dsh sandbox-check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	return printSupport(sandbox.Probe(), stdout)
}

// printSupport prints s, one feature a line, and the verdict; it returns the exit code.
func printSupport(s sandbox.Support, stdout io.Writer) int {
	if s.Platform != "" {
		fmt.Fprintf(stdout, "sandbox unavailable: %s\n", s.Platform)
		return exitTool
	}
	fmt.Fprintf(stdout, "Landlock ABI: %d\n", s.LandlockABI)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, f := range s.Features() {
		mark, need := "no", "optional"
		if f.Available {
			mark = "yes"
		}
		if f.Required {
			need = "required"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", mark, f.Name, f.Needs, need)
	}
	tw.Flush()
	if missing := s.Missing(); len(missing) > 0 {
		fmt.Fprintf(stdout, "sandbox unavailable: %s\n", strings.Join(missing, "; "))
		return exitTool
	}
	fmt.Fprintln(stdout, "sandbox available: read-only and workspace-write, network off or on")
	return exitOK
}
