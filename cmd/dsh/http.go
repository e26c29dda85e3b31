package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpPath is the one path dsh mcp -http serves.
const mcpPath = "/mcp"

// Defaults of the HTTP transport's flags.
const (
	defaultIdleTimeout = 10 * time.Minute
	defaultDrain       = 30 * time.Second
	defaultMaxSessions = 64
	defaultMaxBody     = 4 << 20 // the SDK's own default
	defaultMaxCalls    = 16
	// httpWriteTimeout bounds one write to a client (an event of a stream, a response): a
	// client that stops reading has its stream closed instead of holding a call forever.
	httpWriteTimeout = 30 * time.Second
	// httpBodyTimeout bounds the read of one request's body, so that a client whose body never
	// arrives holds no handler.
	httpBodyTimeout = 30 * time.Second
	// httpMaxPending is how many connections may wait at once for their first request with a
	// valid token; past it the oldest is closed (see connGuard).
	httpMaxPending = 256
	// httpConnIdle is how long a connection may stay open between requests.
	httpConnIdle = 2 * time.Minute
)

// Codes of the JSON-RPC errors the front answers itself (the implementation-defined server
// error range; codeTooManyCalls is the server's).
const (
	codeUnavailable  = -32002 // too many sessions, or dsh is shutting down
	codeBodyTooLarge = -32003
)

// httpConfig is what the command line says about the HTTP transport.
type httpConfig struct {
	Addr        string
	TokenFile   string
	TLSCert     string
	TLSKey      string
	IdleTimeout time.Duration
	Drain       time.Duration
	MaxSessions int
	// MaxPrincipalSessions bounds the sessions of one principal (at most MaxSessions; 0: an
	// equal share of MaxSessions for each principal of the token file).
	MaxPrincipalSessions int
	MaxBody              int64
	MaxCalls             int
	// WriteTimeout bounds one write to a client (0: httpWriteTimeout), BodyTimeout the read of
	// one request body (0: httpBodyTimeout) and MaxPending the connections without a valid
	// token yet (0: httpMaxPending); not flags, tests lower them.
	WriteTimeout time.Duration
	BodyTimeout  time.Duration
	MaxPending   int
}

// front is dsh's handler in front of the SDK's streamable HTTP handler. It checks what the SDK
// does not, in this order: the path, the Origin (DNS rebinding), the bearer token, the session
// (it must exist and belong to the token's principal: any other session id gets the same 404
// as an unknown one), the body size and time, batches, and the limits; and it owns each
// session's life: DELETE and the idle timeout end a session the way a stdio client's departure
// does (its calls are cancelled, then what it owns is released), a principal at its limit of
// sessions gets its longest-idle session that runs nothing reclaimed, and drain refuses new
// sessions and new calls while the calls in flight finish. A request refused before its body
// is read closes its connection, so a body that never comes holds nothing.
//
// A request the client cancelled (notifications/cancelled) gets no response: the front drops
// the response event the SDK still writes for it, as the stdio guard does.
//
// Methods are safe for concurrent use.
type front struct {
	srv    *server
	sdk    *mcp.StreamableHTTPHandler
	tokens *tokenSet
	cfg    httpConfig
	logger *slog.Logger

	conns *connGuard

	mu       sync.Mutex
	sessions map[string]*httpSession // by Mcp-Session-Id
	creating map[string]int          // by principal: initialize POSTs counted against the limits
	calls    int                     // POSTs carrying requests, in flight
	draining bool
	quiet    chan struct{} // closed once draining and no POST carrying a request is in flight
	wg       sync.WaitGroup
}

// httpSession is the front's record of one session.
type httpSession struct {
	id        string
	principal string
	ss        *mcp.ServerSession
	ended     <-chan struct{} // closed once the server has ended the session and released it
	book      ledger          // requests in flight and those the client cancelled

	mu        sync.Mutex
	active    int       // requests being served
	idleSince time.Time // when active last fell to 0
	idle      *time.Timer
	closing   bool
}

