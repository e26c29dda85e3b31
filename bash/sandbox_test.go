package bash

import (
	"slices"
	"strings"
	"testing"
)

func TestSandboxValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		sb   Sandbox
		want string // a part of the error, "" for none
	}{
		{"zero", Sandbox{}, ""},
		{"workspace-write", Sandbox{Mode: SandboxWorkspaceWrite, Network: NetworkOn, WritableRoots: []string{"/srv/data"}, DenyRead: []string{"~/.ssh", "/etc/secret"}}, ""},
		{"unknown mode", Sandbox{Mode: "strict"}, `Sandbox.Mode "strict" is not one of off, read-only, workspace-write`},
		{"unknown network", Sandbox{Mode: SandboxReadOnly, Network: "maybe"}, `Sandbox.Network "maybe"`},
		{"relative root", Sandbox{WritableRoots: []string{"build"}}, `Sandbox.WritableRoots[0] "build" is not absolute`},
		{"home root", Sandbox{WritableRoots: []string{"~/src"}}, `Sandbox.WritableRoots[0] "~/src" is not absolute`},
		{"unclean root", Sandbox{WritableRoots: []string{"/srv/../etc"}}, `is not clean (want "/etc")`},
		{"empty deny", Sandbox{DenyRead: []string{""}}, `Sandbox.DenyRead[0] "" is empty`},
		{"relative deny", Sandbox{DenyRead: []string{".ssh"}}, `Sandbox.DenyRead[0] ".ssh" is neither absolute nor under "~/"`},
		{"deny inside root", Sandbox{WritableRoots: []string{"/w"}, DenyRead: []string{"/w/secret"}}, `Sandbox.DenyRead[0] "/w/secret" overlaps writable root "/w"`},
		{"root inside deny", Sandbox{WritableRoots: []string{"/w/sub"}, DenyRead: []string{"/w"}}, `overlaps writable root "/w/sub"`},
		{"sibling is fine", Sandbox{WritableRoots: []string{"/w"}, DenyRead: []string{"/w2"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.sb.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bash: Sandbox.")):
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestSandboxDenyPathsAndString(t *testing.T) {
	if got := (Sandbox{}).DenyPaths(); strings.Join(got, ",") != strings.Join(DefaultDenyRead, ",") {
		t.Errorf("nil DenyRead gives %v, want the defaults", got)
	}
	if got := (Sandbox{DenyRead: []string{}}).DenyPaths(); len(got) != 0 {
		t.Errorf("empty DenyRead gives %v, want none", got)
	}
	for _, tc := range []struct {
		sb   Sandbox
		want string
	}{
		{Sandbox{}, "off"},
		{Sandbox{Mode: SandboxOff, Network: NetworkOn}, "off"},
		{Sandbox{Mode: SandboxReadOnly, DenyRead: []string{}}, "read-only, network off"},
		{Sandbox{Mode: SandboxWorkspaceWrite, Network: NetworkOn, WritableRoots: []string{"/a"}, DenyRead: []string{"/s"}, BestEffort: true},
			"workspace-write, network on; also writable: /a; unreadable: /s; best effort"},
	} {
		if got := tc.sb.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.sb, got, tc.want)
		}
	}
}

func TestOverlaps(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"/a", "/a", true}, {"/a/b", "/a", true}, {"/a", "/a/b", true}, {"/ab", "/a", false}, {"/", "/x", true}, {"/x", "/y", false},
	} {
		if got := overlaps(tc.a, tc.b); got != tc.want {
			t.Errorf("overlaps(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestSandboxReportMarkers checks the lines a result ends with for a report: what was not
// enforced first, then the denial, none for a nil or empty report.
func TestSandboxReportMarkers(t *testing.T) {
	cases := []struct {
		name string
		r    *SandboxReport
		want []string
	}{
		{"nil", nil, nil},
		{"nothing to say", &SandboxReport{}, nil},
		{"denial", &SandboxReport{Denial: "write outside the workspace denied: /etc/hosts"}, []string{"[sandbox: write outside the workspace denied: /etc/hosts]"}},
		{"both", &SandboxReport{Unenforced: []string{"signal scoping (Landlock ABI 6)", "TCP rules"}, Denial: "network access denied (network off)"},
			[]string{"[sandbox: not enforced: signal scoping (Landlock ABI 6); TCP rules]", "[sandbox: network access denied (network off)]"}},
	}
	for _, c := range cases {
		if got := c.r.Markers(); !slices.Equal(got, c.want) {
			t.Errorf("%s: Markers() = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSandboxConfines checks the phrase tool descriptions use for each mode and network setting.
func TestSandboxConfines(t *testing.T) {
	for _, c := range []struct {
		sb   Sandbox
		want string
	}{
		{Sandbox{Mode: SandboxWorkspaceWrite}, "can write only in the workspace and in $TMPDIR, cannot use the network or Unix sockets, and cannot signal or trace processes outside it"},
		{Sandbox{Mode: SandboxReadOnly, Network: NetworkOn}, "can write only in $TMPDIR (the workspace is read-only), may use the network but not Unix sockets, and cannot signal or trace processes outside it"},
	} {
		if got := c.sb.Confines(); got != c.want {
			t.Errorf("%v: Confines() = %q, want %q", c.sb, got, c.want)
		}
	}
}
