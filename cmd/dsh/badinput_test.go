package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// rawSession speaks newline-delimited JSON-RPC to the server byte by byte, the way a client
// written in any language does, through the same guard as `dsh mcp` on stdio.
type rawSession struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func connectLines(t *testing.T, srv *server, max int) *rawSession {
	t.Helper()
	sc, cc := socketPair(t)
	if _, err := srv.connect(t.Context(), lineTransport(sc, sc, max, 0, nil)); err != nil {
		t.Fatal(err)
	}
	return &rawSession{t: t, conn: cc, r: bufio.NewReaderSize(cc, 1<<20)}
}

// send writes line and a newline.
func (s *rawSession) send(line string) {
	s.t.Helper()
	_ = s.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(s.conn, line+"\n"); err != nil {
		s.t.Fatalf("send %.80q: %v", line, err)
	}
}

// response is a JSON-RPC response as it travels.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// recv reads the next message, which must be a response, within 10 s.
func (s *rawSession) recv() response {
	s.t.Helper()
	_ = s.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := s.r.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("recv: %v", err)
	}
	var r response
	if err := json.Unmarshal(line, &r); err != nil {
		s.t.Fatalf("recv %q: %v", line, err)
	}
	return r
}

// initialize runs the MCP handshake.
func (s *rawSession) initialize() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if r := s.recv(); r.Error != nil || string(r.ID) != "0" {
		s.t.Fatalf("initialize: %+v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// callTool sends tools/call with id, the tool name and the raw arguments, and returns the text
// and isError of the result.
func (s *rawSession) callTool(id int, name, args string) (string, bool) {
	s.t.Helper()
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args))
	r := s.recv()
	if r.Error != nil || string(r.ID) != fmt.Sprint(id) {
		s.t.Fatalf("tools/call %d: id %s, error %+v", id, r.ID, r.Error)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		s.t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String(), res.IsError
}

// TestBadInput sends what a broken or hostile client sends and checks each answer, then that
// the same session still serves a call: one bad message never ends a session.
func TestBadInput(t *testing.T) {
	srv := testServer(t, config{})
	const max = 1 << 20
	s := connectLines(t, srv, max)
	s.initialize()
	protocol := []struct {
		name, line string
		id         string // "null" or the echoed id
		code       int
		message    string // substring
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":1,"method"`, "null", jsonrpc.CodeParseError, "parse error: unexpected end of JSON input"},
		{"garbage", `hello`, "null", jsonrpc.CodeParseError, "parse error: invalid character 'h'"},
		{"wrong version", `{"jsonrpc":"1.0","id":2,"method":"tools/list"}`, "2", jsonrpc.CodeInvalidRequest, `invalid message version tag "1.0"`},
		{"no version", `{"id":"x","method":"tools/list"}`, `"x"`, jsonrpc.CodeInvalidRequest, "invalid request"},
		{"not an object", `42`, "null", jsonrpc.CodeInvalidRequest, "invalid request"},
		{"bad id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, "null", jsonrpc.CodeInvalidRequest, "invalid request"},
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`, "null", jsonrpc.CodeInvalidRequest, "batches are not supported"},
		{"too long", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bash","arguments":{"command":"` + strings.Repeat("x", max) + `"}}}`, "4", jsonrpc.CodeInvalidRequest, fmt.Sprintf("exceeds the limit of %d bytes", max)},
		{"unknown method", `{"jsonrpc":"2.0","id":5,"method":"tools/destroy"}`, "5", jsonrpc.CodeMethodNotFound, `"tools/destroy"`},
		{"unknown tool", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, "6", jsonrpc.CodeInvalidParams, `unknown tool "nope"`},
		{"params not an object", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":5}`, "7", jsonrpc.CodeInvalidParams, ""},
	}
	for i, tt := range protocol {
		t.Run(tt.name, func(t *testing.T) {
			s.t = t
			s.send(tt.line)
			r := s.recv()
			if string(r.ID) != tt.id || r.Error == nil || r.Error.Code != tt.code || !strings.Contains(r.Error.Message, tt.message) {
				t.Errorf("response id %s error %+v, want id %s code %d message containing %q", r.ID, r.Error, tt.id, tt.code, tt.message)
			}
			if got, isErr := s.callTool(100+i, "bash", bashArgs("echo ok", nil)); got != "ok\n" || isErr {
				t.Errorf("the session no longer serves: %q %v", got, isErr)
			}
		})
	}
	s.t = t

	tools := []struct {
		name, tool, args string
		want             string // substring of the error text
	}{
		{"wrong argument types", "bash", `{"command":true,"description":["x"],"run_in_background":"yes"}`, `Error: invalid arguments: "command" must be a string; "description" must be a string; "run_in_background" must be a boolean`},
		{"arguments not an object", "bash_output", `[1]`, `Error: invalid arguments: "arguments" must be an object`},
		{"huge argument", "bash", bashArgs(strings.Repeat("#", 512<<10), nil), "argument list too long"},
		{"NUL byte", "bash", bashArgs("echo a\x00b", nil), "Error: invalid command: contains a NUL byte at offset 6"},
	}
	for i, tt := range tools {
		t.Run(tt.name, func(t *testing.T) {
			s.t = t
			got, isErr := s.callTool(200+i, tt.tool, tt.args)
			if !isErr || !strings.HasPrefix(got, "Error: ") || !strings.Contains(got, tt.want) {
				t.Errorf("isError %v, text %.300q, want an error containing %q", isErr, got, tt.want)
			}
			if got, isErr := s.callTool(300+i, "bash", bashArgs("echo ok", nil)); got != "ok\n" || isErr {
				t.Errorf("the session no longer serves: %q %v", got, isErr)
			}
		})
	}
}

// TestBadSessionSparesOthers checks that a session whose client writes garbage and then
// vanishes leaves the other sessions serving.
func TestBadSessionSparesOthers(t *testing.T) {
	srv := testServer(t, config{})
	good := connect(t, srv)
	bad := connectLines(t, srv, maxLine)
	bad.send(`{{{{`)
	bad.recv()
	bad.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 300","description":"x"}}}`)
	if r := bad.recv(); r.Error == nil || !strings.Contains(r.Error.Message, "invalid during session initialization") {
		t.Errorf("call before initialize: %+v", r)
	}
	_ = bad.conn.Close()
	if got := good.bash("echo fine"); got != "fine\n" {
		t.Errorf("other session: %q", got)
	}
}

// TestGuardLines checks the guard's line handling in isolation: what passes through (trimmed,
// one per line), what is answered, and the end of input.
func TestGuardLines(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		pass    []string
		replies []string // error codes and ids, "code id"
	}{
		{"one message", `{"jsonrpc":"2.0","method":"m"}` + "\n", 100, []string{`{"jsonrpc":"2.0","method":"m"}`}, nil},
		{"no final newline", `{"jsonrpc":"2.0","method":"m"}`, 100, []string{`{"jsonrpc":"2.0","method":"m"}`}, nil},
		{"crlf and blanks", "\r\n  \n" + `{"jsonrpc":"2.0","method":"m"}` + "\r\n\n", 100, []string{`{"jsonrpc":"2.0","method":"m"}`}, nil},
		{"bad then good", "{\n" + `{"jsonrpc":"2.0","id":1,"method":"m"}` + "\n", 100, []string{`{"jsonrpc":"2.0","id":1,"method":"m"}`}, []string{"-32700 null"}},
		{"too long then good", strings.Repeat("x", 101) + "\n" + `{"jsonrpc":"2.0","method":"m"}` + "\n", 100, []string{`{"jsonrpc":"2.0","method":"m"}`}, []string{"-32600 null"}},
		{"exactly the limit", `{"jsonrpc":"2.0","method":"` + strings.Repeat("m", 100-29) + `"}` + "\n", 100, []string{`{"jsonrpc":"2.0","method":"` + strings.Repeat("m", 100-29) + `"}`}, nil},
		{"long line past the buffer", strings.Repeat("y", 200<<10) + "\n", 100, nil, []string{"-32600 null"}},
		{"bad last line", `{"jsonrpc":"2.0"}`, 100, nil, []string{"-32600 null"}},
		{"string id echoed", `{"jsonrpc":"1.0","id":"k","method":"m"}`, 100, nil, []string{`-32600 "k"`}},
		{"fractional id not echoed", `{"jsonrpc":"1.0","id":1.5,"method":"m"}`, 100, nil, []string{"-32600 null"}},
		{"fractional id of a request refused with it", `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, 100, nil, []string{"-32600 1.5"}},
		{"id past 2^53 refused with it", `{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}`, 100, nil, []string{"-32600 9007199254740993"}},
		{"23-digit id refused with it", `{"jsonrpc":"2.0","id":12345678901234567890123,"method":"m"}`, 100, nil, []string{"-32600 12345678901234567890123"}},
		{"2^53 passes", `{"jsonrpc":"2.0","id":9007199254740992,"method":"m"}`, 100, []string{`{"jsonrpc":"2.0","id":9007199254740992,"method":"m"}`}, nil},
		{"2.0 is the integer 2", `{"jsonrpc":"2.0","id":2.0,"method":"m"}`, 100, []string{`{"jsonrpc":"2.0","id":2.0,"method":"m"}`}, nil},
		{"null id refused", `{"jsonrpc":"2.0","id":null,"method":"m"}`, 100, nil, []string{"-32600 null"}},
		{"too long, with its leading id", `{"jsonrpc":"2.0","id":"big","method":"` + strings.Repeat("m", 100) + `"}`, 100, nil, []string{`-32600 "big"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pass, replies := runGuard(t, tt.in, tt.max)
			if strings.Join(pass, "|") != strings.Join(tt.pass, "|") {
				t.Errorf("passed %q, want %q", pass, tt.pass)
			}
			var got []string
			for _, r := range replies {
				got = append(got, fmt.Sprintf("%d %s", r.Error.Code, r.ID))
			}
			if strings.Join(got, "|") != strings.Join(tt.replies, "|") {
				t.Errorf("replies %q, want %q", got, tt.replies)
			}
		})
	}
}

