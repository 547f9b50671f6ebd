package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/internal/stream"
	"github.com/yrpc/yrpc/rt/wire"
)

// Config is what the connections of one client share. It is read only.
type Config struct {
	// Dial opens a transport connection to addr.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Features and Settings are what this side announces in the
	// handshake; Reader configures the reader of each connection (its
	// Features are set to the negotiated ones).
	Features wire.Features
	Settings wire.Settings
	Reader   wire.ReaderOptions
	// Compress is the body size from which requests are compressed when
	// lz4 was negotiated; 0: never.
	Compress int
	// Compressors pools *wire.Compressor values.
	Compressors *sync.Pool
	// SpinWait and SpinGate: see sock.Peeker.Await.
	SpinWait time.Duration
	SpinGate *sock.SpinGate
	// Now is the client's clock, for redial backoff.
	Now func() time.Time
	// Buffers lends write buffers; WriteTimeout fails a connection whose
	// server takes no bytes for that long (0: never). See sock.Writer.
	Buffers      *sock.BufferPool
	WriteTimeout time.Duration
	// TLS, when set, makes every connection TLS (ServerName defaults to
	// the address's host).
	TLS *tls.Config
	// PoolSize is the number of connections per address (at least 1).
	PoolSize int
}

// Conn is one multiplexed connection to a provider. Calls register in
// pending under a fresh request id, write their frame through the batching
// writer, and then either read the connection themselves or wait on their
// own channel for the goroutine that reads it (see read.go). No goroutine
// is started per call.
type Conn struct {
	addr string
	raw  net.Conn // the socket
	nc   net.Conn // what frames travel on: raw, or TLS over it
	w    *sock.Writer
	cfg  *Config
	comp bool          // lz4 negotiated
	peer wire.Settings // the server's limits

	mu       sync.Mutex
	pending  map[uint32]*Pending
	streams  map[uint32]*Stream // open streams; guarded by mu
	sc       *stream.Conn       // the streams' shared state; nil without streams
	nextID   uint32
	inFlight sock.LoneAvg // calls pending when one is sent
	err      error        // set once the connection is dead
	goaway   bool         // the server is shutting down: no new calls
	reason   string       // the GoAway's reason, when it gave one
	lastRead uint32       // the GoAway's last request id: later ones did not run; 0: unknown
	// unusable is set with err or goaway, for lock-free reads.
	unusable atomic.Bool

	frames   atomic.Uint64 // frames read, for the heartbeat
	hbFrames uint64        // frames at the heartbeat's last run; its own
	hbSince  time.Time     // when the heartbeat last saw new frames; its own
	pinged   atomic.Bool
	done     chan struct{}

	// The read role (see read.go).
	r         *wire.Reader  // read by the role's holder only
	reading   bool          // a goroutine holds the role; guarded by mu
	readHeld  atomic.Bool   // reading, for lock-free reads
	peek      *sock.Peeker  // tells a close by the server while unread
	leads     uint64        // calls that read for themselves; guarded by mu
	seenLeads uint64        // leads at the idle watch's last run; guarded by mu
	wake      chan struct{} // hands the role to the background goroutine; capacity 1
	rdl       time.Time     // the read deadline last set; the holder's
	rdlSet    bool          // rdl is the connection's read deadline
	interrupt func()        // makes a blocked read return (for context.AfterFunc)
	// The interrupt registered with the context of a leading call, kept
	// for the next leader with the same context, and the Done channel of
	// the last leader's context (see armInterrupt); guarded by mu.
	armedDone <-chan struct{}
	armedStop func() bool
	lastDone  <-chan struct{}
	// The context whose end answers the pending calls made with it (see
	// ctxWatch); guarded by mu.
	watch    ctxWatch
	idle     *time.Timer // runs idleWatch
	watching atomic.Bool // idle is running
}

// prefaceTimeout bounds the connection preface exchange.
const prefaceTimeout = 10 * time.Second

