package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ledgerIDs returns the pending ids of book as sorted JSON texts, space-separated.
func ledgerIDs(book *ledger) string {
	book.mu.Lock()
	defer book.mu.Unlock()
	var ids []string
	for id := range book.pending {
		b, _ := json.Marshal(id.Raw())
		ids = append(ids, string(b))
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

// TestGuardLedger checks the guard's bookkeeping of the requests in flight: which lines open an
// entry, which writes of the SDK answer one, and what the guard answers itself.
func TestGuardLedger(t *testing.T) {
	type step struct{ in, out string } // a line the client sends, or a message the SDK writes
	in := func(line string) step { return step{in: line} }
	out := func(msg string) step { return step{out: msg} }
	tests := []struct {
		name    string
		steps   []step
		pending string   // the ids still pending at the end, as JSON, sorted
		replies []string // the guard's own answers, "code id"
	}{
		{"numeric and string ids are distinct", []step{
			in(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
			in(`{"jsonrpc":"2.0","id":"1","method":"tools/list"}`),
			in(`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`),
			out(`{"jsonrpc":"2.0","id":1,"result":{}}`),
		}, `"1" "a"`, nil},
		{"a string id answered", []step{
			in(`{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{}}`),
			out(`{"jsonrpc":"2.0","id":"req-7","result":{"content":[]}}`),
		}, ``, nil},
		{"an error response answers", []step{
			in(`{"jsonrpc":"2.0","id":5,"method":"nope"}`),
			out(`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"method not found"}}`),
		}, ``, nil},
		{"ids compare as the SDK decodes them", []step{
			in(`{"jsonrpc":"2.0","id":2.0,"method":"tools/list"}`),
			in(`{"jsonrpc":"2.0","id":"\u0062","method":"tools/list"}`),
			out(`{"jsonrpc":"2.0","id":2,"result":{}}`),
			out(`{"jsonrpc":"2.0","id":"b","result":{}}`),
		}, ``, nil},
		{"notifications are not awaited", []step{
			in(`{"jsonrpc":"2.0","method":"notifications/initialized"}`),
			in(`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`),
		}, ``, []string{"-32600 null"}},
		{"the client's responses are not awaited", []step{
			in(`{"jsonrpc":"2.0","id":9,"result":{}}`),
		}, ``, nil},
		{"a response for an unknown id changes nothing", []step{
			in(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
			out(`{"jsonrpc":"2.0","id":2,"result":{}}`),
			out(`{"jsonrpc":"2.0","id":"1","result":{}}`),
		}, `1`, nil},
		{"a request of the server's own is no answer", []step{
			in(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
			out(`{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			out(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}`),
		}, `1`, nil},
		{"malformed lines answered by the guard are answered", []step{
			in(`{"jsonrpc":"1.0","id":4,"method":"tools/list"}`),
			in(`{"jsonrpc":"2.0","id":"s","method"`),
			in(`[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]`),
			in(`{"jsonrpc":"2.0","id":7,"method":"` + strings.Repeat("m", 300) + `"}`),
		}, ``, []string{"-32600 4", "-32700 null", "-32600 null", "-32600 7"}},
		{"the guard's own answer does not answer a request in flight", []step{
			in(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`),
			in(`{"jsonrpc":"1.0","id":4,"method":"tools/list"}`),
		}, `4`, []string{"-32600 4"}},
		{"an id already in flight is refused", []step{
			in(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`),
			in(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}`),
			in(`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`),
			in(`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`),
		}, `"x" 5`, []string{"-32600 null", "-32600 null"}},
		{"an id is free again once answered", []step{
			in(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`),
			out(`{"jsonrpc":"2.0","id":5,"result":{}}`),
			in(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`),
		}, `5`, nil},
		{"a cancelled request is awaited until the SDK ends it", []step{
			in(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`),
			in(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`),
		}, `3`, nil},
		{"a subscription stream is not awaited", []step{
			in(`{"jsonrpc":"2.0","id":8,"method":"subscriptions/listen","params":{}}`),
		}, ``, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var feed, replies, answers bytes.Buffer
			g := newGuard(io.NopCloser(&feed), &lockedWriter{w: nopCloser{&replies}}, 256)
			sdk := &responseWriter{w: &lockedWriter{w: nopCloser{&answers}}, book: &g.book}
			for _, s := range tt.steps {
				if s.out != "" {
					if _, err := sdk.Write([]byte(s.out + "\n")); err != nil {
						t.Fatal(err)
					}
					continue
				}
				feed.WriteString(s.in + "\n")
				for {
					_, err := g.nextLine()
					if errors.Is(err, io.EOF) {
						break // the feed is drained; the next step adds to it
					}
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := ledgerIDs(&g.book); got != tt.pending {
				t.Errorf("pending %q, want %q", got, tt.pending)
			}
			var got []string
			for line := range strings.Lines(replies.String()) {
				var r response
				if err := json.Unmarshal([]byte(line), &r); err != nil || r.Error == nil {
					t.Fatalf("reply %q: %v", line, err)
				}
				got = append(got, fmt.Sprintf("%d %s", r.Error.Code, r.ID))
			}
			if strings.Join(got, "|") != strings.Join(tt.replies, "|") {
				t.Errorf("replies %q, want %q", got, tt.replies)
			}
		})
	}
}

// TestCancelledRequestGetsNoResponse checks that the response the SDK writes for a request the
// client cancelled is dropped (the MCP specification: the receiver SHOULD NOT respond), while
// other responses go out, and that the cancelled request no longer holds the end of the input.
func TestCancelledRequestGetsNoResponse(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"k","method":"tools/list"}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}` + "\n"
	var replies, answers bytes.Buffer
	g := newGuard(io.NopCloser(strings.NewReader(in)), &lockedWriter{w: nopCloser{&replies}}, 256)
	sdk := &responseWriter{w: &lockedWriter{w: nopCloser{&answers}}, book: &g.book}
	for {
		if _, err := g.nextLine(); err != nil {
			break
		}
	}
	for _, resp := range []string{`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`, `{"jsonrpc":"2.0","id":"k","result":{}}`} {
		if n, err := sdk.Write([]byte(resp + "\n")); err != nil || n != len(resp)+1 {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if got, want := answers.String(), `{"jsonrpc":"2.0","id":"k","result":{}}`+"\n"; got != want {
		t.Errorf("written %q, want only %q", got, want)
	}
	if n := g.book.size(); n != 0 {
		t.Errorf("%d requests pending, want none", n)
	}
	if replies.Len() != 0 {
		t.Errorf("the guard answered: %s", replies.String())
	}
}

// TestDuplicateIDMessage checks the text of the answer to a request whose id is in flight.
func TestDuplicateIDMessage(t *testing.T) {
	var replies bytes.Buffer
	g := newGuard(io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":"k","method":"a"}`+"\n"+`{"jsonrpc":"2.0","id":"k","method":"b"}`+"\n")), &lockedWriter{w: nopCloser{&replies}}, 256)
	if _, err := g.nextLine(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.nextLine(); !errors.Is(err, io.EOF) {
		t.Fatalf("second line passed: %v", err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id \"k\" is already in use by a request in flight"}}` + "\n"
	if replies.String() != want {
		t.Errorf("reply %s, want %s", replies.String(), want)
	}
}

// TestResponseID checks which messages the SDK writes count as the response to a request.
func TestResponseID(t *testing.T) {
	tests := []struct {
		msg  string
		want string // the id as JSON, or "" for no response
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, `1`},
		{`{"jsonrpc":"2.0","id":"a b","result":{"content":[{"type":"text","text":"x"}]}}`, `"a b"`},
		{`{"jsonrpc":"2.0","id":-3,"error":{"code":-32601,"message":"m"}}`, `-3`},
		{`{"result":{"big":[1,2,3]},"jsonrpc":"2.0","id":4}`, `4`},
		{` {"jsonrpc":"2.0", "id" : 7 , "result":null}` + "\n", `7`},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, ``},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`, ``},
		{`{"jsonrpc":"2.0","id":1}`, ``},
		{`{"jsonrpc":"2.0","id":true,"result":{}}`, ``},
		{`[{"jsonrpc":"2.0","id":1,"result":{}}]`, ``},
		{`{"jsonrpc":"2.0","id":1`, ``},
		// Not scanned past the "result" key: the SDK writes whole messages, and a large result
		// is not read twice.
		{`{"jsonrpc":"2.0","id":1,"result":`, `1`},
		{``, ``},
	}
	for _, tt := range tests {
		id, ok := responseID([]byte(tt.msg))
		got := ""
		if ok {
			b, _ := json.Marshal(id.Raw())
			got = string(b)
		}
		if got != tt.want {
			t.Errorf("responseID(%s) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}

// FuzzResponseID checks responseID against the SDK: for every response the SDK encodes,
// responseID finds the id the SDK decodes; for every request or notification, none; and
// arbitrary bytes never make it panic.
func FuzzResponseID(f *testing.F) {
	f.Add(int64(1), "", false, "text", "tools/call", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	f.Add(int64(-9), "abc", true, "line\n\"quoted\"", "", []byte(`{`))
	f.Add(int64(1<<53+1), "\u2028", false, strings.Repeat("x", 100), "ping", []byte(`[]`))
	f.Fuzz(func(t *testing.T, n int64, s string, useString bool, text, method string, raw []byte) {
		responseID(raw) // must not panic
		var v any = float64(n)
		if useString {
			v = s
		}
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		result, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}})
		resp, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result})
		if err != nil {
			t.Skip()
		}
		decoded, err := jsonrpc.DecodeMessage(resp)
		if err != nil {
			t.Fatalf("the SDK cannot decode its own %s: %v", resp, err)
		}
		got, ok := responseID(resp)
		if want := decoded.(*jsonrpc.Response).ID; !ok || got != want {
			t.Errorf("responseID(%s) = %v %v, want %v", resp, got.Raw(), ok, want.Raw())
		}
		if method == "" {
			return
		}
		req, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: method, Params: result})
		if err != nil {
			t.Skip()
		}
		if _, ok := responseID(req); ok {
			t.Errorf("responseID(%s) takes a request for a response", req)
		}
	})
}

// pendingGuard returns a guard whose input is one request (id 1) and then its end, with the
// request already read, so that the next Read holds the end back.
func pendingGuard(t *testing.T) *guardReader {
	t.Helper()
	g := newGuard(io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n")), &lockedWriter{w: nopCloser{io.Discard}}, 256)
	line := make([]byte, 256)
	if _, err := g.Read(line); err != nil {
		t.Fatal(err)
	}
	if got := ledgerIDs(&g.book); got != "1" {
		t.Fatalf("pending %q after the request", got)
	}
	return g
}

// readEnd reads g in a goroutine and returns a channel that gets the error that ended it.
func readEnd(g *guardReader) <-chan error {
	end := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(g)
		if err == nil {
			err = io.EOF // ReadAll hides EOF
		}
		end <- err
	}()
	return end
}

// awaitEnd waits up to 10 s for the end of the read.
func awaitEnd(t *testing.T, end <-chan error) {
	t.Helper()
	select {
	case <-end:
	case <-time.After(10 * time.Second):
		t.Fatal("the guard still holds the end of the input after 10s")
	}
}

// TestGuardHoldEnds checks each way the hold at the end of the input ends: the response, the
// guard's close, the client's end of the output going away, and the drain limit.
func TestGuardHoldEnds(t *testing.T) {
	t.Run("response", func(t *testing.T) {
		g := pendingGuard(t)
		end := readEnd(g)
		sdk := &responseWriter{w: &lockedWriter{w: nopCloser{io.Discard}}, book: &g.book}
		if _, err := sdk.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")); err != nil {
			t.Fatal(err)
		}
		awaitEnd(t, end)
		if _, err := g.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("read after the end: %v, want EOF", err)
		}
	})
	t.Run("close", func(t *testing.T) {
		g := pendingGuard(t)
		end := readEnd(g)
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		awaitEnd(t, end)
		if got := ledgerIDs(&g.book); got != "1" {
			t.Errorf("pending %q, want the unanswered 1", got)
		}
	})
	t.Run("client gone", func(t *testing.T) {
		g := pendingGuard(t)
		server, client := socketPair(t)
		g.watch = watchPeer(server)
		end := readEnd(g)
		if err := client.Close(); err != nil {
			t.Fatal(err)
		}
		awaitEnd(t, end)
	})
	t.Run("drain limit", func(t *testing.T) {
		g := pendingGuard(t)
		g.drain = 50 * time.Millisecond
		start := time.Now()
		awaitEnd(t, readEnd(g))
		if d := time.Since(start); d < g.drain {
			t.Errorf("the hold ended after %v, before the limit %v", d, g.drain)
		}
		// The end is delivered once; a second read does not wait again.
		start = time.Now()
		if _, err := g.Read(make([]byte, 1)); !errors.Is(err, io.EOF) || time.Since(start) >= g.drain {
			t.Errorf("second read: %v after %v", err, time.Since(start))
		}
	})
}

// TestWatchPeer checks that the watch of the output fires when the client's reading end goes
// away, and only then.
func TestWatchPeer(t *testing.T) {
	if watchPeer(&bytes.Buffer{}) != nil {
		t.Error("a writer without a file descriptor got a watch")
	}
	stop := make(chan struct{})
	defer close(stop)

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	pipeGone := watchPeer(pw)(stop)
	sockServer, sockClient := socketPair(t)
	sockGone := watchPeer(sockServer)(stop)
	halfServer, halfClient := socketPair(t)
	halfGone := watchPeer(halfServer)(stop)
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	fileGone := watchPeer(file)(stop)
	for name, ch := range map[string]<-chan struct{}{"pipe": pipeGone, "socket": sockGone, "half-closed socket": halfGone, "file": fileGone} {
		if ch == nil {
			t.Fatalf("%s: no watch", name)
		}
	}

	// Closing the client's reading end fires the watch: a pipe, a socket.
	_ = pr.Close()
	_ = sockClient.Close()
	for name, ch := range map[string]<-chan struct{}{"pipe": pipeGone, "socket": sockGone} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the watch did not fire within 10s of the close", name)
		}
	}
	// A client that only closed its writing end still reads; a file has no reader to lose.
	if err := halfClient.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-halfGone:
		t.Error("half-closed socket: the watch fired, but the client still reads")
	case <-fileGone:
		t.Error("file: the watch fired")
	case <-time.After(200 * time.Millisecond): // a window for a wrong firing, not synchronisation
	}
}

// TestEOFAnswersInFlight checks the scripted client: it writes every request and closes its
// writing end at once. Every request read before the end is answered, the call still running
// at the end included, then the session ends and kills what the session started.
func TestEOFAnswersInFlight(t *testing.T) {
	srv := testServer(t, config{})
	sc, cc := socketPair(t)
	ss, err := srv.connect(t.Context(), lineTransport(sc, sc, maxLine, 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	call := func(id int, command string, extra map[string]any) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bash","arguments":%s}}`, id, bashArgs(command, extra))
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`,
		call(3, "echo hi; exit 3", nil),
		call(4, "echo $$ > "+filepath.Join(dir, "late")+"; while [ ! -s "+filepath.Join(dir, "bg")+" ]; do sleep 0.01; done; sleep 0.3; echo late", nil),
		call(5, "echo $$ > "+filepath.Join(dir, "bg")+"; exec sleep 300", map[string]any{"run_in_background": true}),
	}
	if _, err := io.WriteString(cc, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := cc.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = cc.SetReadDeadline(time.Now().Add(20 * time.Second))
	got := map[string]string{}
	r := bufio.NewReader(cc)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var resp struct {
				ID     json.RawMessage `json:"id"`
				Result struct {
					Content []struct{ Text string } `json:"content"`
					Tools   []struct{ Name string } `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal(line, &resp); err != nil {
				t.Fatalf("response %q: %v", line, err)
			}
			var text []string
			for _, c := range resp.Result.Content {
				text = append(text, c.Text)
			}
			for _, tool := range resp.Result.Tools {
				text = append(text, tool.Name)
			}
			got[string(resp.ID)] = strings.Join(text, "|")
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("reading the responses: %v (got %v)", err, got)
			}
			break
		}
	}
	want := map[string]string{
		`1`:      ``,
		`"list"`: `bash|bash_kill|bash_output|bash_tasks`,
		`3`:      "hi\n[exit code: 3]",
		`4`:      "late\n",
		`5`:      `started background task bash-1`,
	}
	for id, w := range want {
		if g, ok := got[id]; !ok || g != w {
			t.Errorf("response %s: %q (present %v), want %q", id, g, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got responses %v, want one for each of %d requests", got, len(want))
	}
	waitCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ended := make(chan struct{})
	go func() { _ = ss.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-waitCtx.Done():
		t.Fatal("the session did not end after the last response")
	}
	if bg := readPID(t, filepath.Join(dir, "bg")); !waitGone(bg) {
		t.Errorf("background task (pid %d) outlived its session", bg)
	}
}

// TestDrainLimit checks the bound on the hold for each backend.
func TestDrainLimit(t *testing.T) {
	tests := []struct {
		cfg  config
		want time.Duration
	}{
		{config{}, 11 * time.Minute},
		{config{MaxTimeout: 30 * time.Second}, 90 * time.Second},
		{config{Timeout: time.Hour}, 11 * time.Minute}, // refused by the flags; the cap governs anyway
		{config{Persistent: true}, 6 * time.Minute},
		{config{Persistent: true, Timeout: 10 * time.Second}, 70 * time.Second},
	}
	for _, tt := range tests {
		if got := drainLimit(tt.cfg); got != tt.want {
			t.Errorf("drainLimit(%+v) = %v, want %v", tt.cfg, got, tt.want)
		}
	}
}

// TestGuardAtEnd checks that the end of the input, EOF or a read error, calls atEnd once and
// before the hold: here atEnd answers the pending request (as the cancelled call does), so
// the hold ends, and a guard that waited first would never call it.
func TestGuardAtEnd(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  io.Reader
		want error
	}{
		{"EOF", strings.NewReader(""), io.EOF},
		{"read error", iotest.ErrReader(errors.New("read failed")), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}` + "\n")
			g := newGuard(io.NopCloser(io.MultiReader(req, tt.end)), &lockedWriter{w: nopCloser{io.Discard}}, 256)
			sdk := &responseWriter{w: &lockedWriter{w: nopCloser{io.Discard}}, book: &g.book}
			calls := 0
			g.atEnd = func() {
				calls++
				if _, err := sdk.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")); err != nil {
					t.Error(err)
				}
			}
			if _, err := g.Read(make([]byte, 256)); err != nil {
				t.Fatal(err)
			}
			end := readEnd(g)
			awaitEnd(t, end)
			if _, err := g.Read(make([]byte, 1)); err == nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("read after the end: %v, want %v", err, tt.want)
			}
			if calls != 1 {
				t.Errorf("atEnd called %d times, want once", calls)
			}
		})
	}
}
