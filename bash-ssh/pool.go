package bashssh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// errPoolClosed is returned by the pool once the executor has closed it.
var errPoolClosed = errors.New("connection pool closed")

// conn is one SSH connection and its session accounting.
type conn struct {
	client *ssh.Client
	dead   chan struct{} // closed once the connection is gone

	errMu sync.Mutex
	err   error // why the connection is gone

	// Guarded by pool.mu.
	inUse   int  // sessions open (counted from open until the server closes them)
	strikes int  // sessions the server refused in a row
	full    bool // the server keeps refusing sessions: open no more on this connection
}

// fail records why c is going away; the first reason wins.
func (c *conn) fail(err error) {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	if c.err == nil {
		c.err = err
	}
}

// lostErr returns why c is gone.
func (c *conn) lostErr() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	if c.err == nil {
		return errors.New("connection closed")
	}
	return c.err
}

func (c *conn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// alive asks the server for a reply, to tell a session the server ended from one a lost connection
// ended. It returns false when the connection is gone.
func (c *conn) alive() bool {
	if c.isDead() {
		return false
	}
	_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
	return err == nil
}

// pool hands out sessions over a small set of connections to one host: up to maxSessions per
// connection (one kept for control sessions), up to maxConns connections, dialled on demand. A lost
// connection is dropped at once; the next session dials a new one.
type pool struct {
	maxSessions int
	maxConns    int
	keepalive   time.Duration
	dial        func(ctx context.Context) (*ssh.Client, error)
	onConnect   func() // called (on its own goroutine) after a new connection is made
	wg          *sync.WaitGroup

	refusals atomic.Uint64 // sessions the server refused
	peak     atomic.Int64  // the most sessions ever open on one connection

	mu      sync.Mutex
	conns   []*conn
	dialing int
	closed  bool
	changed chan struct{} // closed and replaced whenever capacity may have become free
}

func newPool(maxSessions, maxConns int, keepalive time.Duration, dial func(context.Context) (*ssh.Client, error), onConnect func(), wg *sync.WaitGroup) *pool {
	return &pool{maxSessions: maxSessions, maxConns: maxConns, keepalive: keepalive, dial: dial,
		onConnect: onConnect, wg: wg, changed: make(chan struct{})}
}

// notify wakes every waiter. Call with mu held.
func (p *pool) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// acquire reserves a session slot and returns its connection. A control slot may use the last
// session of a connection, which command sessions leave free, and may dial one connection beyond
// maxConns, so that stopping a command never waits for commands to end. It waits while every
// connection is busy, and returns an error when ctx is done, when dialling fails, or after close.
func (p *pool) acquire(ctx context.Context, control bool) (*conn, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, errPoolClosed
		}
		for _, c := range p.conns {
			limit := p.maxSessions
			if !control {
				limit--
			}
			if !c.full && !c.isDead() && c.inUse < limit {
				c.inUse++
				p.record(c)
				p.mu.Unlock()
				return c, nil
			}
		}
		maxConns := p.maxConns
		if control {
			maxConns++
		}
		if len(p.conns)+p.dialing < maxConns {
			p.dialing++
			p.mu.Unlock()
			return p.connect(ctx)
		}
		wait := p.changed
		p.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// existing reserves a control slot on a connection that is already up, without dialling or
// waiting. It returns nil when there is none.
func (p *pool) existing() *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	for _, c := range p.conns {
		if !c.full && !c.isDead() && c.inUse < p.maxSessions {
			c.inUse++
			p.record(c)
			return c
		}
	}
	return nil
}

// hasLive reports whether a connection is up.
func (p *pool) hasLive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if !c.isDead() {
			return true
		}
	}
	return false
}

// connect dials a connection with one slot taken. The caller has counted it in dialing.
func (p *pool) connect(ctx context.Context) (*conn, error) {
	client, err := p.dial(ctx)
	p.mu.Lock()
	p.dialing--
	if err != nil {
		p.notify()
		p.mu.Unlock()
		return nil, err
	}
	if p.closed {
		p.mu.Unlock()
		client.Close()
		return nil, errPoolClosed
	}
	c := &conn{client: client, dead: make(chan struct{}), inUse: 1}
	p.conns = append(p.conns, c)
	p.notify()
	p.mu.Unlock()

	p.wg.Add(1)
	go p.watch(c)
	if p.keepalive > 0 {
		p.wg.Add(1)
		go p.probe(c)
	}
	if p.onConnect != nil {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.onConnect()
		}()
	}
	return c, nil
}

// record notes c's session count in the pool's peak. Call with mu held.
func (p *pool) record(c *conn) {
	if n := int64(c.inUse); n > p.peak.Load() {
		p.peak.Store(n)
	}
}

// opened notes that the server accepted a session on c.
func (p *pool) opened(c *conn) {
	p.mu.Lock()
	c.strikes = 0
	p.mu.Unlock()
}

// release returns a slot of c.
func (p *pool) release(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.inUse--
	if c.inUse == 0 && (c.full || len(p.conns) > p.maxConns) {
		c.client.Close() // watch removes it
	}
	p.notify()
}

// refusalsToFull is how many sessions in a row the server must refuse before a connection is
// taken to be at the server's own limit. A single refusal is usually a race: sshd frees a closed
// session only after it has read the messages that follow the close, so a session opened right
// after another one closed can be refused although the count is right.
const refusalsToFull = 3

// refused notes that the server refused a session on c and returns the slot. After
// refusalsToFull refusals in a row, c takes no more sessions and is closed once idle, so that a
// new connection can take its place.
func (p *pool) refused(c *conn) {
	p.refusals.Add(1)
	p.mu.Lock()
	c.strikes++
	if c.strikes >= refusalsToFull {
		c.full = true
	}
	p.mu.Unlock()
	p.release(c)
}

// watch waits for c's end and drops it from the pool.
func (p *pool) watch(c *conn) {
	defer p.wg.Done()
	err := c.client.Wait()
	if err == nil || errors.Is(err, io.EOF) {
		err = errors.New("the server closed the connection")
	}
	c.fail(err)
	close(c.dead)
	p.mu.Lock()
	for i, x := range p.conns {
		if x == c {
			p.conns = append(p.conns[:i:i], p.conns[i+1:]...)
			break
		}
	}
	p.notify()
	p.mu.Unlock()
}

// probe sends a keepalive every interval and closes c when one gets no answer within the next
// interval: a connection whose peer vanished without a word is detected and dropped.
func (p *pool) probe(c *conn) {
	defer p.wg.Done()
	tick := time.NewTicker(p.keepalive)
	defer tick.Stop()
	for {
		select {
		case <-c.dead:
			return
		case <-tick.C:
		}
		reply := make(chan error, 1)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
			reply <- err
		}()
		timer := time.NewTimer(p.keepalive)
		select {
		case err := <-reply:
			timer.Stop()
			if err != nil {
				return
			}
		case <-timer.C:
			c.fail(fmt.Errorf("no answer to a keepalive within %v", p.keepalive))
			c.client.Close()
			return
		case <-c.dead:
			timer.Stop()
			return
		}
	}
}

// close closes every connection; sessions on them end. Later acquires fail.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	conns := append([]*conn(nil), p.conns...)
	p.notify()
	p.mu.Unlock()
	for _, c := range conns {
		c.fail(errPoolClosed)
		c.client.Close()
	}
}