// dial connects to addr and exchanges prefaces.
func dial(ctx context.Context, addr string, cfg *Config) (*Conn, error) {
	nc, err := cfg.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	deadline, callers := time.Now().Add(prefaceTimeout), false
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, callers = d, true
	}
	_ = nc.SetDeadline(deadline)
	raw := nc
	if cfg.TLS != nil {
		hctx, cancel := context.WithDeadline(ctx, deadline)
		tc, err := handshake(hctx, raw, cfg.TLS, addr)
		cancel()
		if err != nil {
			raw.Close()
			return nil, handshakeError(clientCertHint(err, cfg.TLS), callers)
		}
		nc = tc
	}
	peer, err := wire.ClientHandshake(nc, cfg.Features, cfg.Settings)
	if err != nil {
		raw.Close()
		if cfg.TLS != nil {
			// TLS 1.3 servers judge the client's certificate after the
			// client's handshake ended: their alert comes here.
			err = clientCertHint(err, cfg.TLS)
		}
		return nil, handshakeError(err, callers)
	}
	_ = raw.SetDeadline(time.Time{})
	ro := cfg.Reader
	ro.Features = peer.Features
	c := &Conn{
		addr: addr, raw: raw, nc: nc, cfg: cfg,
		w:       sock.NewWriter(nc, sock.WriterOptions{Pool: cfg.Buffers, Timeout: cfg.WriteTimeout}),
		comp:    peer.Features.Has(wire.FeatureLZ4),
		peer:    peer.Settings,
		pending: make(map[uint32]*Pending),
		streams: make(map[uint32]*Stream),
		done:    make(chan struct{}),
		r:       wire.NewReader(nc, ro),
		wake:    make(chan struct{}, 1),
		peek:    sock.NewPeeker(raw),
	}
	if peer.Features.Has(wire.FeatureStreams) {
		c.sc = stream.NewConn(c.w, peer.Settings, cfg.Settings)
	}
	c.interrupt = func() { _ = nc.SetReadDeadline(time.Unix(1, 0)) } // in the past
	c.idle = time.AfterFunc(time.Hour, c.idleWatch)
	c.idle.Stop()
	go c.background()
	c.watchIdle()
	// A server that refuses the connection (e.g. one that requires TLS)
	// says why right after its preface: hear it before any call is sent.
	if _, readable := c.peek.State(); readable && c.readUnread() {
		c.fail(c.goneErr())
		return nil, c.failure()
	}
	return c, nil
}

