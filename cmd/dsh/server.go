package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/tools"
)

// codeTooManyCalls is the JSON-RPC error code of a call past server.maxCalls (implementation-
// defined server error range).
const codeTooManyCalls = -32001

// errServerClosed is returned by [server.connect] once [server.close] has begun.
var errServerClosed = errors.New("dsh: server is closed")

// server is the MCP server: the tools of one toolset behind the official SDK, with one owner
// per MCP session.
//
// Each session gets a random owner token on connection. Its background tasks and its
// persistent shell belong to that token, so another session can neither read nor kill them.
// Completion notices for the session are queued and prefixed to its next tool result. When the
// session ends (the client disconnects, or close), what it still runs is killed.
//
// Methods are safe for concurrent use.
type server struct {
	mcp    *mcp.Server
	tools  *toolset
	logger *slog.Logger

	// life is cancelled when close begins: every call in flight derives from it, so a long
	// foreground command stops instead of holding up the shutdown.
	life   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex // guards sessions, owners and closed
	sessions map[*mcp.ServerSession]*session
	owners   map[string]*session
	closed   bool
	watchers sync.WaitGroup // one per connected session, until its cleanup is done

	closeDone chan struct{} // closed when the first close returns, with closeErr set
	closeErr  error

	// maxCalls bounds the calls one session runs at once (0: no bound); a call past it is a
	// JSON-RPC error. Set before the first session connects.
	maxCalls int
}

// session is one MCP session's state: its owner token, the agent the tools see, and the
// notices waiting for its next result.
type session struct {
	owner string
	agent *tools.Agent
	calls atomic.Uint64
	// life is cancelled when the session is ended on purpose (DELETE, idle timeout over HTTP)
	// or has ended: every call of the session derives from it.
	life     context.Context
	stop     context.CancelFunc
	inflight atomic.Int64 // calls running, against server.maxCalls

	mu      sync.Mutex
	notices []tools.Notice
	ended   bool
}

// newServer returns an MCP server over the tools cfg selects, or an error when the backend
// refuses cfg. The caller must call close.
func newServer(cfg config) (*server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &server{
		logger:    cfg.Logger,
		sessions:  map[*mcp.ServerSession]*session{},
		owners:    map[string]*session{},
		closeDone: make(chan struct{}),
	}
	ts, err := newToolset(cfg, s.agentFor)
	if err != nil {
		return nil, err
	}
	s.tools = ts
	ts.reg.SetApprover(newApprover()) // asks go to the calling session's user (see policy.go)
	s.life, s.cancel = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "dsh", Title: "dsh shell tools", Version: version()}, &mcp.ServerOptions{
		Instructions: ts.hint,
		Logger:       cfg.Logger,
		// Tools only: no logging capability (deprecated as of the 2026-07-28 protocol); notices
		// travel in tool results. The tool list follows the registry, and the SDK tells connected
		// sessions when it changes.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		GetSessionID: rand.Text, // over HTTP: 128 random bits, the session's address
	})
	ts.reg.OnChange(s.toolChanged) // before the first tools, so that no change falls between
	for _, t := range ts.mcpTools() {
		s.mcp.AddTool(t, s.handler(t.Name))
	}
	return s, nil
}

// toolChanged mirrors a change to the registry into the MCP server's tool list; the SDK then
// sends notifications/tools/list_changed to the connected sessions. It reads the registry
// rather than trusting c, so changes that reach it out of order still leave the lists equal.
func (s *server) toolChanged(c tools.Change) {
	if t, ok := s.tools.reg.Lookup(c.Tool); ok {
		s.mcp.AddTool(mcpTool(t), s.handler(t.Name))
		return
	}
	s.mcp.RemoveTools(c.Tool)
}

// version returns the module version dsh was built from, or "devel".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// connect serves one MCP session over t (a stdio pipe, an in-memory transport) and returns it.
// The session ends when the client disconnects or close runs; then its tasks and its shell are
// killed. It returns errServerClosed after close, or the SDK's error when t cannot connect.
func (s *server) connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errServerClosed
	}
	s.watchers.Add(1)
	s.mu.Unlock()
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		s.watchers.Done()
		return nil, fmt.Errorf("dsh: connect: %w", err)
	}
	s.watch(ss, nil)
	return ss, nil
}

