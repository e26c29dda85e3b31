package main

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// connGuard bounds the HTTP connections that have not yet sent a request with a valid token:
// past its maximum, the oldest of them is closed. A client that opens connections and sends
// nothing (or headers without a token, slowly) can then hold at most that many descriptors,
// each for at most the server's header timeout, and a client with a token, whose first request
// arrives at once, gets through. Methods are safe for concurrent use.
type connGuard struct {
	max int

	mu      sync.Mutex
	next    uint64
	pending map[net.Conn]uint64 // by arrival
}

// connKey is the context key of a request's connection (see connGuard.context).
type connKey struct{}

// connInfo is what the front knows of one connection.
type connInfo struct {
	conn net.Conn
	once sync.Once
	own  bool // made by one of dsh's own commands
}

func newConnGuard(max int) *connGuard {
	return &connGuard{max: max, pending: map[net.Conn]uint64{}}
}

// context is the http.Server's ConnContext: it records c in the context of its requests.
func (g *connGuard) context(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &connInfo{conn: c})
}

// fromOwnCommand reports whether the connection of the request with context ctx was made by
// one of dsh's own commands (see fromOwnCommand); it looks once per connection.
func (g *connGuard) fromOwnCommand(ctx context.Context) bool {
	ci, ok := ctx.Value(connKey{}).(*connInfo)
	if !ok {
		return false
	}
	ci.once.Do(func() { ci.own = fromOwnCommand(ci.conn.LocalAddr(), ci.conn.RemoteAddr()) })
	return ci.own
}

// track is the http.Server's ConnState hook: a new connection is pending, a closed one is
// forgotten; a new one past the maximum closes the oldest pending.
func (g *connGuard) track(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		g.mu.Lock()
		g.pending[c] = g.next
		g.next++
		var oldest net.Conn
		if len(g.pending) > g.max {
			oldest = g.oldestLocked()
			delete(g.pending, oldest)
		}
		g.mu.Unlock()
		if oldest != nil {
			_ = oldest.Close()
		}
	case http.StateClosed, http.StateHijacked:
		g.mu.Lock()
		delete(g.pending, c)
		g.mu.Unlock()
	}
}

// oldestLocked returns the pending connection that arrived first.
func (g *connGuard) oldestLocked() net.Conn {
	var oldest net.Conn
	var seq uint64
	for c, n := range g.pending {
		if oldest == nil || n < seq {
			oldest, seq = c, n
		}
	}
	return oldest
}

// authenticated takes the connection of a request with a valid token (ctx is the request's)
// out of the pending ones.
func (g *connGuard) authenticated(ctx context.Context) {
	if ci, ok := ctx.Value(connKey{}).(*connInfo); ok {
		g.mu.Lock()
		delete(g.pending, ci.conn)
		g.mu.Unlock()
	}
}

// pendingCount returns how many connections are pending.
func (g *connGuard) pendingCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}
