package conn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Pool holds the connections to one address: dialed lazily, redialed
// with backoff after failures. It is safe for concurrent use.
type Pool struct {
	addr  string
	cfg   *Config
	next  atomic.Uint32
	slots []connSlot
	// closed is Close's error: once set, Get dials no more (a closed
	// client's endpoints still hold their pools).
	closed atomic.Pointer[error]
}

type connSlot struct {
	live    atomic.Pointer[Conn] // conn, for lock-free reads
	mu      sync.Mutex
	conn    *Conn
	dialing chan struct{} // closed when the dial in progress ends
	lastErr error
	retryAt time.Time
	backoff time.Duration
}

// NewPool returns the pool of addr; it dials nothing yet.
func NewPool(addr string, cfg *Config) *Pool {
	return &Pool{addr: addr, cfg: cfg, slots: make([]connSlot, max(cfg.PoolSize, 1))}
}

const (
	minRedial = 50 * time.Millisecond
	maxRedial = 5 * time.Second
)

// Get returns a usable connection, dialing if needed. While a redial is
// backing off it fails at once, so the caller can try another instance.
// Its errors are *NotSent.
func (p *Pool) Get(ctx context.Context) (*Conn, error) {
	s := &p.slots[0]
	if len(p.slots) > 1 {
		s = &p.slots[p.next.Add(1)%uint32(len(p.slots))]
	}
	if c := s.live.Load(); c != nil && c.usable() && !c.closedWhileUnread() {
		return c, nil
	}
	for {
		s.mu.Lock()
		if c := s.conn; c != nil && c.usable() {
			s.mu.Unlock()
			return c, nil
		}
		if err := p.closed.Load(); err != nil {
			s.mu.Unlock()
			return nil, &NotSent{Err: *err}
		}
		if s.dialing != nil {
			ch := s.dialing
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, &NotSent{Err: ctxError(ctx.Err(), "connect to "+p.addr)}
			}
		}
		if now := p.cfg.Now(); now.Before(s.retryAt) {
			err, wait := s.lastErr, s.retryAt.Sub(now)
			s.mu.Unlock()
			return nil, &NotSent{Err: errorf(Unavailable, "connect to %s: %v (next try in %v)", p.addr, err, wait.Round(time.Millisecond))}
		}
		ch := make(chan struct{})
		s.dialing = ch
		s.mu.Unlock()

		c, err := dial(ctx, p.addr, p.cfg)

		s.mu.Lock()
		s.dialing = nil
		close(ch)
		if err != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
			// The caller gave up, or its deadline passed during the
			// handshake: that says nothing about the address, so no
			// backoff for the callers after it.
			s.mu.Unlock()
			return nil, &NotSent{Err: ctxError(cmp.Or(ctx.Err(), context.DeadlineExceeded), "connect to "+p.addr)}
		}
		if err != nil {
			s.backoff = min(max(2*s.backoff, minRedial), maxRedial)
			s.lastErr, s.retryAt = err, p.cfg.Now().Add(s.backoff)
			s.mu.Unlock()
			return nil, &NotSent{Err: &Error{Code: Unavailable, Message: fmt.Sprintf("connect to %s: %v", p.addr, err), Cause: err}}
		}
		if cerr := p.closed.Load(); cerr != nil {
			// Closed while dialing: Close did not see this connection.
			s.mu.Unlock()
			c.fail(*cerr)
			return nil, &NotSent{Err: *cerr}
		}
		if old := s.conn; old != nil {
			old.retire()
			if old.retiredIdle() {
				old.fail(errorf(Unavailable, "connection to %s replaced", p.addr))
			}
		}
		s.conn, s.backoff, s.lastErr = c, 0, nil
		s.live.Store(c)
		s.mu.Unlock()
		return c, nil
	}
}

// RedialNow ends the redial backoff: the next Get dials at once. It is
// for an address whose server is known to be back (it registered again),
// which failed dials while it was down must not keep refusing.
func (p *Pool) RedialNow() {
	for i := range p.slots {
		s := &p.slots[i]
		s.mu.Lock()
		s.retryAt, s.backoff = time.Time{}, 0
		s.mu.Unlock()
	}
}

// Each calls f for every live connection.
func (p *Pool) Each(f func(*Conn)) {
	for i := range p.slots {
		s := &p.slots[i]
		s.mu.Lock()
		c := s.conn
		s.mu.Unlock()
		if c != nil {
			f(c)
		}
	}
}

// Close fails every connection of the pool with err; Get fails with err
// from now on instead of dialing again.
func (p *Pool) Close(err error) {
	p.closed.CompareAndSwap(nil, &err)
	p.Each(func(c *Conn) { c.fail(err) })
}

// Open returns how many of the pool's connections are open.
func (p *Pool) Open() int {
	n := 0
	p.Each(func(c *Conn) {
		if c.usable() {
			n++
		}
	})
	return n
}