// adopt makes ss, a session the SDK connected itself (the streamable HTTP handler), one of the
// server's sessions exactly as connect does, and returns a channel closed once it has ended
// and what it owned is released. It returns false once close has begun; the caller must then
// close ss itself.
func (s *server) adopt(ss *mcp.ServerSession) (<-chan struct{}, bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false
	}
	s.watchers.Add(1)
	s.mu.Unlock()
	ended := make(chan struct{})
	s.watch(ss, ended)
	return ended, true
}

// watch records ss and ends it (see end) once it is down; ended, when not nil, is closed after.
// The caller has counted ss in s.watchers.
func (s *server) watch(ss *mcp.ServerSession, ended chan struct{}) {
	s.sessionOf(ss)
	s.mu.Lock()
	closed := s.closed // close began after the caller's check and may have missed ss
	s.mu.Unlock()
	go func() {
		defer s.watchers.Done()
		if ended != nil {
			defer close(ended)
		}
		if closed {
			_ = ss.Close()
		}
		_ = ss.Wait() // returns once the connection is down and every handler has returned
		s.end(ss)
	}()
}

// cancelCalls cancels every call of the session ss in flight and every later one: the
// session is being ended.
func (s *server) cancelCalls(ss *mcp.ServerSession) {
	s.mu.Lock()
	st := s.sessions[ss]
	s.mu.Unlock()
	if st != nil {
		st.stop()
	}
}

// busy reports whether the session ss runs anything: a call, or a background task of its owner.
func (s *server) busy(ss *mcp.ServerSession) bool {
	s.mu.Lock()
	st := s.sessions[ss]
	s.mu.Unlock()
	return st != nil && (st.inflight.Load() > 0 || s.tools.running(st.owner))
}

// cancelAllCalls cancels every call in flight, and every later one, of every session: the
// client of a stdio session is gone.
func (s *server) cancelAllCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.sessions {
		st.stop()
	}
}

// sessionOf returns the state of ss, creating it (with a fresh owner token) on first use: a
// request may be handled before connect has recorded the session.
func (s *server) sessionOf(ss *mcp.ServerSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.sessions[ss]; st != nil {
		return st
	}
	st := &session{owner: newOwner()}
	st.life, st.stop = context.WithCancel(context.Background())
	// The session id commands see (DSH_SESSION_ID) is a second random value: the owner token is
	// the session's capability and never leaves the server.
	st.agent = &tools.Agent{Owner: st.owner, Session: newSessionID(), Dir: s.tools.dir, Inject: st.inject}
	s.sessions[ss] = st
	s.owners[st.owner] = st
	return st
}

// newOwner returns a random owner token: 128 bits, so no client can guess another's.
func newOwner() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "mcp-" + hex.EncodeToString(b[:])
}

// newSessionID returns a random session id for DSH_SESSION_ID, unrelated to the owner token.
func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "dsh-" + hex.EncodeToString(b[:])
}

// agentFor finds the live session of an owner token for tool-bash's completion notices.
func (s *server) agentFor(owner string) (*tools.Agent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.owners[owner]
	if st == nil {
		return nil, false
	}
	return st.agent, true
}

// end forgets the session ss and kills what its owner still runs.
func (s *server) end(ss *mcp.ServerSession) {
	s.mu.Lock()
	st := s.sessions[ss]
	delete(s.sessions, ss)
	if st != nil {
		delete(s.owners, st.owner)
	}
	s.mu.Unlock()
	if st == nil {
		return
	}
	st.stop()
	st.mu.Lock()
	st.ended = true
	st.notices = nil
	st.mu.Unlock()
	// Every handler of ss has returned (see connect), so nothing of the owner's is in flight.
	if err := s.tools.provider.Release(st.owner); err != nil {
		s.logger.Warn("dsh: session cleanup", "owner", st.owner, "error", err)
	}
	s.tools.forget(st.owner)
}

