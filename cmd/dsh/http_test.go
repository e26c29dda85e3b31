package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/bash"
	bashpolicy "github.com/dsh-go/dsh/bash-policy"
)

// Tokens of the test token file: two principals.
const (
	aliceToken = "alice-token-0123456789abcdefghijklmnop"
	bobToken   = "bob-token-0123456789abcdefghijklmnopqrs"
)

// httpFixture is dsh mcp -http in process: serveHTTP on a loopback listener, as runHTTP runs
// it, stopped (as by SIGTERM) when the test ends.
type httpFixture struct {
	t     testing.TB
	url   string
	front *front
	stop  context.CancelFunc // the terminating signal
	exit  chan int           // serveHTTP's exit code
}

// writeTokens writes the test token file and returns its path.
func writeTokens(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("alice "+aliceToken+"\nbob "+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startHTTP serves the tools of cfg over HTTP with the settings hc (zero fields: the flags'
// defaults) and the test tokens.
func startHTTP(t testing.TB, cfg config, hc httpConfig) *httpFixture {
	t.Helper()
	return startHTTPOn(t, cfg, hc, nil)
}

// startHTTPOn is startHTTP with the listener passed through wrap (when not nil).
func startHTTPOn(t testing.TB, cfg config, hc httpConfig, wrap func(net.Listener) net.Listener) *httpFixture {
	t.Helper()
	cfg = testConfig(t, cfg)
	hc.Addr = "127.0.0.1:0"
	if hc.IdleTimeout == 0 {
		hc.IdleTimeout = defaultIdleTimeout
	}
	if hc.Drain == 0 {
		hc.Drain = defaultDrain
	}
	if hc.MaxSessions == 0 {
		hc.MaxSessions = defaultMaxSessions
	}
	if hc.MaxBody == 0 {
		hc.MaxBody = defaultMaxBody
	}
	if hc.MaxCalls == 0 {
		hc.MaxCalls = defaultMaxCalls
	}
	hc.TokenFile = writeTokens(t)
	ts, err := loadTokens(hc.TokenFile, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", hc.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		ln = wrap(ln)
	}
	ctx, stop := context.WithCancel(context.Background())
	fx := &httpFixture{t: t, url: "http://" + ln.Addr().String() + mcpPath, stop: stop, exit: make(chan int, 1)}
	fx.front = newFront(srv, ts, hc, cfg.Logger)
	go func() { fx.exit <- serveHTTP(ctx, fx.front, ln, os.Stderr) }()
	t.Cleanup(func() {
		stop()
		select {
		case code := <-fx.exit:
			fx.exit <- code
		case <-time.After(30 * time.Second):
			t.Error("serveHTTP did not return within 30s of the stop")
		}
	})
	return fx
}

// wait returns serveHTTP's exit code once it has returned.
func (fx *httpFixture) wait() int {
	fx.t.Helper()
	select {
	case code := <-fx.exit:
		fx.exit <- code
		return code
	case <-time.After(30 * time.Second):
		fx.t.Fatal("serveHTTP did not return within 30s")
		return -1
	}
}

// bearer is an http.RoundTripper that adds a bearer token (and headers) to every request.
type bearer struct {
	token  string
	header http.Header
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	for k, v := range b.header {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a session with the SDK's streamable HTTP client, with token and opts; it is
// closed (DELETE) when the test ends.
func (fx *httpFixture) connect(token string, opts *mcp.ClientOptions) *client {
	fx.t.Helper()
	cs, err := fx.dial(token, opts)
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.t.Cleanup(func() { _ = cs.Close() })
	return &client{t: fx.t, cs: cs}
}

// dial opens a session with the SDK's streamable HTTP client.
func (fx *httpFixture) dial(token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: fx.url, HTTPClient: &http.Client{Transport: bearer{token: token}}, MaxRetries: -1}
	return mcp.NewClient(&mcp.Implementation{Name: "dsh-test", Version: "v0"}, opts).Connect(ctx, tr, nil)
}

// httpRaw is a session spoken to in plain HTTP requests, for what the SDK's client never
// sends.
type httpRaw struct {
	fx    *httpFixture
	token string
	id    string
}

// post sends body (a JSON-RPC message) with the session's id (if any) and token and returns the
// response; the caller closes its body.
func (fx *httpFixture) post(token, session, body string, header http.Header) *http.Response {
	fx.t.Helper()
	req, err := http.NewRequest(http.MethodPost, fx.url, strings.NewReader(body))
	if err != nil {
		fx.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fx.t.Fatal(err)
	}
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawConnect opens a session with plain requests: initialize and initialized.
func (fx *httpFixture) rawConnect(token string) *httpRaw {
	fx.t.Helper()
	resp := fx.post(token, "", initBody, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		fx.t.Fatalf("initialize: %s %q", resp.Status, body)
	}
	rs := &httpRaw{fx: fx, token: token, id: id}
	resp = rs.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		fx.t.Fatalf("initialized: %s", resp.Status)
	}
	fx.t.Cleanup(func() { rs.delete() })
	return rs
}

func (rs *httpRaw) post(body string) *http.Response {
	rs.fx.t.Helper()
	return rs.fx.post(rs.token, rs.id, body, nil)
}

// delete ends the session and returns the status.
func (rs *httpRaw) delete() int {
	req, _ := http.NewRequest(http.MethodDelete, rs.fx.url, nil)
	req.Header.Set("Authorization", "Bearer "+rs.token)
	req.Header.Set("Mcp-Session-Id", rs.id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// stream posts body on the session without waiting for the response headers (the SDK sends
// them with the first event) and sends the data of each server-sent event of the response on
// the channel, closed at the end of the stream.
func (rs *httpRaw) stream(body string) <-chan string {
	out := make(chan string, 16)
	req, err := http.NewRequest(http.MethodPost, rs.fx.url, strings.NewReader(body))
	if err != nil {
		rs.fx.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+rs.token)
	req.Header.Set("Mcp-Session-Id", rs.id)
	go func() {
		defer close(out)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			out <- fmt.Sprintf("HTTP %s: %s", resp.Status, b)
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- data
			}
		}
	}()
	return out
}

// callBody is a tools/call of bash with command, request id id.
func callBody(id int, command string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
		"name": "bash", "arguments": map[string]any{"command": command, "description": "Test command"},
	}})
	return string(b)
}

// TestHTTPSessionsIsolated: two sessions of one principal in one server are two owners: a task
// of one is refused in the other, and each gets its own completion notices.
func TestHTTPSessionsIsolated(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{})
	a, b := fx.connect(aliceToken, nil), fx.connect(aliceToken, nil)
	id := a.startBackground("echo done; exit 3")
	for _, tool := range []string{"bash_output", "bash_kill"} {
		res := b.call(tool, taskArgs(id))
		if !res.IsError || text(res) != "Error: task "+id+" belongs to another session" {
			t.Errorf("%s from another session: isError %v %q", tool, res.IsError, text(res))
		}
	}
	task, _ := fx.front.srv.tools.ex.Get(bash.TaskID(id))
	<-task.Done()
	if got := texts(b.call("bash", bashArgs("true", nil))); len(got) != 1 {
		t.Errorf("the other session got blocks %q, want only its result", got)
	}
	got := texts(a.call("bash", bashArgs("echo next", nil)))
	if len(got) != 2 || !strings.HasPrefix(got[0], "background bash task "+id+" finished [status: completed, exit code: 3]") || got[1] != "next\n" {
		t.Errorf("the owner got %q, want the notice first", got)
	}
	if got := text(a.call("bash_output", taskArgs(id))); got != "done\n\n[status: completed, exit code: 3]" {
		t.Errorf("bash_output: %q", got)
	}
}

