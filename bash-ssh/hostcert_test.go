package bashssh

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash-ssh/internal/sshdtest"
)

// caKey makes a certificate authority key pair with ssh-keygen and returns the private key file
// and the public key line.
func caKey(t *testing.T, name string) (string, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", file).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(file + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return file, strings.TrimSpace(string(pub))
}

// hostCert signs the public host key in hostPub with the CA in ca for principals, valid for
// validity (ssh-keygen -V), and returns the certificate file.
func hostCert(t *testing.T, ca, hostPub, principals, validity string) string {
	t.Helper()
	dir := t.TempDir()
	pub := filepath.Join(dir, "host.pub")
	b, err := os.ReadFile(hostPub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ssh-keygen", "-q", "-s", ca, "-I", "bashssh-test", "-h", "-n", principals, "-V", validity, pub).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -s: %v\n%s", err, out)
	}
	return filepath.Join(dir, "host-cert.pub")
}

// TestHostCertificates: known_hosts @cert-authority lines as OpenSSH reads them (item 21). A host
// presenting a certificate signed by a trusted CA is accepted (the client asks for certificates
// first); a certificate of another CA, an expired one, one for another host name and a revoked
// CA or host key are refused; the CA's own key presented as a plain host key is refused.
func TestHostCertificates(t *testing.T) {
	s := sshdStart(t, sshdtest.Options{})
	ca, caPub := caKey(t, "ca")
	_, otherPub := caKey(t, "other-ca")
	hostLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.HostKey)))
	good := hostCert(t, ca, s.HostKeyFile+".pub", "127.0.0.1", "-5m:+1h")
	tests := []struct {
		name  string
		cert  string
		lines []string
		want  []string // nil: accepted
	}{
		{"trusted CA", good, []string{"@cert-authority * " + caPub}, nil},
		{"trusted CA, host pattern with port", good, []string{"@cert-authority [127.0.0.1]:* " + caPub}, nil},
		{"other CA", good, []string{"@cert-authority * " + otherPub}, []string{"no @cert-authority line", "trusts"}},
		{"expired", hostCert(t, ca, s.HostKeyFile+".pub", "127.0.0.1", "20000101:20000102"), []string{"@cert-authority * " + caPub}, []string{"certificate is refused"}},
		{"another host", hostCert(t, ca, s.HostKeyFile+".pub", "build.example.com", "-5m:+1h"), []string{"@cert-authority * " + caPub}, []string{"certificate is refused", "127.0.0.1"}},
		{"revoked CA", good, []string{"@cert-authority * " + caPub, "@revoked * " + caPub}, []string{"@revoked"}},
		{"revoked host key", good, []string{"@cert-authority * " + caPub, "@revoked * " + hostLine}, []string{"@revoked"}},
		{"CA key as plain host key", "", []string{"@cert-authority * " + hostLine}, []string{"certificate authority", "never as a host key"}},
		{"plain key, star pattern, port not 22", "", []string{"* " + hostLine}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.SetHostCertificate(tt.cert); err != nil {
				t.Fatal(err)
			}
			cfg := serverConfig(s)
			cfg.KnownHostsFiles = []string{writeKnownHosts(t, tt.lines...)}
			ex := newExecutor(t, cfg)
			res, err := runReq(ex, bash.Request{Command: "echo in"})
			if tt.want == nil {
				if err != nil || res.Stdout.Text() != "in\n" {
					t.Fatalf("Run = %q, %v; want the host accepted", res.Stdout.Text(), err)
				}
				return
			}
			var hk *HostKeyError
			if !errors.As(err, &hk) {
				t.Fatalf("Run returned %v, want a *HostKeyError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestDefaultKnownHosts: an empty (not nil) KnownHostsFiles means ~/.ssh/known_hosts, and the
// error for an unknown host names that file.
func TestDefaultKnownHosts(t *testing.T) {
	s := sharedServer(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	kh := filepath.Join(home, ".ssh", "known_hosts")
	if err := os.MkdirAll(filepath.Dir(kh), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kh, []byte("# empty\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := serverConfig(s)
	cfg.KnownHostsFiles = []string{}
	ex := newExecutor(t, cfg)
	_, err := runReq(ex, bash.Request{Command: "true"})
	if err == nil || !strings.Contains(err.Error(), "is not in known_hosts ("+kh+")") {
		t.Errorf("Run returned %v, want an unknown-host error naming %s", err, kh)
	}
}

// TestMatchHost: known_hosts host patterns as OpenSSH matches them.
func TestMatchHost(t *testing.T) {
	tests := []struct {
		patterns string
		name     string
		want     bool
	}{
		{"*", "[10.0.0.1]:2222", true},
		{"*", "build", true},
		{"build", "[build]:2222", false},
		{"[build]:2222", "[build]:2222", true},
		{"[build]:*", "[build]:2022", true},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "[a.example.com]:2222", false},
		{"b?ild,other", "build", true},
		{"*,!build", "build", false},
		{"*,!build", "other", true},
		{"BUILD", "build", true},
		{knownhosts.HashHostname("[build]:2222"), "[build]:2222", true},
		{knownhosts.HashHostname("build"), "[build]:2222", false},
		{"|1|bad", "build", false},
	}
	for _, tt := range tests {
		if got := matchHost(strings.Split(tt.patterns, ","), tt.name); got != tt.want {
			t.Errorf("matchHost(%q, %q) = %v, want %v", tt.patterns, tt.name, got, tt.want)
		}
	}
}