// inject queues notice for the session's next tool result; it fails with tools.ErrAgentGone
// once the session has ended.
func (st *session) inject(n tools.Notice) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return fmt.Errorf("session %s: %w", st.owner, tools.ErrAgentGone)
	}
	st.notices = append(st.notices, n)
	return nil
}

// drain empties the queue and returns the notices in it that are not stale (tools.Notice.Stale).
func (st *session) drain() []tools.Notice {
	st.mu.Lock()
	queued := st.notices
	st.notices = nil
	st.mu.Unlock()
	fresh := queued[:0]
	for _, n := range queued {
		if n.Stale == nil || !n.Stale() {
			fresh = append(fresh, n)
		}
	}
	return fresh
}

// unread puts notices taken by drain back at the head of the queue, for a call that returned no
// result to carry them.
func (st *session) unread(ns []tools.Notice) {
	if len(ns) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.notices = append(ns, st.notices...)
}

// handler returns the MCP handler of the tool named name. It runs the call through the
// registry with the session as the calling agent; the call stops when the client cancels the
// request, disconnects, or the server closes. The result never is a protocol error: every
// failure is an isError result the model reads, and the notices queued before the call come first.
// When the policy asks and the client can ask its user, the result is that question instead
// (see policy.go); the client sends the call again with the answer.
func (s *server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st := s.sessionOf(req.Session)
		if n := st.inflight.Add(1); s.maxCalls > 0 && n > int64(s.maxCalls) {
			st.inflight.Add(-1)
			return nil, &jsonrpc.Error{Code: codeTooManyCalls, Message: fmt.Sprintf("too many calls in flight in this session (limit %d); wait for one to finish", s.maxCalls)}
		}
		defer st.inflight.Add(-1)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(s.life, cancel)
		defer stop()
		stopSession := context.AfterFunc(st.life, cancel)
		defer stopSession()
		ctx, ask := withAsk(ctx, req)
		ctx, stopProgress := s.watchProgress(ctx, req)
		defer stopProgress() // before the handler returns: no notification after the result
		// The notices queued before the call began come with its result; a task that ends while
		// the call runs (the one it starts, say) is told in the next result, so a result never
		// depends on how quickly a task finishes.
		notices := st.drain()
		res := s.tools.reg.Execute(ctx, tools.Call{
			ID:    strconv.FormatUint(st.calls.Add(1), 10),
			Name:  name,
			Args:  req.Params.Arguments,
			Agent: st.agent,
		})
		if q, ok := ask.question(); ok {
			st.unread(notices)
			return q, nil
		}
		return toMCP(notices, res), nil
	}
}

// toMCP converts res to an MCP result, with the notices (if any) as a first text block of their
// own, one per line, and res's facts as the structured content.
func toMCP(notices []tools.Notice, res tools.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, Content: make([]mcp.Content, 0, len(res.Content)+1)}
	if len(notices) > 0 {
		var b strings.Builder
		for _, n := range notices {
			b.WriteString(n.Text)
			b.WriteByte('\n')
		}
		out.Content = append(out.Content, &mcp.TextContent{Text: b.String()})
	}
	for _, c := range res.Content {
		out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
	}
	if len(res.Structured) > 0 {
		// The facts the text was rendered from (exit code, signal, timeout, spill files), for
		// clients that must not parse text.
		out.StructuredContent = json.RawMessage(res.Structured)
	}
	return out
}

// close ends every session and kills every process the tools started: calls in flight are
// cancelled, sessions are closed and cleaned up, then the backend is closed (ctx bounds the
// executor's grace period). Later connects fail. It returns the backend's close error; a second
// call waits for the first and returns the same.
func (s *server) close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.closeDone
		return s.closeErr
	}
	s.closed = true
	defer close(s.closeDone)
	conns := make([]*mcp.ServerSession, 0, len(s.sessions))
	for ss := range s.sessions {
		conns = append(conns, ss)
	}
	s.mu.Unlock()
	s.cancel()
	var wg sync.WaitGroup
	for _, ss := range conns {
		wg.Go(func() { _ = ss.Close() })
	}
	wg.Wait()
	s.watchers.Wait()
	s.closeErr = s.tools.close(ctx)
	return s.closeErr
}