// TestHTTPPersistentPerSession: with -persistent each HTTP session has its own shell.
func TestHTTPPersistentPerSession(t *testing.T) {
	fx := startHTTP(t, config{Persistent: true}, httpConfig{})
	a, b := fx.connect(aliceToken, nil), fx.connect(bobToken, nil)
	a.bash("export MARK=a-side; cd /")
	if got := a.bash(`echo "$MARK $PWD"`); !strings.HasPrefix(got, "a-side /") {
		t.Errorf("session a lost its state: %q", got)
	}
	if got := b.bash(`echo "[$MARK] $PWD"`); strings.Contains(got, "a-side") || strings.HasPrefix(got, "[] /\n") {
		t.Errorf("session b sees a's shell: %q", got)
	}
}

// TestHTTPProgress checks progress notifications over HTTP: on the call's own stream, with the
// same rules as over stdio.
func TestHTTPProgress(t *testing.T) {
	t.Setenv("DSH_TEST_PROGRESS_TOKEN", progressSecret)
	fx := startHTTP(t, config{}, httpConfig{})
	rec := &progressRecorder{}
	c := fx.connect(aliceToken, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler})
	checkProgress(t, c.cs, rec)
}

// TestHTTPDeleteKillsWhatTheSessionOwns: DELETE cancels the session's
// foreground call and kills its background task and, with -persistent, its shell; when it is
// answered they are gone, and the session id is refused from then on. The other session goes on.
func TestHTTPDeleteKillsWhatTheSessionOwns(t *testing.T) {
	for _, persistent := range []bool{false, true} {
		t.Run(fmt.Sprintf("persistent=%v", persistent), func(t *testing.T) {
			fx := startHTTP(t, config{Persistent: persistent}, httpConfig{})
			a, b := fx.connect(aliceToken, nil), fx.connect(aliceToken, nil)
			dir := t.TempDir()
			bg, fg := filepath.Join(dir, "bg"), filepath.Join(dir, "fg")
			if persistent {
				a.bash("sleep 300 & echo $! > " + bg)
			} else {
				a.startBackground("echo $$ > " + bg + "; exec sleep 300")
			}
			calls := make(chan error, 1)
			go func() {
				_, err := a.callErr(context.Background(), "bash", bashArgs("echo $$ > "+fg+"; exec sleep 300", nil))
				calls <- err
			}()
			bgPID, fgPID := readPID(t, bg), readPID(t, fg)
			id := a.cs.ID()
			// A DELETE of its own: the SDK client's Close waits for its calls to end first.
			if code := (&httpRaw{fx: fx, token: aliceToken, id: id}).delete(); code != http.StatusNoContent {
				t.Fatalf("DELETE: %d, want 204", code)
			}
			for name, pid := range map[string]int{"background": bgPID, "foreground": fgPID} {
				if alive(pid) {
					t.Errorf("%s command (pid %d) alive after the DELETE was answered", name, pid)
				}
			}
			<-calls
			resp := fx.post(aliceToken, id, callBody(9, "true"), nil)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("a call on the deleted session: %s, want 404", resp.Status)
			}
			if got := b.bash("echo still"); strings.TrimSpace(got) != "still" {
				t.Errorf("the other session: %q", got)
			}
		})
	}
}

