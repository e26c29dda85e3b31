package main

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// TestHTTPOwnCommandRefused: a command of dsh's that holds a valid token (as if it had found
// one in the workspace) and calls dsh's own HTTP endpoint is refused, so it cannot open a
// session of its own and approve its own asks; no session is made.
func TestHTTPOwnCommandRefused(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{})
	c := fx.connect(aliceToken, nil)
	port := fx.url[strings.LastIndex(fx.url, ":")+1 : len(fx.url)-len(mcpPath)]
	body := strings.ReplaceAll(initBody, `"`, `\"`)
	script := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%s
printf 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%%s' "%s" >&3
cat <&3`, port, aliceToken, len(initBody), body)
	got := c.bash(script)
	if !strings.HasPrefix(got, "HTTP/1.1 403 Forbidden") || !strings.Contains(got, "Forbidden: dsh does not serve the commands it runs") {
		t.Errorf("dsh's own command calling it with a token got:\n%s", got)
	}
	fx.front.mu.Lock()
	n := len(fx.front.sessions)
	fx.front.mu.Unlock()
	if n != 1 {
		t.Errorf("%d sessions after the refusal, want 1", n)
	}
	// The test's own client is not one of dsh's commands.
	if code, body, _ := fx.newSession(aliceToken); code != 200 {
		t.Errorf("a client that is not a command of dsh's: %d %s", code, body)
	}
}

func TestParseTCPLine(t *testing.T) {
	tests := []struct {
		line          string
		local, remote string
		inode         string
	}{
		{line: "   0: 0100007F:A0E5 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 123456 1 0000000000000000 20 4 30 10 -1",
			local: "127.0.0.1:41189", remote: "127.0.0.1:8080", inode: "123456"},
		{line: "   1: 00000000000000000000000001000000:B1B2 00000000000000000000000001000000:0050 01 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 20 4 30 10 -1",
			local: "[::1]:45490", remote: "[::1]:80", inode: "777"},
		{line: "   2: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 42 1",
			local: "127.0.0.1:8080", remote: "127.0.0.1:50000", inode: "42"},
		{line: "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"},
		{line: "   3: 0100007F:A0E5 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 0 1"},  // no inode: TIME_WAIT
		{line: "   4: 0100007F:A0E 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 9 1"},   // short port
		{line: "   5: 0100007:A0E5 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 9 1"},   // odd address
		{line: "   6: 0100007F:A0E5 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 9x 1"}, // bad inode
	}
	for _, tc := range tests {
		l, r, inode, ok := parseTCPLine(tc.line)
		if tc.inode == "" {
			if ok {
				t.Errorf("%q: read %v %v %s, want nothing", tc.line, l, r, inode)
			}
			continue
		}
		if !ok || l != netip.MustParseAddrPort(tc.local) || r != netip.MustParseAddrPort(tc.remote) || inode != tc.inode {
			t.Errorf("%q: %v %v %q %v, want %s %s %s", tc.line, l, r, inode, ok, tc.local, tc.remote, tc.inode)
		}
	}
}

// FuzzParseTCPLine: any line is read without a panic, and what is read prints back as it was.
func FuzzParseTCPLine(f *testing.F) {
	f.Add("   0: 0100007F:A0E5 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 123456 1")
	f.Add("   1: 00000000000000000000000001000000:B1B2 00000000000000000000000001000000:0050 01 0 0 0 0 0 7 1")
	f.Add("sl local_address")
	f.Fuzz(func(t *testing.T, line string) {
		l, r, inode, ok := parseTCPLine(line)
		if !ok {
			return
		}
		if !l.IsValid() || !r.IsValid() || inode == "" || strings.Trim(inode, "0123456789") != "" {
			t.Errorf("%q: read %v %v %q", line, l, r, inode)
		}
	})
}
