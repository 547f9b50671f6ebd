package rt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/wire"
)

// clientConn is one multiplexed connection to a provider. Calls register in
// pending under a fresh request id, write their frame through the batching
// writer, and then either read the connection themselves or wait on their
// own channel for the goroutine that reads it (see clientread.go), which
// decodes each response straight into its caller's message. No goroutine
// is started per call.
type clientConn struct {
	addr string
	nc   net.Conn
	w    *connWriter
	o    *options
	comp bool   // lz4 negotiated
	max  uint32 // the server's max frame size

	mu       sync.Mutex
	pending  map[uint32]*callState
	nextID   uint32
	inFlight loneAvg // calls pending when one is sent
	err      error   // set once the connection is dead
	goaway   bool    // the server is shutting down: no new calls
	// unusable is set with err or goaway, for lock-free reads.
	unusable atomic.Bool

	frames   atomic.Uint64 // frames read, for the heartbeat
	hbFrames uint64        // frames at the heartbeat's last run; its own
	hbSince  time.Time     // when the heartbeat last saw new frames; its own
	pinged   atomic.Bool
	done     chan struct{}

	// The read role (see clientread.go).
	r         *wire.Reader  // read by the role's holder only
	reading   bool          // a goroutine holds the role; guarded by mu
	readHeld  atomic.Bool   // reading, for lock-free reads
	peek      *peeker       // tells a close by the server while unread
	leads     uint64        // calls that read for themselves; guarded by mu
	seenLeads uint64        // leads at the idle watch's last run; guarded by mu
	wake      chan struct{} // hands the role to the background goroutine; capacity 1
	rdl       time.Time     // the read deadline last set; the holder's
	rdlSet    bool          // rdl is the connection's read deadline
	interrupt func()        // makes a blocked read return (for context.AfterFunc)
	idle      *time.Timer   // runs idleWatch
	watching  atomic.Bool   // idle is running
}