// TestHTTPIdleTimeout: a session without a request for the idle timeout is ended and what it
// owns killed; a call still running keeps its session alive.
func TestHTTPIdleTimeout(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{IdleTimeout: 700 * time.Millisecond})
	a := fx.connect(aliceToken, nil)
	dir := t.TempDir()
	bg := filepath.Join(dir, "bg")
	a.startBackground("echo $$ > " + bg + "; exec sleep 300")
	pid := readPID(t, bg)
	// A call longer than the timeout: the session is busy, not idle.
	if got := a.bash("sleep 1.2; echo busy"); got != "busy\n" {
		t.Fatalf("long call: %q", got)
	}
	if !alive(pid) {
		t.Fatal("the session was ended while a call ran")
	}
	if !waitGone(pid) {
		t.Fatalf("background task (pid %d) alive 10 s after the session went idle", pid)
	}
	if _, err := a.callErr(context.Background(), "bash", bashArgs("true", nil)); err == nil {
		t.Error("a call on the expired session succeeded")
	}
}

// TestHTTPRefused: what the front refuses, by raw requests.
func TestHTTPRefused(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{})
	alice := fx.rawConnect(aliceToken)
	unauthorized := fmt.Sprintf("Unauthorized: send the header \"Authorization: Bearer TOKEN\" with a token from dsh's token file (%s)\n", fx.front.cfg.TokenFile)
	tests := []struct {
		name     string
		token    string
		session  string
		header   http.Header
		path     string
		want     int
		wantBody string
	}{
		{name: "no token", want: http.StatusUnauthorized, wantBody: unauthorized},
		{name: "wrong token", token: aliceToken + "x", want: http.StatusUnauthorized, wantBody: unauthorized},
		{name: "basic auth", header: http.Header{"Authorization": {"Basic YWxpY2U6eA=="}}, want: http.StatusUnauthorized, wantBody: unauthorized},
		{name: "other principal's session", token: bobToken, session: alice.id, want: http.StatusNotFound, wantBody: "session not found\n"},
		{name: "unknown session", token: aliceToken, session: "NOSUCHSESSION", want: http.StatusNotFound, wantBody: "session not found\n"},
		{name: "foreign origin", token: aliceToken, header: http.Header{"Origin": {"http://evil.example"}}, want: http.StatusForbidden, wantBody: "Forbidden: Origin not allowed\n"},
		{name: "foreign origin without token", header: http.Header{"Origin": {"http://evil.example"}}, want: http.StatusForbidden, wantBody: "Forbidden: Origin not allowed\n"},
		{name: "null origin", token: aliceToken, header: http.Header{"Origin": {"null"}}, want: http.StatusForbidden, wantBody: "Forbidden: Origin not allowed\n"},
		{name: "other path", token: aliceToken, path: "/other", want: http.StatusNotFound, wantBody: "404 page not found\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := fx.url
			if tc.path != "" {
				url = strings.TrimSuffix(fx.url, mcpPath) + tc.path
			}
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(callBody(5, "echo hi")))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.session != "" {
				req.Header.Set("Mcp-Session-Id", tc.session)
			}
			for k, v := range tc.header {
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || string(body) != tc.wantBody {
				t.Errorf("%s %q; want %d %q", resp.Status, body, tc.want, tc.wantBody)
			}
		})
	}
	// Allowed origins: the server's own and loopback.
	for _, origin := range []string{"http://" + strings.TrimSuffix(strings.TrimPrefix(fx.url, "http://"), mcpPath), "http://localhost:3000", "http://127.0.0.1"} {
		resp := fx.post(aliceToken, alice.id, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, http.Header{"Origin": {origin}})
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("Origin %s: %s, want 200", origin, resp.Status)
		}
	}
	// The owner still gets through.
	var got []string
	for data := range alice.stream(callBody(6, "echo hi")) {
		got = append(got, data)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"text":"hi\n"`) {
		t.Errorf("the owner's call: %q", got)
	}
}

// TestHTTPLimits: past the maximum body size and calls per session, a clear error; the server
// and the session go on (TestHTTPSessionLimits has the limits of sessions).
func TestHTTPLimits(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{MaxBody: 2000, MaxCalls: 1})
	a := fx.connect(aliceToken, nil)
	resp := fx.post(aliceToken, a.cs.ID(), callBody(3, strings.Repeat("x", 2100)), nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || string(body) != `{"jsonrpc":"2.0","id":null,"error":{"code":-32003,"message":"request body exceeds the limit of 2000 bytes"}}` {
		t.Errorf("body over the limit: %s %s", resp.Status, body)
	}
	// One call at a time per session: the second gets a JSON-RPC error while the first runs.
	dir := t.TempDir()
	first := make(chan string, 1)
	go func() {
		res, err := a.callErr(context.Background(), "bash", bashArgs("echo $$ > "+filepath.Join(dir, "pid")+"; sleep 1; echo first", nil))
		if err != nil {
			first <- err.Error()
			return
		}
		first <- text(res)
	}()
	readPID(t, filepath.Join(dir, "pid"))
	_, err := a.callErr(context.Background(), "bash", bashArgs("echo second", nil))
	if err == nil || !strings.Contains(err.Error(), "too many calls in flight in this session (limit 1)") {
		t.Errorf("second call at once: %v", err)
	}
	if got := <-first; got != "first\n" {
		t.Errorf("first call: %q", got)
	}
	if got := a.bash("echo third"); got != "third\n" {
		t.Errorf("a call after the first ended: %q", got)
	}
}

// TestHTTPCancel: a request the client cancels gets no response (its stream ends without one)
// and its command is killed; the session goes on. The SDK's client too: its call returns
// context.Canceled and the command is gone.
func TestHTTPCancel(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{})
	rs := fx.rawConnect(aliceToken)
	pidFile := filepath.Join(t.TempDir(), "pid")
	stream := rs.stream(callBody(41, "echo $$ > "+pidFile+"; exec sleep 300"))
	pid := readPID(t, pidFile)
	resp := rs.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"test"}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %s", resp.Status)
	}
	var got []string
	for data := range stream { // ends when the server closes the call's stream
		got = append(got, data)
	}
	if len(got) != 0 {
		t.Errorf("the cancelled request got %q; want no response", got)
	}
	if !waitGone(pid) {
		t.Errorf("the cancelled command (pid %d) is alive", pid)
	}
	var after []string
	for data := range rs.stream(callBody(42, "echo next")) {
		after = append(after, data)
	}
	if len(after) != 1 || !strings.Contains(after[0], `"id":42`) || !strings.Contains(after[0], `next\n`) {
		t.Errorf("the next call: %q", after)
	}

	// The SDK client's own cancellation.
	checkCancelStops(t, fx.connect(aliceToken, nil))
}

// TestHTTPDrain: on the terminating signal, new sessions and new calls get 503 at once while a
// call in flight finishes and gets its result; then serveHTTP returns 0 with nothing left.
func TestHTTPDrain(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{})
	a := fx.rawConnect(aliceToken)
	dir := t.TempDir()
	bg := filepath.Join(dir, "bg")
	c := fx.connect(bobToken, nil)
	c.startBackground("echo $$ > " + bg + "; exec sleep 300")
	bgPID := readPID(t, bg)
	gate := filepath.Join(dir, "gate")
	stream := a.stream(callBody(51, "echo $$ > "+filepath.Join(dir, "fg")+"; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo finished"))
	readPID(t, filepath.Join(dir, "fg"))
	fx.stop() // SIGTERM
	// Draining: a new session and a new call are refused at once.
	eventually(10*time.Second, func() bool {
		resp := fx.post(aliceToken, "", initBody, nil)
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	resp := fx.post(aliceToken, "", initBody, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "shutting down") {
		t.Errorf("new session while draining: %s %s", resp.Status, body)
	}
	resp = a.post(callBody(52, "echo new"))
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || string(body) != `{"jsonrpc":"2.0","id":52,"error":{"code":-32002,"message":"dsh is shutting down: no new calls"}}` {
		t.Errorf("new call while draining: %s %s", resp.Status, body)
	}
	// The call in flight finishes and is answered.
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for data := range stream {
		got = append(got, data)
	}
	if len(got) != 1 || !strings.Contains(got[0], `finished\n`) {
		t.Errorf("the call in flight: %q", got)
	}
	if code := fx.wait(); code != exitOK {
		t.Errorf("exit %d, want 0", code)
	}
	if alive(bgPID) {
		t.Errorf("background task (pid %d) alive after serveHTTP returned", bgPID)
	}
}

// TestHTTPDrainTimeout: a call still running when the drain time is up is killed, and
// serveHTTP returns 0.
func TestHTTPDrainTimeout(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{Drain: 500 * time.Millisecond})
	a := fx.rawConnect(aliceToken)
	fg := filepath.Join(t.TempDir(), "fg")
	stream := a.stream(callBody(61, "echo $$ > "+fg+"; exec sleep 300"))
	pid := readPID(t, fg)
	start := time.Now()
	fx.stop()
	if code := fx.wait(); code != exitOK {
		t.Errorf("exit %d, want 0", code)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("serveHTTP took %v to return with a 500ms drain", d)
	}
	if alive(pid) {
		t.Errorf("the call's command (pid %d) outlived serveHTTP", pid)
	}
	for range stream {
	}
}

// TestHTTPBadInput: malformed messages and requests get a clear HTTP error; a client that drops
// its connection mid-call does not cancel the call (its command runs to the end); the session
// and the others go on, and the leak check after the tests finds nothing left.
func TestHTTPBadInput(t *testing.T) {
	fx := startHTTP(t, config{}, httpConfig{})
	rs := fx.rawConnect(aliceToken)
	other := fx.connect(bobToken, nil)
	tests := []struct {
		name     string
		body     string
		ctype    string
		want     int
		wantBody string
	}{
		{name: "not JSON", body: `{"jsonrpc":`, want: http.StatusBadRequest, wantBody: "malformed payload"},
		{name: "empty body", body: ``, want: http.StatusBadRequest, wantBody: "POST requires a non-empty body"},
		{name: "batch", body: `[` + callBody(1, "true") + `]`, want: http.StatusBadRequest, wantBody: "batches are not supported"},
		{name: "wrong content type", body: callBody(2, "true"), ctype: "text/plain", want: http.StatusUnsupportedMediaType, wantBody: "Content-Type must be 'application/json'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Mcp-Protocol-Version": {"2025-06-18"}}
			if tc.ctype != "" {
				h.Set("Content-Type", tc.ctype)
			}
			resp := fx.post(aliceToken, rs.id, tc.body, h)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("%s %q; want %d with %q", resp.Status, body, tc.want, tc.wantBody)
			}
		})
	}

	// A client that drops the connection of a call: the call is not cancelled.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fx.url, strings.NewReader(callBody(20, "echo $$ > "+filepath.Join(dir, "pid")+"; sleep 0.5; echo ran > "+filepath.Join(dir, "ran"))))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	req.Header.Set("Mcp-Session-Id", rs.id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	pid := readPID(t, filepath.Join(dir, "pid"))
	cancel()
	<-done
	if !waitGone(pid) {
		t.Fatalf("the dropped call's command (pid %d) never ended", pid)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ran")); err != nil || string(b) != "ran\n" {
		t.Errorf("the dropped call was cut short: %q %v", b, err)
	}

	if got := other.bash("echo still"); got != "still\n" {
		t.Errorf("another session after: %q", got)
	}
}

// TestHTTPSlowClient: a client that sends a call and never reads the response (with a small
// receive buffer, so that the result, over 100 KB, cannot all be sent) holds up no other
// session, and its write times out, so that its request ends and the session can go idle and
// be ended, its background task with it, though the client never closes its connection.
func TestHTTPSlowClient(t *testing.T) {
	// The kernel would buffer megabytes for a client that does not read: the server's send
	// buffers are made small, so that a result of 100 KB is enough to block.
	fx := startHTTPOn(t, config{}, httpConfig{WriteTimeout: 300 * time.Millisecond, IdleTimeout: time.Second}, func(l net.Listener) net.Listener { return smallSendBuffers{l} })
	rs := fx.rawConnect(aliceToken)
	// Other sessions are opened when needed: with a 1 s idle timeout, one kept would expire.
	unaffected := func(when string) {
		t.Helper()
		var got []string
		for data := range fx.rawConnect(bobToken).stream(callBody(9, "echo other")) {
			got = append(got, data)
		}
		if len(got) != 1 || !strings.Contains(got[0], `other\n`) {
			t.Errorf("another session %s: %q", when, got)
		}
	}
	dir := t.TempDir()
	bg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "bash", "arguments": map[string]any{"command": "echo $$ > " + filepath.Join(dir, "bg") + "; exec sleep 300", "description": "Wait", "run_in_background": true},
	}})
	for range rs.stream(string(bg)) {
	}
	bgPID := readPID(t, filepath.Join(dir, "bg"))
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(fx.url, "http://"), mcpPath))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := callBody(2, "head -c 200000 /dev/zero | tr '\\0' x; head -c 200000 /dev/zero | tr '\\0' y >&2; echo $$ > "+filepath.Join(dir, "slow"))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", mcpPath, aliceToken, rs.id, len(body), body)
	readPID(t, filepath.Join(dir, "slow"))
	unaffected("while one client does not read")
	if !waitGone(bgPID) {
		t.Errorf("the session of the client that does not read was never ended: its task (pid %d) is alive", bgPID)
	}
	unaffected("after")
}

// smallSendBuffers is a listener whose connections have a send buffer of 4 KiB.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestHTTPPolicyAsks: an ask of the policy goes to the user of the session that made the call,
// over HTTP as an elicitation on that session (the SDK's ServerSession.Elicit: HTTP serves the
// protocol up to 2025-11-25); the command runs on approval and not on a decline, and the other
// session's user is never asked.
func TestHTTPPolicyAsks(t *testing.T) {
	p, err := bashpolicy.Parse([]byte(e2ePolicy))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fx := startHTTP(t, config{Policy: p, Workdir: dir}, httpConfig{})
	var asked, otherAsked atomic.Int32
	var answer atomic.Value
	answer.Store(&mcp.ElicitResult{Action: "decline"})
	a := fx.connect(aliceToken, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return answer.Load().(*mcp.ElicitResult), nil
	}})
	fx.connect(bobToken, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		otherAsked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}, nil
	}})
	res := a.call("bash", bashArgs("touch declined.txt", nil))
	if !res.IsError || !strings.HasPrefix(text(res), "Error: a person declined this call") || exists(filepath.Join(dir, "declined.txt")) {
		t.Errorf("declined: %q", text(res))
	}
	answer.Store(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}})
	if got := a.bash("touch once.txt && echo made"); got != "made\n" || !exists(filepath.Join(dir, "once.txt")) {
		t.Errorf("approved: %q", got)
	}
	if asked.Load() != 2 || otherAsked.Load() != 0 {
		t.Errorf("the caller's user was asked %d times (want 2), the other's %d (want 0)", asked.Load(), otherAsked.Load())
	}
}
