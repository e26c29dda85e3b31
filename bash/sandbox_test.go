package bash

import (
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
