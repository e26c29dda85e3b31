package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newSession posts an initialize without a session id as token and returns the status, the body
// and the new session's id.
func (fx *httpFixture) newSession(token string) (int, string, string) {
	fx.t.Helper()
	resp := fx.post(token, "", initBody, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body), resp.Header.Get("Mcp-Session-Id")
}

// pingStatus pings the session id as token and returns the HTTP status.
func (fx *httpFixture) pingStatus(token, id string) int {
	fx.t.Helper()
	resp := fx.post(token, id, `{"jsonrpc":"2.0","id":99,"method":"ping"}`, nil)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestHTTPSessionLimits: a principal at its limit of sessions gets its longest-idle session
// that runs nothing reclaimed for the new one, and a 503 saying what to do when every one of
// its sessions runs something; at the server's limit a principal reclaims only its own
// sessions, so another principal's clients never lose theirs.
func TestHTTPSessionLimits(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{MaxSessions: 3, MaxPrincipalSessions: 2})
	dir := t.TempDir()
	a1, a2 := fx.connect(aliceToken, nil), fx.connect(aliceToken, nil)
	a1.bash("true") // a2 is now the longest idle
	if code, body, _ := fx.newSession(aliceToken); code != http.StatusOK {
		t.Fatalf("alice's third session: %d %s", code, body)
	}
	if got := fx.pingStatus(aliceToken, a2.cs.ID()); got != http.StatusNotFound {
		t.Errorf("the longest-idle session after a reclaim: %d, want 404", got)
	}
	if got := fx.pingStatus(aliceToken, a1.cs.ID()); got != http.StatusOK {
		t.Errorf("the session used last after a reclaim: %d, want 200", got)
	}

	// a1 runs a background task and a3 a foreground call: neither can be reclaimed.
	a1.startBackground("echo $$ > " + filepath.Join(dir, "a1") + "; exec sleep 300")
	bgPID := readPID(t, filepath.Join(dir, "a1"))
	a3 := fx.connect(aliceToken, nil) // reclaims the raw session of the third initialize
	go func() {
		_, _ = a3.callErr(context.Background(), "bash", bashArgs("echo $$ > "+filepath.Join(dir, "a3")+"; exec sleep 300", nil))
	}()
	fgPID := readPID(t, filepath.Join(dir, "a3"))
	code, body, _ := fx.newSession(aliceToken)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `principal \"alice\" has 2 (the limit per principal), each running a call or a background task`) {
		t.Errorf("alice with every session busy: %d %s", code, body)
	}
	for name, pid := range map[string]int{"background task": bgPID, "foreground call": fgPID} {
		if !alive(pid) {
			t.Errorf("alice's %s (pid %d) was killed by a refused initialize", name, pid)
		}
	}

	// bob has one slot left of the server's three; then he reclaims his own idle session, and
	// with his only session busy he is refused without touching alice's.
	b1 := fx.connect(bobToken, nil)
	if code, body, _ := fx.newSession(bobToken); code != http.StatusOK {
		t.Fatalf("bob's second session at the server's limit: %d %s", code, body)
	}
	if got := fx.pingStatus(bobToken, b1.cs.ID()); got != http.StatusNotFound {
		t.Errorf("bob's idle session after his reclaim: %d, want 404", got)
	}
	b2 := fx.connect(bobToken, nil)
	b2.startBackground("exec sleep 300")
	code, body, _ = fx.newSession(bobToken)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `dsh has 3 (its limit), and none of principal \"bob\"'s 1 runs nothing`) {
		t.Errorf("bob at the server's limit with his session busy: %d %s", code, body)
	}
	for _, c := range []*client{a1, a3} {
		if got := fx.pingStatus(aliceToken, c.cs.ID()); got != http.StatusOK {
			t.Errorf("alice's session after bob's refusals: %d, want 200", got)
		}
	}
}

// TestHTTPSessionShare: without -max-principal-sessions each principal of the token file may
// hold an equal share of -max-sessions.
func TestHTTPSessionShare(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{MaxSessions: 5})
	if got := fx.front.cfg.MaxPrincipalSessions; got != 2 {
		t.Errorf("two principals share 5 sessions: %d each, want 2", got)
	}
}