// dialConn connects to addr and exchanges prefaces.
func dialConn(ctx context.Context, addr string, o *options) (*clientConn, error) {
	nc, err := o.dialer(ctx, addr)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(prefaceTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = nc.SetDeadline(deadline)
	mine := localPreface(o)
	if _, err := nc.Write(wire.AppendPreface(nil, mine)); err != nil {
		nc.Close()
		return nil, err
	}
	peer, err := wire.ReadPreface(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	c := &clientConn{
		addr: addr, nc: nc, w: newConnWriter(nc), o: o,
		comp:    mine.Negotiate(peer).Has(wire.FeatureLZ4),
		max:     peer.MaxFrameSize,
		pending: make(map[uint32]*callState),
		done:    make(chan struct{}),
		r:       wire.NewReader(nc, wire.ReaderOptions{MaxFrameSize: o.maxFrame, Features: mine.Negotiate(peer)}),
		wake:    make(chan struct{}, 1),
		peek:    newPeeker(nc),
	}
	c.interrupt = func() { _ = nc.SetReadDeadline(time.Unix(1, 0)) } // in the past
	c.idle = time.AfterFunc(time.Hour, c.idleWatch)
	c.idle.Stop()
	go c.w.loop()
	go c.background()
	c.watchIdle()
	return c, nil
}

// usable reports whether new calls may use the connection.
func (c *clientConn) usable() bool {
	return !c.unusable.Load()
}

// lostWith reports whether err is the failure of the whole connection
// (which every call in flight on it received), not of one call.
func (c *clientConn) lostWith(err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil && err == c.err
}

// failure returns the error the connection failed with, nil while it
// has not.
func (c *clientConn) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// retire stops new calls on the connection; calls in flight finish.
func (c *clientConn) retire() {
	c.mu.Lock()
	c.goaway = true
	c.unusable.Store(true)
	c.mu.Unlock()
}

// retiredIdle reports whether the connection is retired and has no calls
// left, so it can be closed.
func (c *clientConn) retiredIdle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.goaway && c.err == nil && len(c.pending) == 0
}

// callState is the per-call record the caller waits on. It is pooled by the
// Client; done has capacity 1 and receives exactly one value for each call
// that the reader took out of pending.
type callState struct {
	resp  Message
	err   error
	raw   []byte // the response's body for the caller to decode (see result)
	done  chan struct{}
	timer *time.Timer
	addr  string // of the connection that answered, for decode errors
	frame []byte // scratch for the request frame, kept across calls
	// respMD receives the response metadata when the caller asked for it.
	wantMD bool
	respMD MD

	// Used by the call path above the connection.
	opts   callOptions
	tried  []int  // indices of providers tried, for the balancer
	keyBuf []byte // hash key scratch
	md     MD     // request metadata scratch
	pick   balance.Info
	mocked string      // how a mock answered, for metrics
	lost   *clientConn // the connection whose loss failed the attempt
	end    time.Time   // when the last attempt ended (client clock)
}

// maxFrameScratch bounds the request frame buffer a pooled callState
// keeps for its next call.
const maxFrameScratch = 64 << 10

// errNotSent marks failures that happened before the request left this
// process: retrying them cannot execute the call twice.
type errNotSent struct{ err error }

func (e *errNotSent) Error() string { return e.err.Error() }
func (e *errNotSent) Unwrap() error { return e.err }

// call sends one request and waits for its response, the context or the
// deadline (zero: none).
func (c *clientConn) call(ctx context.Context, deadline time.Time, m *MethodDesc, req, resp Message, md MD, cs *callState) error {
	h := wire.Header{Type: wire.TypeRequest, Method: m.ID}
	if m.Oneway {
		h.Type = wire.TypeOneway
	}
	if !deadline.IsZero() {
		h.Timeout = time.Until(deadline)
		if h.Timeout <= 0 {
			return &errNotSent{Errorf(DeadlineExceeded, "%s: deadline exceeded before sending", m.FullName)}
		}
	}
	size := req.Size()
	if fs := wire.FrameSize(&h, md, size); fs > int(c.max) || fs > c.o.maxFrame {
		return Errorf(InvalidArgument, "%s: request of %d bytes exceeds the max frame size %d", m.FullName, fs, min(int(c.max), c.o.maxFrame))
	}
	c.mu.Lock()
	if c.err != nil || c.goaway {
		err := c.err
		c.mu.Unlock()
		if err == nil {
			err = Errorf(Unavailable, "connection to %s is going away", c.addr)
		}
		return &errNotSent{err}
	}
	c.nextID++
	if c.nextID == 0 {
		c.nextID = 1
	}
	id := c.nextID
	h.ID = id
	if !m.Oneway {
		cs.resp, cs.err, cs.respMD = resp, nil, nil
		c.pending[id] = cs
	}
	mode := writeQueued
	if len(c.pending) <= 1 {
		mode = writeDirect
	}
	alone := c.inFlight.add(len(c.pending))
	c.mu.Unlock()

	// The frame is encoded before the writer's lock is taken, which then
	// covers only a copy: callers encode in parallel.
	var frame []byte
	if c.comp && size >= c.o.compress && c.o.compress > 0 {
		cz := c.o.compressors.Get().(*wire.Compressor)
		frame = cz.AppendFrame(cs.frame[:0], &h, md, req.MarshalAppend(nil), c.o.compress)
		c.o.compressors.Put(cz)
	} else {
		frame = req.MarshalAppend(wire.AppendHeader(cs.frame[:0], &h, md, size))
	}
	if cap(frame) <= maxFrameScratch {
		cs.frame = frame[:0]
	}
	werr := c.w.writeBefore(func(b []byte) []byte { return append(b, frame...) }, mode, deadline)
	if werr != nil {
		// The connection is lost: the call fails with the connection's
		// error, so that it counts as part of that one loss, unless its
		// own deadline cut a write that the server was not reading.
		c.fail(werr)
		answered := !m.Oneway && !c.takePending(id)
		if answered {
			<-cs.done
		}
		if errors.Is(werr, os.ErrDeadlineExceeded) && !deadline.IsZero() && !time.Now().Before(deadline) {
			return Errorf(DeadlineExceeded, "%s: deadline exceeded writing to %s", m.FullName, c.addr)
		}
		if answered {
			return cs.result()
		}
		return &errNotSent{c.failure()}
	}
	if m.Oneway {
		return nil
	}

	return c.awaitLeading(ctx, deadline, id, m, cs, alone)
}

// await waits for the response of call id, read by another goroutine, or
// for the context or the deadline (zero: none).
func (c *clientConn) await(ctx context.Context, deadline time.Time, id uint32, m *MethodDesc, cs *callState) error {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		if d, ok := ctx.Deadline(); !ok || deadline.Before(d) {
			if cs.timer == nil {
				cs.timer = time.NewTimer(time.Until(deadline))
			} else {
				cs.timer.Reset(time.Until(deadline))
			}
			timeout = cs.timer.C
			defer cs.timer.Stop()
		}
	}
	done := ctx.Done()
	if done == nil && timeout == nil {
		// Nothing can end the wait but the answer or a failed connection
		// (which answers every pending call): skip the select.
		<-cs.done
		return cs.result()
	}
	select {
	case <-cs.done:
		return cs.result()
	case <-done:
		return c.abandon(id, cs, ctxError(ctx.Err(), m.FullName))
	case <-timeout:
		return c.abandon(id, cs, Errorf(DeadlineExceeded, "%s: deadline exceeded waiting for %s", m.FullName, c.addr))
	}
}