// handshakeError is err, a failed TLS or preface exchange, marked as
// context.DeadlineExceeded when its deadline was the caller's (callers)
// and it timed out: the caller's deadline passed, which says nothing of
// the address, even if the context's own timer has not fired yet.
func handshakeError(err error, callers bool) error {
	if callers && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// Addr is the address the connection was dialed at.
func (c *Conn) Addr() string { return c.addr }

// usable reports whether new calls may use the connection.
func (c *Conn) usable() bool {
	return !c.unusable.Load()
}

// LostWith reports whether err (as Call returned it) is the failure of
// the whole connection, which every call in flight on it received, rather
// than of one call.
func (c *Conn) LostWith(err error) bool {
	var ns *NotSent
	if errors.As(err, &ns) {
		err = ns.Err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil && err == c.err
}

// failure returns the error the connection failed with, nil while it
// has not.
func (c *Conn) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// retire stops new calls on the connection; calls in flight finish.
func (c *Conn) retire() {
	c.mu.Lock()
	c.goaway = true
	c.unusable.Store(true)
	c.mu.Unlock()
}

// retireWith retires the connection on the server's GoAway frame f,
// keeping its reason for the errors of the calls that it ends.
func (c *Conn) retireWith(f *wire.Frame) {
	c.mu.Lock()
	if len(f.Body) > 0 {
		c.reason = fmt.Sprintf("%s (code %d)", f.Body, f.Status)
	}
	c.lastRead = f.ID
	c.mu.Unlock()
	c.retire()
}

// goneErr is the error of a connection the server sent away.
func (c *Conn) goneErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reason != "" {
		return errorf(Unavailable, "%s went away: %s", c.addr, c.reason)
	}
	return errorf(Unavailable, "%s went away", c.addr)
}

// retiredIdle reports whether the connection is retired and has no calls
// left, so it can be closed.
func (c *Conn) retiredIdle() bool {
	if !c.unusable.Load() {
		return false // the common case, after every response: no lock
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.goaway && c.err == nil && len(c.pending) == 0 && len(c.streams) == 0
}

// Call sends r and waits for its response (decoded into r.Resp), the
// context or r's deadline. Errors are *Error values, wrapped in *NotSent
// when the call provably did not run.
//
// Call stays on the caller's stack while it waits, as do its callers, and
// the garbage collector scans that stack at every cycle: the failures are
// made in functions of their own (refusalLocked, writeFailed), so that
// Call's frame does not hold their messages' arguments.
func (c *Conn) Call(ctx context.Context, r *Request, p *Pending) error {
	h := wire.Header{Type: wire.TypeRequest, Method: r.Method}
	if r.Oneway {
		h.Type = wire.TypeOneway
	}
	if !r.Deadline.IsZero() {
		h.Timeout = time.Until(r.Deadline)
		if h.Timeout <= 0 {
			return lateError(r)
		}
	}
	size := r.Req.Size()
	if err := c.checkSize(r, &h, size); err != nil {
		return err
	}
	c.mu.Lock()
	if err := c.refusalLocked(r); err != nil {
		c.mu.Unlock()
		return err
	}
	c.nextID++
	if c.nextID == 0 {
		c.nextID = 1
	}
	id := c.nextID
	h.ID = id
	watched := false
	if !r.Oneway {
		p.resp, p.newResp, p.err, p.MD, p.want, p.watched = r.Resp, r.NewResp, nil, nil, r.WantMD, false
		c.pending[id] = p
		watched = c.watchLocked(ctx, p, r.Name)
	}
	mode := sock.Queued
	if len(c.pending) <= 1 {
		mode = sock.Direct
	}
	alone := c.inFlight.Add(len(c.pending))
	c.mu.Unlock()

	if werr := c.write(r, p, &h, size, mode); werr != nil {
		return c.writeFailed(werr, r, id, p)
	}
	if r.Oneway {
		return nil
	}
	return c.awaitLeading(ctx, r, id, p, alone, watched)
}

// lateError is the error of a call whose deadline passed before it was
// sent.
func lateError(r *Request) error {
	return &NotSent{Err: errorf(DeadlineExceeded, "%s: deadline exceeded before sending", r.Name)}
}

// refusalLocked returns the error of a call the connection cannot take:
// it failed or goes away, or it carries the server's limit of calls at
// once. Called with c.mu held.
func (c *Conn) refusalLocked(r *Request) error {
	if c.err != nil || c.goaway {
		err := c.err
		lost := err != nil
		if err == nil {
			err = errorf(Unavailable, "connection to %s is going away", c.addr)
		}
		return &NotSent{Err: err, Lost: lost}
	}
	if max := int(c.peer.MaxConcurrentCalls); max > 0 && len(c.pending) >= max && !r.Oneway {
		return &NotSent{Err: errorf(ResourceExhausted, "%s: %d calls in flight on the connection to %s, its limit", r.Name, max, c.addr)}
	}
	return nil
}

// writeFailed ends call id, whose request could not be written: the
// connection is lost, and the call fails with the connection's error, so
// that it counts as part of that one loss, unless its own deadline cut a
// write that the server was not reading. The call is taken back before
// the failure answers every pending one: its frame did not leave whole,
// so it did not run.
func (c *Conn) writeFailed(werr error, r *Request, id uint32, p *Pending) error {
	answered := !r.Oneway && !c.takePending(id)
	c.fail(werr)
	if answered {
		<-p.done
	}
	if errors.Is(werr, os.ErrDeadlineExceeded) && !r.Deadline.IsZero() && !time.Now().Before(r.Deadline) {
		return errorf(DeadlineExceeded, "%s: deadline exceeded writing to %s", r.Name, c.addr)
	}
	if answered {
		return p.result()
	}
	return &NotSent{Err: c.failure(), Lost: true}
}

// checkSize refuses, before sending, a call the server would refuse by
// closing the connection (and failing every other call on it): metadata
// over the server's limits, a frame over its frame size.
func (c *Conn) checkSize(r *Request, h *wire.Header, size int) error {
	err := c.peer.CheckSend(h, r.MD, size)
	if err == nil {
		return nil
	}
	what := "the max frame size"
	if errors.Is(err, wire.ErrMetadataTooLarge) {
		what = "the metadata limits"
	}
	return &Error{Code: InvalidArgument, Message: fmt.Sprintf("%s: request exceeds %s of %s, not sent: %v", r.Name, what, c.addr, err), Cause: err}
}

// await waits for the response of call id, read by another goroutine, or
// for the context or the deadline (zero: none). A watched call (see
// ctxWatch) is answered when its context ends: it waits for p alone.
func (c *Conn) await(ctx context.Context, r *Request, id uint32, p *Pending, watched bool) error {
	var timeout <-chan time.Time
	if !r.Deadline.IsZero() {
		if d, ok := ctx.Deadline(); !ok || r.Deadline.Before(d) {
			if p.timer == nil {
				p.timer = time.NewTimer(time.Until(r.Deadline))
			} else {
				p.timer.Reset(time.Until(r.Deadline))
			}
			timeout = p.timer.C
			defer p.timer.Stop()
		}
	}
	done := ctx.Done()
	if watched {
		done = nil
	}
	if done == nil && timeout == nil {
		// Nothing can end the wait but the answer or a failed connection
		// (which answers every pending call): skip the select.
		<-p.done
		return p.result()
	}
	select {
	case <-p.done:
		return p.result()
	case <-done:
		return c.abandon(id, p, ctxError(ctx.Err(), r.Name))
	case <-timeout:
		return c.abandon(id, p, c.waitTimeout(r))
	}
}

// waitTimeout is the error of call r whose deadline passed while it
// waited for its response. (Out of await, which stays on the caller's
// stack while it waits: see Call.)
func (c *Conn) waitTimeout(r *Request) error {
	return errorf(DeadlineExceeded, "%s: deadline exceeded waiting for %s", r.Name, c.addr)
}

// abandon gives up on a call: it tells the server to cancel it, unless the
// response is already being delivered, in which case it waits for that.
func (c *Conn) abandon(id uint32, p *Pending, err error) error {
	if !c.takePending(id) {
		<-p.done
		return p.result()
	}
	c.sendCancel(id)
	return err
}

// sendCancel asks the server to cancel call id. The writer loop sends it:
// a caller giving up must not block on a server that does not read.
func (c *Conn) sendCancel(id uint32) {
	_ = c.w.Write(func(b []byte) []byte {
		return wire.AppendFrame(b, &wire.Header{Type: wire.TypeCancel, ID: id}, nil, nil)
	}, sock.Queued)
}

// takePending removes id from pending and reports whether it was there.
func (c *Conn) takePending(id uint32) bool {
	c.mu.Lock()
	p, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
		c.unwatchLocked(p)
	}
	c.mu.Unlock()
	return ok
}

// fail marks the connection dead, closes it and fails every pending call
// with Unavailable.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	var ce *Error
	switch {
	case (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)) && c.reason != "":
		err = errorf(Unavailable, "connection to %s closed after the server said: %s", c.addr, c.reason)
	case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
		err = errorf(Unavailable, "connection to %s closed", c.addr)
	case !errors.As(err, &ce):
		err = &Error{Code: Unavailable, Message: fmt.Sprintf("connection to %s failed: %v", c.addr, err), Cause: err}
	}
	c.err = err
	c.unusable.Store(true)
	pending := c.pending
	c.pending = map[uint32]*Pending{}
	streams := c.streams
	c.streams = map[uint32]*Stream{}
	lastRead := uint32(0) // calls after it never ran
	if c.goaway {
		lastRead = c.lastRead
	}
	armed := c.armedStop
	c.armedDone, c.armedStop = nil, nil
	watch := c.stopWatchLocked()
	c.mu.Unlock()
	if armed != nil {
		armed()
	}
	if watch != nil {
		watch()
	}
	c.w.Close(err)
	c.raw.Close() // the socket: a TLS close would wait to write close_notify
	c.idle.Stop()
	close(c.done)
	for id, p := range pending {
		p.err = err
		if lastRead != 0 && id > lastRead {
			p.err = &NotSent{Err: err} // after the GoAway's last request: never run
		}
		p.done <- struct{}{}
	}
	if c.sc != nil {
		c.sc.Fail(err)
	}
	for _, cs := range streams {
		cs.finish(err, nil)
	}
}

