package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	p := Policy{Writable: []string{"/w", "/tmp/dsh-tmp-1"}, DenyRead: []string{"/home/u/.ssh"}}
	const policy = "workspace-write, network off"
	for _, tc := range []struct {
		name, stderr string
		readOnly     bool
		network      bool
		want         string
	}{
		{"bash redirection", "bash: line 1: /etc/hosts: Permission denied\n", false, false, "write outside the workspace denied: /etc/hosts"},
		{"coreutils quotes", "touch: cannot touch '/etc/x': Permission denied\n", false, false, "write outside the workspace denied: /etc/x"},
		{"gnu curly quotes", "mkdir: cannot create directory ‘/opt/new’: Permission denied\n", false, false, "write outside the workspace denied: /opt/new"},
		{"read-only relative", "cp: cannot create regular file 'out.txt': Permission denied\n", true, false, "write denied (read-only sandbox): /w/out.txt"},
		{"bash relative", "bash: line 1: made: Permission denied\n", true, false, "write denied (read-only sandbox): /w/made"},
		{"denied read", "cat: /home/u/.ssh/id_ed25519: Permission denied\n", false, false, "read denied: /home/u/.ssh/id_ed25519"},
		{"writable path is not the cause", "rm: cannot remove '/w/x': Operation not permitted\n", false, false, "the command failed inside the sandbox (" + policy + "); a denied write, read or connection may be why"},
		{"socket", "bash: socket: Permission denied\nbash: line 1: /dev/tcp/127.0.0.1/80: Invalid argument\n", false, false, "network access denied (network off)"},
		{"resolver", "curl: (6) Could not resolve host: example.com\n", false, false, "network access denied (network off)"},
		{"network on", "curl: (6) Could not resolve host: example.com\n", false, true, "the command failed inside the sandbox (" + policy + "); a denied write, read or connection may be why"},
		{"device", "bash: /dev/null: Permission denied\n", false, false, "the command failed inside the sandbox (" + policy + "); a denied write, read or connection may be why"},
		{"nothing said", "boom\n", false, false, "the command failed inside the sandbox (" + policy + "); a denied write, read or connection may be why"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := p
			p.Network = tc.network
			if tc.readOnly {
				p.Writable = p.Writable[1:] // read-only: only the temporary directory
			}
			if got := Explain(p, tc.readOnly, "/w", tc.stderr, policy); got != tc.want {
				t.Errorf("Explain = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	got, err := Expand([]string{"~/.ssh", "/etc//x/", "~/a/../b"}, "/home/u")
	if err != nil || strings.Join(got, ",") != "/home/u/.ssh,/etc/x,/home/u/b" {
		t.Fatalf("Expand = %v, %v", got, err)
	}
	if _, err := Expand([]string{"~/.ssh"}, ""); err == nil || !strings.Contains(err.Error(), `"~/.ssh" names the home directory`) {
		t.Fatalf("Expand without a home = %v, want an error naming the path", err)
	}
}

func TestResolveRefusesBadPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "real"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    Policy
		want string
	}{
		{"missing root", Policy{Writable: []string{filepath.Join(dir, "gone")}}, "no such file or directory"},
		{"file root", Policy{Writable: []string{file}}, "not a directory"},
		{"relative root", Policy{Writable: []string{"rel"}}, `writable root 0 "rel" is not absolute`},
		{"relative deny", Policy{DenyRead: []string{".ssh"}}, `deny path 0 ".ssh" is not absolute`},
		{"deny inside a root reached through a link", Policy{Writable: []string{link}, DenyRead: []string{filepath.Join(dir, "real", "secret")}}, "overlaps writable root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := resolve(tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("resolve = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestFailClosed(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		abi  int
		want []string
	}{
		{5, []string{"signal and abstract Unix socket scoping (Landlock ABI 6)"}},
		{-1, []string{"file-system rules (read, write, execute) (Landlock ABI 1)", "truncation outside the writable roots (Landlock ABI 3)", "signal and abstract Unix socket scoping (Landlock ABI 6)"}},
	} {
		sb := New(Options{ABI: tc.abi})
		_, err := sb.Prepare(Policy{Writable: []string{dir}})
		var ue *UnavailableError
		if !errors.As(err, &ue) || !errors.Is(err, ErrUnavailable) || !strings.HasPrefix(err.Error(), "sandbox unavailable: ") {
			t.Fatalf("ABI %d: Prepare = %v, want an UnavailableError", tc.abi, err)
		}
		if Probe().Platform == "" && strings.Join(ue.Missing, "|") != strings.Join(tc.want, "|") {
			t.Errorf("ABI %d: missing %q, want %q", tc.abi, ue.Missing, tc.want)
		}
		p, err := sb.Prepare(Policy{Writable: []string{dir}, BestEffort: true})
		if err != nil || strings.Join(p.Unenforced(), "|") != strings.Join(ue.Missing, "|") {
			t.Errorf("ABI %d best effort: Prepare = %v, %v; want what is missing listed as unenforced", tc.abi, p, err)
		}
		sb.Close()
		sb.Close() // a second Close is harmless
	}
}

// TestShellPolicy checks what each mode of a shell may write and how its deny paths and
// variables come out.
func TestShellPolicy(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	base := Shell{Tmp: "/tmp/p", Workspace: "/w", Roots: []string{"/extra"}, Deny: []string{"~/.ssh", "/srv/x/"}, Network: true}
	cases := []struct {
		name     string
		write    bool
		writable []string
	}{
		{"read-only: the private tmp only, roots ignored", false, []string{"/tmp/p"}},
		{"workspace-write: tmp, workspace, roots", true, []string{"/tmp/p", "/w", "/extra"}},
	}
	for _, c := range cases {
		sh := base
		sh.WorkspaceWrite = c.write
		p, err := sh.Policy()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Writable, c.writable) || !slices.Equal(p.DenyRead, []string{"/home/u/.ssh", "/srv/x"}) || !p.Network || p.BestEffort {
			t.Errorf("%s: %+v", c.name, p)
		}
	}
	if env := base.Env(); env["TMPDIR"] != "/tmp/p" || env["XDG_CACHE_HOME"] != "/tmp/p/.cache" || len(env) != 2 {
		t.Errorf("Env() = %v", env)
	}
	t.Setenv("HOME", "")
	if _, err := base.Policy(); err == nil {
		t.Error("a ~/ deny path with no home directory was accepted")
	}
}

// TestExplainDenyReadThroughLink covers a deny path given as a symbolic link: a denied read is
// reported as a read whether the message names the path through the link or the real one.
func TestExplainDenyReadThroughLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real-secrets")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "secrets")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	p := Policy{Writable: []string{"/w"}, DenyRead: []string{link}}
	for _, path := range []string{filepath.Join(link, "key"), filepath.Join(real, "key"), link} {
		got := Explain(p, false, "/w", "cat: "+path+": Permission denied\n", "workspace-write, network off")
		if want := "read denied: " + path; got != want {
			t.Errorf("Explain for %s = %q; want %q", path, got, want)
		}
	}
}