// runGuard feeds in through the guard and returns the lines it passes on and the responses it
// writes itself. It plays the SDK's part: each request passed on is answered at once through
// the SDK's side of the writer, so the end of the input is not held back for long; it fails
// the test when a request is still pending at the end, when a passed line is not
// newline-terminated or a reply is not one JSON line.
func runGuard(t testing.TB, in string, max int) ([]string, []response) {
	var out, answers bytes.Buffer
	g := newGuard(io.NopCloser(strings.NewReader(in)), &lockedWriter{w: nopCloser{&out}}, max)
	g.drain = 10 * time.Second // a request left pending fails below instead of hanging
	sdk := &responseWriter{w: &lockedWriter{w: nopCloser{&answers}}, book: &g.book}
	r := bufio.NewReader(g)
	var pass []string
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			if !strings.HasSuffix(line, "\n") {
				t.Fatalf("passed data %q does not end with a newline", line)
			}
			pass = append(pass, strings.TrimSuffix(line, "\n"))
			if msg, derr := jsonrpc.DecodeMessage([]byte(line)); derr == nil {
				if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
					b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)})
					if err != nil {
						t.Fatal(err)
					}
					_, _ = sdk.Write(append(b, '\n'))
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
	}
	if n := g.book.size(); n != 0 {
		t.Fatalf("%d requests still pending after every passed request was answered", n)
	}
	var replies []response
	for line := range strings.Lines(out.String()) {
		var r response
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Error == nil || !strings.HasSuffix(line, "\n") {
			t.Fatalf("reply %q is not a JSON-RPC error line: %v", line, err)
		}
		replies = append(replies, r)
	}
	return pass, replies
}