// TestHTTPProtocolEdges: a 401 says what to send and where the tokens are; a message without a
// session id that is not an initialize is a 400; a batch is a 400 with or without a protocol
// version header, old or new, and as an initialize.
func TestHTTPProtocolEdges(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{})
	rs := fx.rawConnect(aliceToken)
	resp := fx.post("", "", initBody, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := fmt.Sprintf("Unauthorized: send the header \"Authorization: Bearer TOKEN\" with a token from dsh's token file (%s)\n", fx.front.cfg.TokenFile)
	if resp.StatusCode != http.StatusUnauthorized || string(body) != want || fx.front.cfg.TokenFile == "" {
		t.Errorf("no token: %s %q, want 401 %q", resp.Status, body, want)
	}
	batch := `[` + callBody(1, "true") + `]`
	tests := []struct {
		name, session, body, version string
		wantID                       string
		wantMessage                  string
	}{
		{name: "call without session", body: callBody(3, "true"), wantID: "3", wantMessage: "no Mcp-Session-Id header"},
		{name: "notification without session", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, wantID: "null", wantMessage: "no Mcp-Session-Id header"},
		{name: "ping without session", body: `{"jsonrpc":"2.0","id":"p","method":"ping"}`, wantID: `"p"`, wantMessage: "no Mcp-Session-Id header"},
		{name: "batch without version", session: rs.id, body: batch, wantID: "null", wantMessage: "batches are not supported"},
		{name: "batch with an old version", session: rs.id, body: batch, version: "2025-03-26", wantID: "null", wantMessage: "batches are not supported"},
		{name: "batch with a new version", session: rs.id, body: batch, version: "2025-11-25", wantID: "null", wantMessage: "batches are not supported"},
		{name: "batched initialize", body: "  [" + initBody + "]", wantID: "null", wantMessage: "batches are not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.version != "" {
				h.Set("Mcp-Protocol-Version", tc.version)
			}
			resp := fx.post(aliceToken, tc.session, tc.body, h)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			prefix := `{"jsonrpc":"2.0","id":` + tc.wantID + `,"error":{"code":-32600,"message":"invalid request: `
			if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(string(body), prefix) || !strings.Contains(string(body), tc.wantMessage) {
				t.Errorf("%s %s; want 400 starting %s with %q", resp.Status, body, prefix, tc.wantMessage)
			}
		})
	}
	if got := fx.pingStatus(aliceToken, rs.id); got != http.StatusOK {
		t.Errorf("the session after the refusals: %d", got)
	}
}

// rawRequest writes a request's head to a new connection to fx: a POST of the MCP path with a
// body of length bytes that it does not send, and the token when not empty.
func (fx *httpFixture) rawRequest(token string, length int) net.Conn {
	fx.t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(fx.url, "http://"), mcpPath)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.t.Cleanup(func() { c.Close() })
	head := "POST " + mcpPath + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " + fmt.Sprint(length) + "\r\n"
	if token != "" {
		head += "Authorization: Bearer " + token + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		fx.t.Fatal(err)
	}
	return c
}

// TestHTTPSlowBodies: a request without a token is refused before its body is read, and its
// connection closed; a body with a token that does not arrive in time is refused too; a flood of
// connections that send nothing leaves at most the cap of them open, and a call with a token
// still gets its answer.
func TestHTTPSlowBodies(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{BodyTimeout: 500 * time.Millisecond, MaxPending: 8})
	rs := fx.rawConnect(aliceToken)
	deadline := time.Now().Add(20 * time.Second)

	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{name: "no token, body never sent", want: http.StatusUnauthorized},
		{name: "token, body too slow", token: aliceToken, want: http.StatusRequestTimeout},
	} {
		c := fx.rawRequest(tc.token, 100)
		_ = c.SetReadDeadline(deadline)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: no response: %v", tc.name, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %s, want %d", tc.name, resp.Status, tc.want)
		}
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("%s: the connection stayed open after the refusal (read: %v)", tc.name, err)
		}
	}

	// Connections that never send a byte: the oldest are closed once there are more than 8.
	addr := strings.TrimSuffix(strings.TrimPrefix(fx.url, "http://"), mcpPath)
	var idle []net.Conn
	for range 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		idle = append(idle, c)
	}
	if !eventually(20*time.Second, func() bool { return fx.front.conns.pendingCount() <= 8 }) {
		t.Errorf("%d connections without a request pending, want at most 8", fx.front.conns.pendingCount())
	}
	closed := 0
	for _, c := range idle[:32] {
		_ = c.SetReadDeadline(deadline)
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed != 32 {
		t.Errorf("%d of the 32 oldest idle connections closed, want all", closed)
	}
	var got []string
	for data := range rs.stream(callBody(7, "echo through")) {
		got = append(got, data)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"text":"through\n"`) {
		t.Errorf("a call with a token during the flood: %q", got)
	}
}
