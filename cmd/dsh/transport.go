package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine is the longest JSON-RPC message dsh accepts on a line: the SDK's own default frame
// limit.
const maxLine = mcp.DefaultMaxLineLength

// methodListen is the SEP-2575 subscription stream: the SDK answers it only when the stream
// ends, which over stdio is the end of the input, so the guard does not wait for it.
const methodListen = "subscriptions/listen"

// lineTransport is the SDK's newline-delimited JSON transport over r and w behind a guard that
// keeps one bad line from ending the session, and the end of the input from cutting off the
// requests in flight.
//
// The SDK's reader cannot resynchronise after a line that is not a JSON-RPC message (it ends the
// connection), so the guard reads line by line and answers a bad line itself with a JSON-RPC
// error response, then goes on with the next line:
//
//   - not JSON: -32700 "parse error: …", id null;
//   - JSON but not a JSON-RPC 2.0 message, or a batch (MCP dropped batches in 2025-06-18):
//     -32600 "invalid request: …", with the line's id when it has a usable one, else null;
//   - longer than max bytes: -32600 "invalid request: message of N bytes exceeds the limit
//     of M bytes", with the id the line starts with when it has a usable one, else null;
//   - a request whose id is null, or a number that is not an integer of at most 2^53 in
//     magnitude (the SDK decodes numbers through float64, so 1.5 would come back as 1 and
//     2^53+1 as 2^53): -32600 "invalid request: id … ", with the id exactly as it was sent;
//   - a request whose id is the id of a request still in flight: -32600 "invalid request: id
//     X is already in use by a request in flight", id null (the SDK would drop it unanswered).
//
// Blank lines are skipped. Everything else goes to the SDK untouched; the protocol itself is
// the SDK's. The guard's responses and the SDK's share one writer lock, so lines never mix.
//
// A request the client cancels (notifications/cancelled naming a request in flight) gets no
// response, as the MCP specification asks: the SDK stops the call, and the response it would
// still write for it is dropped.
//
// The end of the input (EOF or a read error) means the client is gone: atEnd, when not nil, is
// called then, and cancels the calls in flight (see serve). The SDK stops writing as soon as its
// reader reports the end, which would drop every response still owed (a cancelled call's
// result, or with atEnd nil, the result of a call a script piped in before closing its end). So
// the guard keeps a ledger: the id of every request it passes on, crossed out when the SDK
// writes the response with that id. At the end of the input it holds the end back from the SDK
// until the ledger is empty; only then does the SDK see it. The hold ends early, and the SDK then cancels what still runs, when the
// transport is closed (the server shuts down), when the client's end of w goes away (a client
// that vanished; noticed when w, or the writer inside a nopCloser, is a pipe or socket: see
// watchPeer), or after drain (0: no limit). Requests are handled concurrently as before: the
// guard only delays the end.
func lineTransport(r io.ReadCloser, w io.WriteCloser, max int, drain time.Duration, atEnd func()) mcp.Transport {
	lw := &lockedWriter{w: w}
	g := newGuard(r, lw, max)
	g.drain, g.atEnd = drain, atEnd
	peer := any(w)
	if nc, ok := w.(nopCloser); ok {
		peer = nc.Writer
	}
	g.watch = watchPeer(peer)
	return &mcp.IOTransport{
		Reader:        g,
		Writer:        &responseWriter{w: lw, book: &g.book},
		MaxLineLength: -1, // the guard enforces max
	}
}

// lockedWriter serialises writes: the SDK writes one whole message per call, and so does the
// guard.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// responseWriter is the SDK's side of the shared writer: each response it writes (one whole
// message per Write) is crossed out of book before its bytes go out, so a client that reads
// the response and reuses its id at once is never refused. A response counts as answered even
// when the write fails: it will not be written again.
type responseWriter struct {
	w    *lockedWriter
	book *ledger
}

func (r *responseWriter) Write(p []byte) (int, error) {
	if id, ok := responseID(p); ok && r.book.answer(id) {
		return len(p), nil // the client cancelled the request: no response
	}
	return r.w.Write(p)
}

func (r *responseWriter) Close() error { return r.w.Close() }

// responseID returns the id of msg when it is a JSON-RPC response (an "id" and a "result" or
// "error" member, no "method"), as the SDK's own [jsonrpc.ID]. It reads only as far as it
// needs: the SDK writes "jsonrpc", "id", then "result" or "error", so a large result is never
// scanned.
func responseID(msg []byte) (jsonrpc.ID, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return jsonrpc.ID{}, false
	}
	var id jsonrpc.ID
	hasID, response := false, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		switch tok {
		case "id":
			var v any
			if dec.Decode(&v) != nil {
				return jsonrpc.ID{}, false
			}
			if id, err = jsonrpc.MakeID(v); err != nil {
				return jsonrpc.ID{}, false
			}
			hasID = id.IsValid()
		case "method":
			return jsonrpc.ID{}, false // a request or notification of the server's own
		case "result", "error":
			response = true
			if hasID {
				return id, true
			}
			fallthrough
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return jsonrpc.ID{}, false
			}
		}
	}
	return id, hasID && response
}

