package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadTokens(t *testing.T) {
	long := strings.Repeat("a", minTokenLen)
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    []string // principals
		wantErr string
	}{
		{name: "named and unnamed", content: "# comment\n\nalice " + long + "1\n" + long + "2\n\t" + long + "3  \n", mode: 0o600, want: []string{"alice", "token-2", "token-3"}},
		{name: "read-only for the owner", content: long, mode: 0o400, want: []string{"token-1"}},
		{name: "group readable", content: long, mode: 0o640, wantErr: "mode 0640 lets other users read or write it"},
		{name: "world writable", content: long, mode: 0o602, wantErr: "mode 0602"},
		{name: "short token", content: "bob short\n", mode: 0o600, wantErr: "line 1: the token is 5 bytes; it must be at least 32"},
		{name: "three fields", content: "a b c\n", mode: 0o600, wantErr: "line 1: want TOKEN or NAME TOKEN, got 3 fields"},
		{name: "same token twice", content: "a " + long + "\nb " + long + "\n", mode: 0o600, wantErr: "line 2: the same token twice"},
		{name: "same name twice", content: "a " + long + "1\na " + long + "2\n", mode: 0o600, wantErr: `line 2: the name "a" twice`},
		{name: "empty", content: "# nothing\n", mode: 0o600, wantErr: "no token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			ts, err := loadTokens(path, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v; want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(ts.principals, ",") != strings.Join(tc.want, ",") {
				t.Errorf("principals %q; want %q", ts.principals, tc.want)
			}
		})
	}
}

func TestLoadTokensRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := loadTokens(dir, nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as the token file: %v", err)
	}
}

// TestTokenFileCreated: a missing token file is created, mode 0600 in a 0700 directory, with
// one token of at least minTokenLen characters printed to stderr, which then authenticates;
// the second load prints nothing.
func TestTokenFileCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "dsh", "tokens")
	var stderr bytes.Buffer
	ts, err := loadTokens(path, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v mode %v", err, fi.Mode())
	}
	if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("token directory: %v mode %v", err, di.Mode())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	token := lines[len(lines)-1]
	if len(lines) != 2 || !strings.Contains(lines[0], "created "+path) || len(token) < minTokenLen {
		t.Fatalf("stderr %q; want the notice and the token", stderr.String())
	}
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if p, ok := ts.principal(req); !ok || p != "default" {
		t.Errorf("the printed token: principal %q %v; want default", p, ok)
	}
	stderr.Reset()
	if _, err := loadTokens(path, &stderr); err != nil || stderr.Len() != 0 {
		t.Errorf("second load: %v, stderr %q", err, stderr.String())
	}
}

func TestPrincipal(t *testing.T) {
	ts, err := parseTokens("t", strings.NewReader("alice "+aliceToken+"\nbob "+bobToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for header, want := range map[string]string{
		"Bearer " + aliceToken:          "alice",
		"bearer " + bobToken:            "bob",
		"Bearer " + aliceToken + "x":    "",
		"Bearer " + aliceToken[:31]:     "",
		aliceToken:                      "",
		"Basic " + aliceToken:           "",
		"":                              "",
		"Bearer ":                       "",
		"Bearer " + bobToken + " extra": "",
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		got, ok := ts.principal(req)
		if got != want || ok != (want != "") {
			t.Errorf("Authorization %q: %q %v; want %q", header, got, ok, want)
		}
	}
}

// TestLoadTokensRefusesAnotherOwner: a token file of another user is refused, even to root.
func TestLoadTokensRefusesAnotherOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give the file to another user") // the check itself runs as any user
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(aliceToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := loadTokens(path, nil); err == nil || !strings.Contains(err.Error(), "owned by uid 65534, not by this user (uid 0)") {
		t.Errorf("another user's token file: %v", err)
	}
}