// ctxError turns a context's error into an *Error naming what waited.
func ctxError(err error, what string) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: DeadlineExceeded, Message: what + ": deadline exceeded", Cause: err}
	}
	return &Error{Code: Canceled, Message: what + ": canceled", Cause: err}
}

// abandon gives up on a call: it tells the server to cancel it, unless the
// response is already being delivered, in which case it waits for that.
func (c *clientConn) abandon(id uint32, cs *callState, err error) error {
	if !c.takePending(id) {
		<-cs.done
		return cs.result()
	}
	c.sendCancel(id)
	return err
}

// sendCancel asks the server to cancel call id. The writer loop sends it:
// a caller giving up must not block on a server that does not read.
func (c *clientConn) sendCancel(id uint32) {
	_ = c.w.write(func(b []byte) []byte {
		return wire.AppendFrame(b, &wire.Header{Type: wire.TypeCancel, ID: id}, nil, nil)
	}, writeQueued)
}

// takePending removes id from pending and reports whether it was there.
func (c *clientConn) takePending(id uint32) bool {
	c.mu.Lock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	return ok
}

// decode turns a response frame into the caller's result.
func (c *clientConn) decode(f *wire.Frame, cs *callState) error {
	var md MD
	if len(f.Metadata) > 0 && (cs.wantMD || f.Status != 0) {
		kv, err := wire.ParseMetadata(f.Metadata, nil)
		if err != nil {
			return Errorf(Internal, "response from %s: bad metadata: %v", c.addr, err)
		}
		md = MD(kv)
		if cs.wantMD {
			cs.respMD = md
		}
	}
	if f.Status != 0 {
		e := &Error{Code: Code(f.Status), Message: string(f.Body), Remote: true}
		if md.Get(mdRefused) != "" {
			return &errNotSent{e}
		}
		return e
	}
	if _, ok := cs.resp.(OwnedUnmarshaler); ok {
		// The caller decodes its copy (result): the reader, which serves
		// every call of the connection, only copies.
		cs.raw = make([]byte, len(f.Body))
		copy(cs.raw, f.Body)
		cs.addr = c.addr
		return nil
	}
	if err := cs.resp.Unmarshal(f.Body); err != nil {
		return decodeError(c.addr, err)
	}
	return nil
}

// result is the outcome of a call whose done channel fired: its error, or
// the error of decoding the response the reader handed over.
func (cs *callState) result() error {
	if cs.raw == nil {
		return cs.err
	}
	raw := cs.raw
	cs.raw = nil
	if err := cs.resp.(OwnedUnmarshaler).UnmarshalOwned(raw); err != nil {
		return decodeError(cs.addr, err)
	}
	return nil
}

func decodeError(addr string, err error) error {
	return &Error{Code: Internal, Message: fmt.Sprintf("decode response from %s: %v", addr, err), Cause: err}
}