// ledger holds the ids of the requests the guard passed on to the SDK that have no response
// yet. Its methods are safe for concurrent use: the guard opens entries from the SDK's reading
// goroutine, the responseWriter answers them from the goroutines that respond.
type ledger struct {
	mu        sync.Mutex
	pending   map[jsonrpc.ID]struct{}
	cancelled map[jsonrpc.ID]struct{} // pending requests the client cancelled
	answered  chan struct{}           // gets a value, without blocking, whenever an entry is answered
}

// cancel marks the pending request id as cancelled by the client; an id that is not pending is
// ignored.
func (l *ledger) cancel(id jsonrpc.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.pending[id]; !ok {
		return
	}
	if l.cancelled == nil {
		l.cancelled = map[jsonrpc.ID]struct{}{}
	}
	l.cancelled[id] = struct{}{}
}

// open records the request id and reports true, or reports false when a request with id is
// already pending.
func (l *ledger) open(id jsonrpc.ID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.pending[id]; dup {
		return false
	}
	if l.pending == nil {
		l.pending = map[jsonrpc.ID]struct{}{}
	}
	l.pending[id] = struct{}{}
	return true
}

// answer crosses out id and reports whether the client had cancelled it (its response is then
// not to be sent); an id that is not pending is ignored.
func (l *ledger) answer(id jsonrpc.ID) (cancelled bool) {
	l.mu.Lock()
	_, ok := l.pending[id]
	_, cancelled = l.cancelled[id]
	delete(l.pending, id)
	delete(l.cancelled, id)
	l.mu.Unlock()
	if ok {
		select {
		case l.answered <- struct{}{}:
		default:
		}
	}
	return cancelled
}

// size returns the number of pending requests.
func (l *ledger) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// wait blocks until no request is pending, limit has passed (0: no limit) or one of stop and
// gone is closed (a nil channel never is). It reports whether no request is pending.
func (l *ledger) wait(limit time.Duration, stop, gone <-chan struct{}) bool {
	var expired <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		expired = t.C
	}
	for l.size() > 0 {
		select {
		case <-l.answered:
		case <-expired:
			return false
		case <-stop:
			return false
		case <-gone:
			return false
		}
	}
	return true
}

// guardReader passes valid JSON-RPC lines through, answers the others, and holds the end of the
// input back while requests are in flight (see lineTransport). Read is used by the SDK's single
// reading goroutine only; Close may come from any goroutine.
type guardReader struct {
	r     *bufio.Reader
	c     io.Closer
	w     *lockedWriter
	max   int
	drain time.Duration                              // bound on the hold at the end; 0: none
	atEnd func()                                     // called at the end of the input; nil: nothing
	watch func(stop <-chan struct{}) <-chan struct{} // see watchPeer; nil: no watch
	book  ledger
	pend  []byte // the rest of the current good line, newline included
	end   error  // the error that ended the input, once it has been delivered

	closed    chan struct{} // closed by Close
	closeOnce sync.Once
}

// newGuard returns a guard reading r and answering bad lines on w, with lines of at most max
// bytes, no drain limit and no watch of the client.
func newGuard(r io.ReadCloser, w *lockedWriter, max int) *guardReader {
	return &guardReader{
		r:      bufio.NewReaderSize(r, 64<<10),
		c:      r,
		w:      w,
		max:    max,
		book:   ledger{answered: make(chan struct{}, 1)},
		closed: make(chan struct{}),
	}
}

func (g *guardReader) Read(p []byte) (int, error) {
	if g.end != nil {
		return 0, g.end
	}
	for len(g.pend) == 0 {
		line, err := g.nextLine()
		if err != nil {
			if g.atEnd != nil {
				g.atEnd()
			}
			g.hold()
			g.end = err
			return 0, err
		}
		g.pend = line
	}
	n := copy(p, g.pend)
	g.pend = g.pend[n:]
	return n, nil
}

// Close ends a hold in progress and closes the input.
func (g *guardReader) Close() error {
	g.closeOnce.Do(func() { close(g.closed) })
	return g.c.Close()
}

// hold waits, at the end of the input, until every request passed on has its response, the
// guard is closed, the client's end of the output goes away or the drain limit passes.
func (g *guardReader) hold() {
	if g.book.size() == 0 {
		return
	}
	stop := make(chan struct{})
	defer close(stop)
	var gone <-chan struct{}
	if g.watch != nil {
		gone = g.watch(stop)
	}
	g.book.wait(g.drain, g.closed, gone)
}