// newFront returns the front of srv's tools for cfg with the tokens ts.
func newFront(srv *server, ts *tokenSet, cfg httpConfig, logger *slog.Logger) *front {
	f := &front{
		srv:      srv,
		tokens:   ts,
		cfg:      cfg,
		logger:   logger,
		sessions: map[string]*httpSession{},
		creating: map[string]int{},
		conns:    newConnGuard(cmp.Or(cfg.MaxPending, httpMaxPending)),
	}
	if f.cfg.MaxPrincipalSessions == 0 {
		f.cfg.MaxPrincipalSessions = max(1, cfg.MaxSessions/len(ts.principals))
	}
	srv.maxCalls = cfg.MaxCalls
	f.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              logger,
		MaxRequestBodyBytes: cfg.MaxBody,
	})
	return f
}

// ServeHTTP implements http.Handler.
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != mcpPath {
		refuse(w, http.StatusNotFound, "404 page not found")
		return
	}
	if !allowedOrigin(r) {
		refuse(w, http.StatusForbidden, "Forbidden: Origin not allowed")
		return
	}
	if f.conns.fromOwnCommand(r.Context()) {
		// A command holding a token (found in the workspace, say) must not open a session of its
		// own: it could approve its own asks, "sandbox":"off" among them.
		refuse(w, http.StatusForbidden, "Forbidden: dsh does not serve the commands it runs")
		return
	}
	principal, ok := f.tokens.principal(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="dsh"`)
		refuse(w, http.StatusUnauthorized, fmt.Sprintf("Unauthorized: send the header \"Authorization: Bearer TOKEN\" with a token from dsh's token file (%s)", f.cfg.TokenFile))
		return
	}
	f.conns.authenticated(r.Context())
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		if r.Method == http.MethodPost {
			f.create(w, r, principal)
			return
		}
		f.sdk.ServeHTTP(w, r) // the SDK's own refusal of a GET or DELETE without a session
		return
	}
	hs := f.lookup(id, principal)
	if hs == nil {
		refuse(w, http.StatusNotFound, "session not found")
		return
	}
	switch r.Method {
	case http.MethodPost:
		f.post(w, r, hs)
	case http.MethodDelete:
		f.end(hs)
		w.WriteHeader(http.StatusNoContent)
	default:
		// A GET (the stream of the server's own messages) is not activity: a client that holds
		// one open and sends nothing is idle.
		f.sdk.ServeHTTP(f.guardWriter(w, nil), r)
	}
}

// lookup returns the live session id of principal, or nil for an unknown id, one that another
// principal opened, or one being ended.
func (f *front) lookup(id, principal string) *httpSession {
	f.mu.Lock()
	hs := f.sessions[id]
	f.mu.Unlock()
	if hs == nil || hs.principal != principal {
		return nil
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closing {
		return nil
	}
	return hs
}

// create serves a POST without a session id: an initialize that opens a session for principal,
// unless the server is draining or no session can be made (see reserve). Anything else without
// a session id is a 400.
func (f *front) create(w http.ResponseWriter, r *http.Request, principal string) {
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	msg := peek(body)
	switch {
	case msg.batch:
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, errBatch)
		return
	case !msg.request || msg.method != "initialize":
		writeRPCError(w, http.StatusBadRequest, msg.id, jsonrpc.CodeInvalidRequest, "invalid request: no Mcp-Session-Id header; a session begins with an initialize request, and every later message carries the id its response gave")
		return
	}
	if !f.reserve(w, principal) {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	cw := &createWriter{ResponseWriter: w, f: f, principal: principal}
	f.sdk.ServeHTTP(cw, r)
	cw.register() // no response written: count the attempt out all the same
	if cw.hs != nil {
		f.finish(cw.hs) // the initialize was the session's first request (see register)
	}
}

// errBatch is the message of the error answering a JSON-RPC batch.
const errBatch = "invalid request: JSON-RPC batches are not supported (MCP dropped them in 2025-06-18); send one message per request"

// reserve counts a session about to be opened for principal against the limits: -max-sessions
// in all and -max-principal-sessions per principal. When either is reached, principal's
// longest-idle session that runs nothing (no request, no call, no background task) is ended to
// make room: a client that never ends its sessions only ever competes with itself. When no
// session of principal can go, or the server is draining, reserve answers with a 503 saying
// what to do, and reports false.
func (f *front) reserve(w http.ResponseWriter, principal string) bool {
	for {
		f.mu.Lock()
		if f.draining {
			f.mu.Unlock()
			writeRPCError(w, http.StatusServiceUnavailable, nil, codeUnavailable, "dsh is shutting down: no new sessions")
			return false
		}
		own, total := f.countLocked(principal)
		if own < f.cfg.MaxPrincipalSessions && total < f.cfg.MaxSessions {
			f.creating[principal]++
			f.mu.Unlock()
			return true
		}
		victim := f.idlestLocked(principal)
		f.mu.Unlock()
		if victim == nil {
			writeRPCError(w, http.StatusServiceUnavailable, nil, codeUnavailable, f.fullMessage(principal, own))
			return false
		}
		f.logger.Info("dsh: session reclaimed for a new one", "principal", principal, "idle", time.Since(victim.idleSince).Round(time.Second))
		f.end(victim)
	}
}

// countLocked returns the sessions (open or being opened) of principal and of every principal.
func (f *front) countLocked(principal string) (own, total int) {
	for _, hs := range f.sessions {
		if hs.principal == principal {
			own++
		}
	}
	total = len(f.sessions)
	for p, n := range f.creating {
		if p == principal {
			own += n
		}
		total += n
	}
	return own, total
}

// idlestLocked picks principal's session that has been idle longest and runs nothing, and marks
// it as closing, so that no one else picks it or reaches it; nil when there is none.
func (f *front) idlestLocked(principal string) *httpSession {
	var victim *httpSession
	for _, hs := range f.sessions {
		if hs.principal != principal || f.srv.busy(hs.ss) {
			continue
		}
		hs.mu.Lock()
		if !hs.closing && hs.active == 0 && (victim == nil || hs.idleSince.Before(victim.idleSince)) {
			victim = hs
		}
		hs.mu.Unlock()
	}
	if victim != nil {
		victim.mu.Lock()
		victim.closing = true
		victim.mu.Unlock()
	}
	return victim
}

// fullMessage says why principal, which has own sessions, gets no new one, and what to do.
func (f *front) fullMessage(principal string, own int) string {
	const what = "end one (DELETE with its Mcp-Session-Id) or let its work finish: a session that runs nothing is reclaimed for a new one"
	if own >= f.cfg.MaxPrincipalSessions {
		return fmt.Sprintf("too many sessions: principal %q has %d (the limit per principal), each running a call or a background task; %s", principal, own, what)
	}
	return fmt.Sprintf("too many sessions: dsh has %d (its limit), and none of principal %q's %d runs nothing; %s, or try later", f.cfg.MaxSessions, principal, own, what)
}

// createWriter records the session the SDK opens when it sends the response headers, which
// carry the new id: before the client can know the id, so its next request finds it.
type createWriter struct {
	http.ResponseWriter
	f         *front
	principal string
	once      sync.Once
	hs        *httpSession
}

func (c *createWriter) register() {
	c.once.Do(func() {
		if id := c.Header().Get("Mcp-Session-Id"); id != "" {
			c.hs = c.f.register(id, c.principal)
		}
		// The attempt is over: it is a session now, or it never will be. Counted out here, not
		// when the SDK returns, so that a client that has its answer does not see its own
		// session counted twice against the limit.
		c.f.mu.Lock()
		if c.f.creating[c.principal]--; c.f.creating[c.principal] == 0 {
			delete(c.f.creating, c.principal)
		}
		c.f.mu.Unlock()
	})
}

func (c *createWriter) WriteHeader(code int) {
	c.register()
	c.ResponseWriter.WriteHeader(code)
}

func (c *createWriter) Write(p []byte) (int, error) {
	c.register()
	return c.ResponseWriter.Write(p)
}

func (c *createWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// register records the session id the SDK just opened for principal, adopted by the server as
// one owner, and returns it with one request (the initialize) counted as active; nil when the
// SDK has no such session (it failed at once) or the server is closing (the session is closed).
func (f *front) register(id, principal string) *httpSession {
	var ss *mcp.ServerSession
	for s := range f.srv.mcp.Sessions() {
		if s.ID() == id {
			ss = s
			break
		}
	}
	if ss == nil {
		return nil
	}
	ended, ok := f.srv.adopt(ss)
	if !ok {
		f.wg.Go(func() { _ = ss.Close() })
		return nil
	}
	hs := &httpSession{id: id, principal: principal, ss: ss, ended: ended, active: 1}
	f.mu.Lock()
	f.sessions[id] = hs
	f.mu.Unlock()
	f.wg.Go(func() {
		<-ended
		f.forget(hs)
	})
	return hs
}

// forget takes the ended session hs out of the front: its id is unknown from then on and its
// idle timer stopped. Both the session's watcher and end call it, so that a DELETE is answered
// only once the session is gone from the table; a second call does nothing.
func (f *front) forget(hs *httpSession) {
	f.mu.Lock()
	if f.sessions[hs.id] == hs {
		delete(f.sessions, hs.id)
	}
	f.mu.Unlock()
	hs.mu.Lock()
	hs.closing = true
	if hs.idle != nil {
		hs.idle.Stop()
	}
	hs.mu.Unlock()
}

// post serves a POST to the live session hs: its messages go to the SDK, once the front has
// noted the requests (for the calls the client may cancel) and the cancellations; while
// draining, a POST carrying a request is refused.
func (f *front) post(w http.ResponseWriter, r *http.Request, hs *httpSession) {
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	msg := peek(body)
	if msg.batch {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, errBatch)
		return
	}
	if msg.request {
		f.mu.Lock()
		if f.draining {
			f.mu.Unlock()
			writeRPCError(w, http.StatusServiceUnavailable, msg.id, codeUnavailable, "dsh is shutting down: no new calls")
			return
		}
		f.calls++
		f.mu.Unlock()
		defer f.callDone()
		id := msg.ID()
		hs.book.open(id)
		// Once the POST is over its response was written or never will be on this stream (a
		// client gone mid-call): either way the request leaves the book.
		defer hs.book.answer(id)
	}
	if msg.cancels.IsValid() {
		hs.book.cancel(msg.cancels)
	}
	if !hs.begin() {
		refuse(w, http.StatusNotFound, "session not found")
		return
	}
	defer f.finish(hs)
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.sdk.ServeHTTP(f.guardWriter(w, &hs.book), r)
}

// callDone counts out a POST carrying a request, and ends the drain's wait for the last one.
func (f *front) callDone() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls--
	if f.draining && f.calls == 0 && f.quiet != nil {
		close(f.quiet)
		f.quiet = nil
	}
}

// readBody reads r's body up to the size limit and within the body timeout; past either, or
// when it cannot be read, it answers the request itself (413 with a JSON-RPC error, 408, 400)
// and reports false.
func (f *front) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	rc := http.NewResponseController(w)
	timeout := cmp.Or(f.cfg.BodyTimeout, httpBodyTimeout)
	_ = rc.SetReadDeadline(time.Now().Add(timeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.cfg.MaxBody))
	_ = rc.SetReadDeadline(time.Time{})
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeBodyTooLarge, fmt.Sprintf("request body exceeds the limit of %d bytes", f.cfg.MaxBody))
		return nil, false
	case errors.Is(err, os.ErrDeadlineExceeded):
		refuse(w, http.StatusRequestTimeout, fmt.Sprintf("the request body did not arrive within %v", timeout))
		return nil, false
	case err != nil:
		refuse(w, http.StatusBadRequest, "cannot read the request body")
		return nil, false
	}
	return body, true
}

// refuse answers a request with status and the one-line text body, and closes the connection
// after: the rest of a request refused unread is never waited for (net/http would read up to
// 256 KiB of it, for as long as the client takes, to keep the connection).
func refuse(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Connection", "close")
	http.Error(w, body, status)
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// begin counts a request of hs as active, stopping its idle timer; it reports false when the
// session is being ended.
func (hs *httpSession) begin() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closing {
		return false
	}
	hs.active++
	if hs.idle != nil {
		hs.idle.Stop()
	}
	return true
}

// finish counts a request of hs out; the last one starts the idle timer.
func (f *front) finish(hs *httpSession) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.active--
	if hs.active > 0 || hs.closing {
		return
	}
	hs.idleSince = time.Now()
	if f.cfg.IdleTimeout <= 0 {
		return
	}
	if hs.idle == nil {
		hs.idle = time.AfterFunc(f.cfg.IdleTimeout, func() { f.expire(hs) })
		return
	}
	hs.idle.Reset(f.cfg.IdleTimeout)
}

// expire ends hs when it is still idle.
func (f *front) expire(hs *httpSession) {
	hs.mu.Lock()
	idle := hs.active == 0 && !hs.closing
	hs.mu.Unlock()
	if idle {
		f.end(hs)
	}
}

// end ends the session hs and returns once it has ended: later requests with its id get 404,
// its calls in flight are cancelled (their commands killed), the SDK's session is closed (which
// waits for the handlers) and the server releases what the session owns (its background tasks,
// its shell). Ending a session twice waits for the first.
func (f *front) end(hs *httpSession) {
	hs.mu.Lock()
	hs.closing = true
	if hs.idle != nil {
		hs.idle.Stop()
	}
	hs.mu.Unlock()
	f.srv.cancelCalls(hs.ss)
	_ = hs.ss.Close()
	<-hs.ended
	f.forget(hs)
}

// drain refuses new sessions and new calls from now on and returns a channel closed once no
// POST carrying a request is in flight.
func (f *front) drain() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.draining = true
	if f.calls == 0 {
		done := make(chan struct{})
		close(done)
		return done
	}
	if f.quiet == nil {
		f.quiet = make(chan struct{})
	}
	return f.quiet
}

// wait waits for the front's own goroutines; call it after the server is closed.
func (f *front) wait() { f.wg.Wait() }

// allowedOrigin reports whether r's Origin header, when it has one, is one this server may be
// called from: the server's own origin (the Host the request was sent to) or a loopback host.
// A browser page from anywhere else (a DNS-rebinding attack) is refused. Requests without an
// Origin (every non-browser client) are allowed: the token guards them.
func allowedOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return isLoopbackHost(u.Hostname())
}

// isLoopbackHost reports whether host (without a port) names the loopback interface.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// peeked is what the front needs to know of a POST body: whether it is a batch, whether it is
// a request (it has an id and a method: a response of the client's has no method) and with
// which id and method, and the id a notifications/cancelled names. A body that is neither a
// batch nor one JSON object (malformed JSON) says nothing else: the SDK answers it.
type peeked struct {
	batch   bool
	request bool
	id      json.RawMessage
	method  string
	cancels jsonrpc.ID
}

// ID returns the request's id as the SDK decodes it.
func (p peeked) ID() jsonrpc.ID {
	var v any
	if json.Unmarshal(p.id, &v) != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

func peek(body []byte) peeked {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		return peeked{batch: true}
	}
	if json.Unmarshal(body, &m) != nil {
		return peeked{}
	}
	p := peeked{method: m.Method}
	if len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null")) && m.Method != "" {
		p.request, p.id = true, m.ID
	}
	if m.Method == "notifications/cancelled" && len(m.ID) == 0 {
		p.cancels, _ = cancelledID(m.Params)
	}
	return p
}

// guardWriter wraps w for the SDK: every write and flush is bounded by the write timeout, and with
// a book, a response to a request the client cancelled is dropped (and every response crosses
// its request out of the book).
func (f *front) guardWriter(w http.ResponseWriter, book *ledger) http.ResponseWriter {
	return &guardedWriter{ResponseWriter: w, rc: http.NewResponseController(w), book: book, timeout: cmp.Or(f.cfg.WriteTimeout, httpWriteTimeout)}
}

type guardedWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	book    *ledger
	timeout time.Duration
}

func (g *guardedWriter) Write(p []byte) (int, error) {
	if g.book != nil {
		if id, ok := responseID(eventData(p)); ok && g.book.answer(id) {
			return len(p), nil // the client cancelled the request: no response
		}
	}
	_ = g.rc.SetWriteDeadline(time.Now().Add(g.timeout))
	defer func() { _ = g.rc.SetWriteDeadline(time.Time{}) }()
	return g.ResponseWriter.Write(p)
}

// FlushError flushes within the write timeout; http.ResponseController finds it.
func (g *guardedWriter) FlushError() error {
	_ = g.rc.SetWriteDeadline(time.Now().Add(g.timeout))
	defer func() { _ = g.rc.SetWriteDeadline(time.Time{}) }()
	return g.rc.Flush()
}

func (g *guardedWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// eventData returns the data of p when it is one server-sent event as the SDK writes it (an
// "event:" and "id:" line, then "data: …" and a blank line), or p itself otherwise (a JSON body).
func eventData(p []byte) []byte {
	if len(p) == 0 || p[0] == '{' {
		return p
	}
	for len(p) > 0 {
		line, rest, _ := bytes.Cut(p, []byte("\n"))
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			return data
		}
		p = rest
	}
	return nil
}

// writeRPCError writes a JSON-RPC error response with the HTTP status, id (nil: null), code and
// message.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// loopbackAddr reports whether the listen address addr (HOST:PORT) binds only the loopback
// interface: an empty host binds every interface.
func loopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	return host != "" && isLoopbackHost(host), nil
}

// serveHTTP runs dsh mcp -http: it serves f on ln until ctx is done (a terminating signal);
// then it drains: new sessions and new calls get 503 at once, the listener stays open so the
// calls in flight can finish or be cancelled, for at most the -drain time; then it closes the
// server, which cancels every call and kills every process, and the HTTP server. It returns
// exitOK, or exitTool when the close failed or the HTTP server could not serve.
func serveHTTP(ctx context.Context, f *front, ln net.Listener, stderr io.Writer) int {
	srv, cfg := f.srv, f.cfg
	hs := &http.Server{
		Handler:           f,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       httpConnIdle,
		ConnState:         f.conns.track,
		ConnContext:       f.conns.context,
		ErrorLog:          slog.NewLogLogger(f.logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() {
		if cfg.TLSCert != "" {
			served <- hs.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey)
		} else {
			served <- hs.Serve(ln)
		}
	}()
	var serveErr error
	select {
	case <-ctx.Done():
		timer := time.NewTimer(cfg.Drain)
		select {
		case <-f.drain():
		case <-timer.C:
		case serveErr = <-served:
		}
		timer.Stop()
	case serveErr = <-served:
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.close(closeCtx) // cancels every call, ends every session, kills every process
	f.wait()
	shutCtx, cancelShut := context.WithTimeout(context.Background(), time.Second)
	defer cancelShut()
	if hs.Shutdown(shutCtx) != nil {
		_ = hs.Close()
	}
	if serveErr == nil {
		serveErr = <-served
	}
	if !errors.Is(serveErr, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "dsh mcp: http: %v\n", serveErr)
		return exitTool
	}
	return shutdownStatus(stderr, err)
}

// register adds the HTTP transport's flags to fs.
func (c *httpConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "http", "", "serve MCP over streamable HTTP on `ADDR` (HOST:PORT; loopback unless TLS is set) instead of stdio")
	fs.StringVar(&c.TokenFile, "token-file", "", "bearer tokens for -http, one per line, `FILE` of mode 0600 (default: dsh/tokens in the user config directory; created with a new token when missing)")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "serve -http over TLS with the certificate in `FILE` (PEM; needs -tls-key)")
	fs.StringVar(&c.TLSKey, "tls-key", "", "the private key of -tls-cert, in `FILE` (PEM)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", defaultIdleTimeout, "end an HTTP session after this long without a request")
	fs.DurationVar(&c.Drain, "drain", defaultDrain, "on SIGTERM or SIGINT, how long the HTTP calls in flight may still finish")
	fs.IntVar(&c.MaxSessions, "max-sessions", defaultMaxSessions, "most HTTP sessions at once")
	fs.IntVar(&c.MaxPrincipalSessions, "max-principal-sessions", 0, "most HTTP sessions of one principal (token name) at once, at most -max-sessions (default: an equal share of -max-sessions for each principal of the token file)")
	fs.Int64Var(&c.MaxBody, "max-body", defaultMaxBody, "largest HTTP request body, in bytes")
	fs.IntVar(&c.MaxCalls, "max-calls", defaultMaxCalls, "most calls one HTTP session runs at once")
}

// httpOnly are the flags that mean something only with -http.
var httpOnly = []string{"token-file", "tls-cert", "tls-key", "idle-timeout", "drain", "max-sessions", "max-principal-sessions", "max-body", "max-calls"}

// check validates the HTTP settings parsed by fs and fills the default token file. It returns
// an error naming the flag, or the non-loopback address served without TLS.
func (c *httpConfig) check(fs *flag.FlagSet) error {
	if c.Addr == "" {
		var stray []string
		fs.Visit(func(fl *flag.Flag) {
			if slices.Contains(httpOnly, fl.Name) {
				stray = append(stray, "-"+fl.Name)
			}
		})
		if len(stray) > 0 {
			return fmt.Errorf("%s only apply with -http", strings.Join(stray, ", "))
		}
		return nil
	}
	if fs.Lookup("finish-at-eof") != nil {
		var stdio bool
		fs.Visit(func(fl *flag.Flag) { stdio = stdio || fl.Name == "finish-at-eof" })
		if stdio {
			return errors.New("-finish-at-eof applies to stdio, not -http")
		}
	}
	loopback, err := loopbackAddr(c.Addr)
	switch {
	case err != nil:
		return fmt.Errorf("-http %s: want HOST:PORT: %v", c.Addr, err)
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("-tls-cert and -tls-key go together")
	case !loopback && c.TLSCert == "":
		return fmt.Errorf("-http %s is not a loopback address: serving other machines needs TLS (-tls-cert and -tls-key), or bind 127.0.0.1", c.Addr)
	case c.IdleTimeout <= 0:
		return fmt.Errorf("-idle-timeout must be positive, got %v", c.IdleTimeout)
	case c.Drain < 0:
		return fmt.Errorf("-drain must not be negative, got %v", c.Drain)
	case c.MaxSessions <= 0:
		return fmt.Errorf("-max-sessions must be positive, got %d", c.MaxSessions)
	case c.MaxPrincipalSessions < 0:
		return fmt.Errorf("-max-principal-sessions must not be negative, got %d", c.MaxPrincipalSessions)
	case c.MaxBody <= 0:
		return fmt.Errorf("-max-body must be positive, got %d", c.MaxBody)
	case c.MaxCalls <= 0:
		return fmt.Errorf("-max-calls must be positive, got %d", c.MaxCalls)
	}
	c.MaxPrincipalSessions = min(c.MaxPrincipalSessions, c.MaxSessions)
	if c.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
			return fmt.Errorf("-tls-cert %s, -tls-key %s: %v", c.TLSCert, c.TLSKey, err)
		}
	}
	if c.TokenFile == "" {
		path, err := defaultTokenFile()
		if err != nil {
			return err
		}
		c.TokenFile = path
	}
	return nil
}

// runHTTP is dsh mcp -http once the flags are checked and dsh runs under its supervisor: it
// listens on hc.Addr, says where on stderr, and serves until ctx is done (see serveHTTP).
func runHTTP(ctx context.Context, cfg config, hc httpConfig, ts *tokenSet, stderr io.Writer) int {
	srv, err := newServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "dsh mcp: %v\n", err)
		return exitUsage
	}
	ln, err := net.Listen("tcp", hc.Addr)
	if err != nil {
		fmt.Fprintf(stderr, "dsh mcp: %v\n", err)
		_ = srv.close(context.Background())
		return exitUsage
	}
	scheme := "http"
	if hc.TLSCert != "" {
		scheme = "https"
	}
	fmt.Fprintf(stderr, "dsh mcp: serving MCP at %s://%s%s\n", scheme, ln.Addr(), mcpPath)
	return serveHTTP(ctx, newFront(srv, ts, hc, cfg.Logger), ln, stderr)
}
