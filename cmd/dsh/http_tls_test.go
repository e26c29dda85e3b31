package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key (PEM) and returns their
// paths and a pool that trusts the certificate.
func selfSigned(t testing.TB) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "dsh test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(parsed)
	return cert, key, pool
}

// TestHTTPTLS: with -tls-cert and -tls-key a real dsh serves a non-loopback address over TLS:
// the SDK's client that trusts the certificate calls a tool; plain HTTP gets no MCP answer.
func TestHTTPTLS(t *testing.T) {
	cert, key, pool := selfSigned(t)
	d := startDshHTTPEnv(t, nil, "-http", "0.0.0.0:0", "-tls-cert", cert, "-tls-key", key)
	_, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(d.url, "https://"), mcpPath))
	if err != nil || !strings.HasPrefix(d.url, "https://") {
		t.Fatalf("served at %q (%v), want an https URL", d.url, err)
	}
	url := "https://127.0.0.1:" + port + mcpPath
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dsh-test", Version: "v0"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerOver{tr, aliceToken}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cs: cs}
	if got := c.bash("echo over tls"); got != "over tls\n" {
		t.Errorf("call over TLS: %q", got)
	}
	_ = cs.Close()
	resp, err := http.Post("http://127.0.0.1:"+port+mcpPath, "application/json", strings.NewReader(initBody))
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS port: %s, want 400", resp.Status)
		}
	}
}

// bearerOver adds a bearer token to the requests of an underlying transport.
type bearerOver struct {
	rt    http.RoundTripper
	token string
}

func (b bearerOver) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}