// nextLine returns the next good line, newline-terminated, answering the bad ones on the way
// and recording the requests in the ledger. It returns io.EOF at the end of the input (a last
// line without a newline still counts) and any other read error as is.
func (g *guardReader) nextLine() ([]byte, error) {
	for {
		line, size, err := g.readLine()
		if err != nil && (size == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		if size > g.max {
			if werr := g.reply(leadingID(line), jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: message of %d bytes exceeds the limit of %d bytes", size, g.max)); werr != nil {
				return nil, werr
			}
			continue
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		msg, id, code, text := check(trimmed)
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method != methodListen && !g.book.open(req.ID) {
			raw, _ := json.Marshal(req.ID.Raw())
			code, text = jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %s is already in use by a request in flight", raw)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/cancelled" {
			g.noteCancel(req.Params)
		}
		if code != 0 {
			if werr := g.reply(id, code, text); werr != nil {
				return nil, werr
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		return append(trimmed, '\n'), nil
	}
}

// readLine reads one line, keeping at most max+1 bytes of it, and returns what it kept and the
// line's full size (newline excluded). err is the read error that ended the line, if any.
func (g *guardReader) readLine() (line []byte, size int, err error) {
	for {
		chunk, rerr := g.r.ReadSlice('\n')
		size += len(chunk)
		if len(line) <= g.max {
			line = append(line, chunk...)
		}
		switch {
		case rerr == nil:
			return bytes.TrimSuffix(line, []byte("\n")), size - 1, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		default:
			return line, size, rerr
		}
	}
}

// check returns the message a line holds and a zero code when it is one JSON-RPC 2.0 message,
// and otherwise a nil message and the error code and text of the response, with the id to
// answer (nil for null).
func check(line []byte) (msg jsonrpc.Message, id json.RawMessage, code int, text string) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return nil, nil, jsonrpc.CodeParseError, "parse error: " + err.Error()
	}
	if line[0] == '[' {
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported; send one message per line"
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, usableID(line), jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	if raw, present := rawID(line); present {
		if problem := idProblem(raw); problem != "" {
			return nil, raw, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %s %s", raw, problem)
		}
	}
	return msg, nil, 0, ""
}

// rawID returns the "id" member of an object line exactly as it was sent, and whether it is
// present at all.
func rawID(line []byte) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return nil, false
	}
	raw, ok := m["id"]
	return raw, ok
}

// maxExactID is the largest integer id the SDK echoes exactly: it decodes numbers as float64.
const maxExactID = 1 << 53

// idProblem says why raw cannot identify a request whose response must carry it back exactly,
// or returns "" when it can: a string, or an integer of at most 2^53 in magnitude.
func idProblem(raw json.RawMessage) string {
	switch {
	case string(raw) == "null":
		return "is null; a request's id must be a string or an integer"
	case len(raw) > 0 && raw[0] == '"':
		return ""
	case len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'):
		// Exact arithmetic: 2.0 and 2e0 are the integer 2, 1.5 is not an integer, and 2^53+1
		// would lose its last digit in a float64.
		f, _, err := big.ParseFloat(string(raw), 10, 256, big.ToNearestEven)
		if err != nil || !f.IsInt() {
			return "is not an integer; use a string or an integer"
		}
		if new(big.Float).Abs(f).Cmp(new(big.Float).SetInt64(maxExactID)) > 0 {
			return "is too large to be echoed exactly; use a string or an integer of at most 2^53"
		}
		return ""
	}
	return "must be a string or an integer"
}

// leadingID returns the id of a line that was cut at the length limit, when the kept part shows
// a usable one ("id" before the bulk of the message, as clients write it); nil otherwise.
func leadingID(line []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		if key == "id" {
			if idProblem(raw) != "" {
				return nil
			}
			return raw
		}
	}
	return nil
}

// noteCancel marks the request named by the params of a notifications/cancelled as cancelled,
// so its response is dropped.
func (g *guardReader) noteCancel(params json.RawMessage) {
	if id, ok := cancelledID(params); ok {
		g.book.cancel(id)
	}
}

// cancelledID returns the request id the params of a notifications/cancelled name, as the SDK
// decodes it, or false when they name none that is usable.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return id, err == nil && id.IsValid()
}

// usableID returns the "id" member of an object line when it is a string or an integer, the
// ids a client can match a response to; nil otherwise.
func usableID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch x := v.(type) {
	case string:
		return m.ID
	case float64:
		if x == float64(int64(x)) {
			return m.ID
		}
	}
	return nil
}

// reply writes one JSON-RPC error response with id (nil: null), code and message.
func (g *guardReader) reply(id json.RawMessage, code int, message string) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	if err != nil {
		return err
	}
	_, err = g.w.Write(append(b, '\n'))
	return err
}