// FuzzGuard checks that whatever arrives, the guard passes on only lines the SDK decodes as one
// JSON-RPC message, answers every other non-blank line (and every line over the limit) with
// one error response, never panics or loses a line, and leaves no request pending once each
// passed request is answered.
func FuzzGuard(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"{\n}\n[]\n",
		`{"jsonrpc":"2.0","id":"a","result":{}}` + "\n" + `{"jsonrpc":"2.0","method":"x","params":[1]}`,
		"\x00\xff\n\r\n",
		`{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		strings.Repeat("z", 300),
	} {
		f.Add(s, 256)
	}
	f.Fuzz(func(t *testing.T, in string, max int) {
		if max < 1 || max > 1<<16 {
			max = 256
		}
		pass, replies := runGuard(t, in, max)
		for _, p := range pass {
			if len(p) > max {
				t.Errorf("passed a line of %d bytes over the limit %d", len(p), max)
			}
			if _, err := jsonrpc.DecodeMessage([]byte(p)); err != nil {
				t.Errorf("passed %q, which the SDK cannot decode: %v", p, err)
			}
		}
		nonBlank := 0 // a line over the limit counts even when blank: the guard does not look inside
		for line := range strings.Lines(in) {
			if strings.TrimSpace(line) != "" || len(strings.TrimSuffix(line, "\n")) > max {
				nonBlank++
			}
		}
		if len(pass)+len(replies) != nonBlank {
			t.Errorf("%d lines passed and %d answered, want %d non-blank lines in all", len(pass), len(replies), nonBlank)
		}
	})
}
