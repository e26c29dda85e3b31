package main

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tools"
)

// progressInterval is the shortest time between two progress notifications of one call.
const progressInterval = bash.ProgressInterval

// progress sends a call's progress to its client as notifications/progress, under the progress
// token the call carried. It applies the rules itself, whatever the tool does: at most one
// notification every progressInterval, only when the output grew, none once stop has
// returned; the message is redacted as results are.
type progress struct {
	ctx    context.Context
	ss     *mcp.ServerSession
	token  any
	redact func(string) string // nil: nothing to redact

	mu    sync.Mutex // held while a notification is sent, so stop waits for it
	done  bool
	last  time.Time
	bytes int64
}

// watchProgress returns ctx carrying a progress reporter for req when req asked for progress
// (it carries a progress token), and the stop function the handler must call before it
// returns. Without a token it returns ctx unchanged: the tools then watch nothing.
func (s *server) watchProgress(ctx context.Context, req *mcp.CallToolRequest) (context.Context, func()) {
	if req.Params == nil || req.Session == nil {
		return ctx, func() {}
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return ctx, func() {}
	}
	p := &progress{ctx: ctx, ss: req.Session, token: token, redact: s.tools.redact}
	return tools.WithProgress(ctx, p.report), p.stop
}

// report sends r when the rules allow it.
func (p *progress) report(r tools.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.done || r.Bytes <= p.bytes || (!p.last.IsZero() && now.Sub(p.last) < progressInterval) {
		return
	}
	p.last, p.bytes = now, r.Bytes
	msg := r.Message
	if p.redact != nil {
		msg = p.redact(msg)
	}
	// The call's context: over HTTP the SDK sends it on the call's own response stream. A send
	// that fails (the client is gone) is not the call's failure.
	_ = p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{
		ProgressToken: p.token,
		Progress:      float64(r.Bytes),
		Message:       msg,
	})
}

// stop ends the reports: it returns once no notification is being sent, and none is sent after.
func (p *progress) stop() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}
