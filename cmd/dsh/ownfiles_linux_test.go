package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTTPOwnFilesDenied: with the sandbox on (network on, the setting of the attack), a command
// cannot read dsh's token file or policy file, so it cannot open a session of its own and
// approve its own asks; -deny-read none does not lift it.
func TestHTTPOwnFilesDenied(t *testing.T) {
	tokens := writeTokens(t)
	policy := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(`{"default": "allow"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDshHTTP(t, "-token-file", tokens, "-policy", policy, "-sandbox", "workspace-write", "-network", "on", "-deny-read", "none")
	fx := &httpFixture{t: t, url: d.url}
	c := fx.connect(aliceToken, nil)
	for _, file := range []string{tokens, policy} {
		got := c.bash("cat " + file)
		if strings.Contains(got, aliceToken) || strings.Contains(got, `"default"`) || !strings.Contains(got, "[sandbox: read denied: "+file+"]") {
			t.Errorf("cat %s in the sandbox: %q", file, got)
		}
	}
	if got := c.bash("echo readable"); !strings.Contains(got, "readable") {
		t.Errorf("an ordinary command: %q", got)
	}
}