// Close fails the connection with err (an *Error, e.g. "client closed").
func (c *Conn) Close(err error) { c.fail(err) }

// Heartbeat pings an idle connection and fails it when the server stays
// silent for three intervals. The client runs it every half interval; it
// counts the silence from the first run that saw no new frame (reading
// the clock per frame would cost more than the precision is worth).
func (c *Conn) Heartbeat(now time.Time, every time.Duration) {
	if n := c.frames.Load(); n != c.hbFrames || c.hbSince.IsZero() {
		c.hbFrames, c.hbSince = n, now
	}
	silent := now.Sub(c.hbSince)
	switch {
	case silent > 3*every:
		c.fail(errorf(Unavailable, "%s silent for %v", c.addr, silent.Round(time.Millisecond)))
	case silent >= every && !c.pinged.Load():
		c.pinged.Store(true)
		_ = c.w.Write(func(b []byte) []byte {
			return wire.AppendFrame(b, &wire.Header{Type: wire.TypePing, ID: 1}, nil, nil)
		}, sock.Queued) // the heartbeat must not block on a peer that does not read
	}
}

// write encodes the request frame and hands it to the writer. A frame of
// up to maxFrameScratch bytes is encoded before the writer's lock is
// taken, which then covers only a copy: callers encode in parallel. A
// larger one is encoded under the lock, straight into the writer's
// buffer grown once to its size, so that a large request is copied once,
// not grown append by append and then copied again.
func (c *Conn) write(r *Request, p *Pending, h *wire.Header, size int, mode sock.WriteMode) error {
	var frame []byte
	switch {
	case c.comp && c.cfg.Compress > 0 && size >= c.cfg.Compress:
		cz := c.cfg.Compressors.Get().(*wire.Compressor)
		frame = cz.AppendFrame(p.frame[:0], h, r.MD, r.Req.MarshalAppend(make([]byte, 0, size)), c.cfg.Compress)
		c.cfg.Compressors.Put(cz)
	case size > maxFrameScratch:
		return c.w.WriteBefore(wire.FrameSize(h, r.MD, size), func(b []byte) []byte {
			return r.Req.MarshalAppend(wire.AppendHeader(b, h, r.MD, size))
		}, mode, r.Deadline)
	default:
		buf := p.frame[:0]
		if cap(buf) < wire.HeaderLen+size {
			buf = slices.Grow(buf, wire.FrameSize(h, r.MD, size))
		}
		frame = r.Req.MarshalAppend(wire.AppendHeader(buf, h, r.MD, size))
	}
	if cap(frame) <= maxFrameScratch {
		p.frame = frame[:0]
	}
	return c.w.WriteBefore(len(frame), func(b []byte) []byte { return append(b, frame...) }, mode, r.Deadline)
}