// fail marks the connection dead, closes it and fails every pending call
// with Unavailable.
func (c *clientConn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = Errorf(Unavailable, "connection to %s closed", c.addr)
	} else if CodeOf(err) == Unknown {
		err = &Error{Code: Unavailable, Message: fmt.Sprintf("connection to %s failed: %v", c.addr, err), Cause: err}
	}
	c.err = err
	c.unusable.Store(true)
	pending := c.pending
	c.pending = map[uint32]*callState{}
	c.mu.Unlock()
	c.w.close(err)
	c.nc.Close()
	c.idle.Stop()
	close(c.done)
	for _, cs := range pending {
		cs.err = err
		cs.done <- struct{}{}
	}
}

// heartbeat pings an idle connection and fails it when the server stays
// silent for three intervals. It runs every half interval, and counts the
// silence from the first run that saw no new frame (reading the clock per
// frame would cost more than the precision is worth).
func (c *clientConn) heartbeat(now time.Time, every time.Duration) {
	if n := c.frames.Load(); n != c.hbFrames || c.hbSince.IsZero() {
		c.hbFrames, c.hbSince = n, now
	}
	silent := now.Sub(c.hbSince)
	switch {
	case silent > 3*every:
		c.fail(Errorf(Unavailable, "%s silent for %v", c.addr, silent.Round(time.Millisecond)))
	case silent >= every && !c.pinged.Load():
		c.pinged.Store(true)
		_ = c.w.write(func(b []byte) []byte {
			return wire.AppendFrame(b, &wire.Header{Type: wire.TypePing, ID: 1}, nil, nil)
		}, writeQueued) // the heartbeat must not block on a peer that does not read
	}
}

// connPool holds the connections to one address: dialed lazily, redialed
// with backoff after failures.
type connPool struct {
	addr  string
	o     *options
	next  atomic.Uint32
	slots []connSlot
}

type connSlot struct {
	live    atomic.Pointer[clientConn] // conn, for lock-free reads
	mu      sync.Mutex
	conn    *clientConn
	dialing chan struct{} // closed when the dial in progress ends
	lastErr error
	retryAt time.Time
	backoff time.Duration
}

func newConnPool(addr string, o *options) *connPool {
	return &connPool{addr: addr, o: o, slots: make([]connSlot, o.poolSize)}
}

const (
	minRedial = 50 * time.Millisecond
	maxRedial = 5 * time.Second
)

// get returns a usable connection, dialing if needed. While a redial is
// backing off it fails at once, so the caller can try another instance.
func (p *connPool) get(ctx context.Context) (*clientConn, error) {
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
		if s.dialing != nil {
			ch := s.dialing
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, &errNotSent{ctxError(ctx.Err(), "connect to "+p.addr)}
			}
		}
		if now := p.o.clock.Now(); now.Before(s.retryAt) {
			err := s.lastErr
			s.mu.Unlock()
			return nil, &errNotSent{Errorf(Unavailable, "connect to %s: %v (next try in %v)", p.addr, err, s.retryAt.Sub(now).Round(time.Millisecond))}
		}
		ch := make(chan struct{})
		s.dialing = ch
		s.mu.Unlock()

		c, err := dialConn(ctx, p.addr, p.o)

		s.mu.Lock()
		s.dialing = nil
		close(ch)
		if err != nil && ctx.Err() != nil {
			// The caller gave up: that says nothing about the address,
			// so no backoff for the callers after it.
			s.mu.Unlock()
			return nil, &errNotSent{ctxError(ctx.Err(), "connect to "+p.addr)}
		}
		if err != nil {
			s.backoff = min(max(2*s.backoff, minRedial), maxRedial)
			s.lastErr, s.retryAt = err, p.o.clock.Now().Add(s.backoff)
			s.mu.Unlock()
			return nil, &errNotSent{&Error{Code: Unavailable, Message: fmt.Sprintf("connect to %s: %v", p.addr, err), Cause: err}}
		}
		if old := s.conn; old != nil {
			old.retire()
			if old.retiredIdle() {
				old.fail(Errorf(Unavailable, "connection to %s replaced", p.addr))
			}
		}
		s.conn, s.backoff, s.lastErr = c, 0, nil
		s.live.Store(c)
		s.mu.Unlock()
		return c, nil
	}
}

// each calls f for every live connection.
func (p *connPool) each(f func(*clientConn)) {
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

// close fails every connection of the pool.
func (p *connPool) close(err error) {
	p.each(func(c *clientConn) { c.fail(err) })
}
