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

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/internal/stream"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/wire"
)

// serverConn is one client connection of a Server.
type serverConn struct {
	srv    *Server
	raw    net.Conn      // the socket
	nc     net.Conn      // what frames travel on: raw, or TLS over it; set by serve
	w      *sock.Writer  // set by serve under mu; see writer
	r      *wire.Reader  // used by one goroutine at a time
	ip     string        // the client's IP, for per-IP limits
	comp   bool          // lz4 negotiated
	peer   *Peer         // the client, for handlers; set by serve
	limits wire.Settings // the client's announced limits; set by serve

	mu    sync.Mutex
	calls map[uint32]*serverCall // in flight, for cancel frames

	streams map[uint32]*serverStream // open streams; guarded by mu
	sc      *stream.Conn             // the streams' shared state; nil without streams

	inflight atomic.Int64  // calls and streams in flight, oneway calls included
	held     *heldBytes    // request bytes of the calls in flight
	closed   chan struct{} // closed by close
	// admitMu orders the admission of each call or stream (its answer
	// queued, or its place in flight taken) before or after the GoAway,
	// whose id is the last one admitted (lastID): so every call up to it
	// is answered before the connection closes, and none after it runs.
	admitMu sync.Mutex
	lastID  uint32
	// writeClosed: the connection is drained and its write side closed
	// (closeWrite); what the client still sends is dropped.
	writeClosed atomic.Bool
	started     bool // the first frame was read; the reader's

	dropFunc func()
	// Serving calls on the reading goroutine (see readLoop): owner is
	// the token of the call being served there, 0 between calls and once
	// the watchdog handed reading to a worker; serving is its method.
	tokens, owner atomic.Uint64
	serving       atomic.Pointer[methodEntry]
	watching      atomic.Bool  // the watchdog timer is running
	stallMu       sync.Mutex   // serializes watchdog runs
	stall         *time.Timer  // runs watchdog
	seenOwner     uint64       // owner at the watchdog's last run; guarded by stallMu
	seenTokens    uint64       // tokens at the watchdog's last run; guarded by stallMu
	lastFrame     atomic.Int64 // server epoch of the last frame read
	lastCall      atomic.Int64 // server epoch of the last call
	closeOnce     sync.Once
	peek          *sock.Peeker
	h2            *h2Conn // an HTTP/2 connection's (grpc_h2conn.go); set under mu with w
}

func newServerConn(s *Server, raw net.Conn, ip string) *serverConn {
	c := &serverConn{srv: s, raw: raw, ip: ip, calls: make(map[uint32]*serverCall), streams: make(map[uint32]*serverStream),
		held: newHeldBytes(s.o.limits.MaxRequestBytes), closed: make(chan struct{})}
	c.peek = sock.NewPeeker(raw)
	c.dropFunc = func() { c.close(errors.New("rt: connection dropped by fault injection")) }
	c.stall = time.AfterFunc(time.Hour, c.watchdog)
	c.stall.Stop()
	e := s.epoch.Load()
	c.lastFrame.Store(e)
	c.lastCall.Store(e)
	return c
}

func (c *serverConn) serve() {
	o := &c.srv.o
	_ = c.raw.SetDeadline(deadlineIn(o.limits.PrefaceTimeout))
	nc, st, err := c.accept(c.raw)
	if err != nil {
		o.logger.Info("rt: connection refused", "peer", c.raw.RemoteAddr().String(), "err", err)
		c.close(err)
		return
	}
	c.nc, c.peer = nc, newPeer(c.raw.RemoteAddr(), st)
	if c.handOff(st) {
		return // HTTP: gRPC or gRPC-Web (grpc_conn.go)
	}
	w := sock.NewWriter(nc, sock.WriterOptions{Pool: o.buffers, Timeout: o.writeTimeout})
	c.mu.Lock()
	c.w = w
	c.mu.Unlock()
	peer, err := c.handshake()
	if err != nil {
		c.close(err)
		return
	}
	c.r = wire.NewReader(c.nc, o.readerOptions(peer.Features))
	c.run()
}

// handshake exchanges prefaces and settings (within the deadline serve
// set, Limits.PrefaceTimeout), and leaves the read deadline of the first
// frame (Limits.FirstFrameTimeout; readLoop clears it once the frame is
// in).
func (c *serverConn) handshake() (wire.Peer, error) {
	o := &c.srv.o
	peer, err := wire.ServerHandshake(c.nc, o.features(), o.settings(uint32(o.limits.MaxCallsPerConn)))
	if err != nil {
		o.logger.Info("rt: bad connection preface", "peer", c.raw.RemoteAddr().String(), "err", err)
		return peer, err
	}
	c.comp = peer.Features.Has(wire.FeatureLZ4)
	c.limits = peer.Settings
	if peer.Features.Has(wire.FeatureStreams) {
		sc := stream.NewConn(c.w, peer.Settings, o.settings(uint32(o.limits.MaxCallsPerConn)))
		c.mu.Lock() // close reads it from another goroutine
		c.sc = sc
		c.mu.Unlock()
	}
	_ = c.raw.SetWriteDeadline(time.Time{})
	return peer, c.raw.SetReadDeadline(deadlineIn(o.limits.FirstFrameTimeout))
}

// deadlineIn is the deadline d from now; zero (none) for d <= 0.
func deadlineIn(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// run reads frames until the connection fails, then closes it. It
// implements task: the goroutine reading a connection may change (see
// request handling below), so the loop can continue on a pooled worker.
func (c *serverConn) run() {
	read := c.readLoop
	if c.h2 != nil {
		read = c.h2.readLoop
	}
	if err := read(); err != nil {
		c.close(err)
	}
}

// readLoop reads and dispatches frames. It returns nil when it handed the
// reading over to another goroutine, else the error that ended it.
//
// Calls of quick methods run on this goroutine, one after the other, with
// no hand-off: a batch of requests read with one syscall is answered with
// one write when the batch is drained. A watchdog hands the read loop to a
// pooled worker when a call holds it for more than stallAfter; a method
// whose calls stall often then runs on workers for slowFor (see
// methodEntry.stalled), so a handler that blocks holds up other calls on
// its connection only once in a while, and only for about stallAfter.
func (c *serverConn) readLoop() error {
	var p readPace
	for {
		if err := c.pace(&p); err != nil {
			return err
		}
		f, err := c.r.Next()
		if err != nil {
			return c.readFailed(err)
		}
		if c.writeClosed.Load() {
			continue // drained and half-closed: the client is told already
		}
		if !c.started {
			c.started = true
			_ = c.raw.SetReadDeadline(time.Time{})
		}
		c.lastFrame.Store(c.srv.epoch.Load())
		if handedOff, err := c.dispatch(f, &p); handedOff || err != nil {
			return err
		}
	}
}

// readPace is readLoop's count of the requests read since it last waited
// for the client, and their running average per wait.
type readPace struct {
	batch   int
	perRead sock.LoneAvg
}

// pace runs before each read. When the read would wait for the client it
// sends the answers held so far, and after lone calls spins briefly for
// the next (see WithSpinWait); it waits while a caller holds the reader;
// and it stops reading while the client leaves more than MaxBufferedBytes
// of answers untaken (until it takes them, or the write timeout closes
// the connection).
func (c *serverConn) pace(p *readPace) error {
	if !c.r.Ready() {
		if err := c.w.FlushHeld(); err != nil {
			return err
		}
		if p.perRead.Add(p.batch) {
			c.peek.Await(c.srv.o.spinWait, c.srv.o.spinGate)
		}
		p.batch = 0
	}
	if err := c.waitHeld(); err != nil {
		return err
	}
	if max := c.srv.o.limits.MaxBufferedBytes; max > 0 && c.w.Buffered() > max {
		if err := c.w.FlushHeld(); err != nil {
			return err
		}
		return c.w.WaitBelow(max)
	}
	return nil
}

// readFailed logs why the connection's reading ended, when that is worth
// an operator's attention, and returns err.
func (c *serverConn) readFailed(err error) error {
	var fe *wire.FrameError
	switch {
	case errors.As(err, &fe):
		c.srv.o.logger.Warn("rt: closing connection after bad frame", "peer", c.nc.RemoteAddr().String(), "err", err)
	case !c.started && errors.Is(err, os.ErrDeadlineExceeded):
		c.srv.o.logger.Info("rt: closing connection with no frame", "peer", c.nc.RemoteAddr().String(), "waited", c.srv.o.limits.FirstFrameTimeout)
	}
	return err
}

// dispatch acts on one frame from the client. handedOff reports that a
// call served inline outlived the watchdog's patience, so that a worker
// reads the connection now and this goroutine must stop.
func (c *serverConn) dispatch(f *wire.Frame, p *readPace) (handedOff bool, err error) {
	switch f.Type {
	case wire.TypeRequest, wire.TypeOneway:
		p.batch++
		c.lastCall.Store(c.srv.epoch.Load())
		c.admitMu.Lock()
		c.lastID = f.ID
		sc := c.request(f)
		c.admitMu.Unlock()
		switch {
		case sc == nil:
		case sc.inline:
			return c.serveInline(sc)
		default:
			c.srv.workers.run(sc)
		}
	case wire.TypeCancel:
		c.mu.Lock()
		sc := c.calls[f.ID]
		c.mu.Unlock()
		if sc != nil {
			sc.ctx.cancel(context.Canceled)
		}
	case wire.TypePing:
		id := f.ID
		_ = c.w.Write(func(b []byte) []byte {
			return wire.AppendFrame(b, &wire.Header{Type: wire.TypePong, ID: id}, nil, nil)
		}, sock.Held)
	case wire.TypeStreamOpen:
		p.batch++
		c.lastCall.Store(c.srv.epoch.Load())
		c.admitMu.Lock()
		c.lastID = f.ID
		c.openStream(f)
		c.admitMu.Unlock()
	case wire.TypeStreamMessage, wire.TypeStreamHalfClose, wire.TypeStreamReset, wire.TypeWindowUpdate:
		return false, c.streamFrame(f)
	case wire.TypePong, wire.TypeGoAway:
	default:
		return false, fmt.Errorf("rt: unexpected %s frame from client", f.Type)
	}
	return false, nil
}

// serveInline serves sc on the reading goroutine. If the watchdog hands
// the reader to a worker meanwhile, it reports handedOff after sending
// what it held.
func (c *serverConn) serveInline(sc *serverCall) (handedOff bool, err error) {
	mode := sock.Direct
	if c.r.Buffered() > 0 {
		mode = sock.Held // more requests to serve first
	}
	// From here until the CAS below, the watchdog may hand the reader to
	// a worker: this goroutine must not touch it.
	tok := c.tokens.Add(1)
	sc.me.inlined.Add(1)
	c.serving.Store(sc.me)
	c.owner.Store(tok)
	c.watch()
	sc.serve(mode)
	if !c.owner.CompareAndSwap(tok, 0) {
		return true, c.w.FlushHeld()
	}
	return false, nil
}

const (
	// stallAfter is the watchdog's period: a call served on the reading
	// goroutine that is still running at two runs in a row (after
	// stallAfter to twice that) makes a worker take the read loop over.
	stallAfter = 200 * time.Microsecond
	// slowFor is how long a method whose calls stall often runs on
	// workers before it is tried on the reading goroutine again.
	slowFor = time.Second
)

// watch starts the watchdog unless it runs already. The watchdog keeps
// itself running while calls are served on the reading goroutine and
// stops after a period without any, so arming it costs nothing per call
// under load and an idle connection has no timer.
func (c *serverConn) watch() {
	if !c.watching.Load() && c.watching.CompareAndSwap(false, true) {
		c.stall.Reset(stallAfter)
	}
}

// watchdog runs every stallAfter while calls are served on the reading
// goroutine. When the same call is running as at its last run, a worker
// goes on reading the connection, and the call's method moves to workers
// for slowFor if its calls stall often. The CAS on owner makes sure the
// reading goroutine and the worker never both read.
func (c *serverConn) watchdog() {
	c.stallMu.Lock()
	defer c.stallMu.Unlock()
	tok, n := c.owner.Load(), c.tokens.Load()
	if tok != 0 && tok == c.seenOwner && c.owner.CompareAndSwap(tok, 0) {
		c.seenOwner = 0
		c.watching.Store(false) // the new reader starts it again
		if me := c.serving.Load(); me != nil && me.stalled() {
			me.slowUntil.Store(c.srv.o.clock.Now().Add(slowFor).UnixNano())
		}
		c.srv.workers.run(c)
		// The answers the stalled batch held back go out now.
		if err := c.w.FlushHeld(); err != nil {
			go c.close(err)
		}
		return
	}
	busy := tok != 0 || n != c.seenTokens
	c.seenOwner, c.seenTokens = tok, n
	if busy {
		c.stall.Reset(stallAfter)
		return
	}
	c.watching.Store(false)
	// A call may have started after the loads above and seen the
	// watchdog still running: look again, now that watching is false.
	if c.owner.Load() != 0 {
		c.watch()
	}
}

// refusal is why a call or a stream is not run: the error it is answered
// with, and whether it is marked as not run, so that the client may try
// another provider.
type refusal struct {
	err    *Error
	notRun bool
}

// admit runs the checks every call and stream passes before it runs:
// closing, the method's existence and kind, metadata, the registry token,
// the group and version, the rate limit and the limits on calls in flight
// (on success it holds a place of Limits.MaxCalls, which callDone gives
// back). It returns the service, the method and the call's metadata, or
// the refusal to answer with.
func (c *serverConn) admit(f *wire.Frame, stream bool) (*serviceEntry, *methodEntry, MD, *refusal) {
	s := c.srv
	if s.closing.Load() {
		return nil, nil, nil, &refusal{Errorf(Unavailable, "server closing"), true}
	}
	se, me := s.lookup(f.Method)
	if me == nil {
		return nil, nil, nil, &refusal{Errorf(Unimplemented, "unknown method id %#x (this server serves %s)", f.Method, s.serviceNames()), false}
	}
	name := me.info.Method.FullName
	if isStream := me.info.Method.Stream != NotStream; isStream != stream {
		return nil, nil, nil, &refusal{Errorf(Unimplemented, "%s is a %s method: called as a %s", name, me.info.Method.Stream, map[bool]string{true: "stream", false: "unary call"}[stream]), false}
	}
	var md MD
	if len(f.Metadata) > 0 {
		kv, err := wire.ParseMetadata(f.Metadata, nil)
		if err != nil {
			return nil, nil, nil, &refusal{Errorf(InvalidArgument, "%s: bad metadata: %v", name, err), false}
		}
		md = MD(kv)
	}
	if e := c.admitCall(se, me, md, true); e != nil {
		return nil, nil, nil, &refusal{e, true}
	}
	return se, me, md, nil
}

// request prepares one call, or answers it at once when it cannot run
// (then it returns nil).
func (c *serverConn) request(f *wire.Frame) *serverCall {
	s := c.srv
	oneway := f.Type == wire.TypeOneway
	_, me, md, r := c.admit(f, false)
	if r != nil {
		switch {
		case oneway:
		case r.notRun:
			c.refuse(f.ID, r.err.Code, r.err.Message)
		default:
			c.reply(f.ID, nil, r.err, nil, sock.Held)
		}
		return nil
	}
	req := me.info.Method.NewRequest()
	if err := req.Unmarshal(f.Body); err != nil {
		if s.conc != nil {
			s.conc.Release()
		}
		if !oneway {
			c.reply(f.ID, nil, Errorf(InvalidArgument, "%s: decode request: %v", me.info.Method.FullName, err), nil, sock.Held)
		}
		return nil
	}
	sc := &serverCall{conn: c, me: me, req: req, id: f.ID, oneway: oneway, inline: s.o.clock.Now().UnixNano() >= me.slowUntil.Load()}
	if !oneway {
		c.mu.Lock()
		_, dup := c.calls[f.ID]
		if !dup {
			c.calls[f.ID] = sc
		}
		c.mu.Unlock()
		if dup {
			// A broken client: refuse the second call, and keep the
			// first one tracked, so that a cancel or the connection's
			// end still reaches it.
			if s.conc != nil {
				s.conc.Release()
			}
			c.reply(f.ID, nil, Errorf(InvalidArgument, "%s: request id %d is in use by a call in flight", me.info.Method.FullName, f.ID), nil, sock.Held)
			return nil
		}
	}
	c.initContext(&sc.ctx, f, me, md)
	sc.held = len(f.Body)
	c.held.add(sc.held)
	s.held.add(sc.held)
	s.inflight.Add(1)
	c.inflight.Add(1)
	return sc
}

// initContext sets up ctx as the handler context of the call or stream
// that f opens.
func (c *serverConn) initContext(ctx *callCtx, f *wire.Frame, me *methodEntry, md MD) {
	ctx.parent, ctx.md, ctx.peer, ctx.info, ctx.drop = context.Background(), md, c.peer, &me.info, c.dropFunc
	if f.Timeout > 0 {
		ctx.deadline = time.Now().Add(f.Timeout) // wall clock, whatever the server's Clock
	}
}

// admitCall checks a call to method me of se with metadata md against the
// registry token, the service's group and version (only if checkKey;
// neither for a built-in service), its rate limit and the limits on calls
// in flight; yrpc's and gRPC's calls and streams alike. It returns why the
// call is refused (it did not run), or nil with a slot of Limits.MaxCalls
// taken: Server.callDone gives it back.
func (c *serverConn) admitCall(se *serviceEntry, me *methodEntry, md MD, checkKey bool) *Error {
	s := c.srv
	name := me.info.Method.FullName
	if !se.builtin && !s.tokenOK(md) {
		return &Error{Code: Unauthenticated, Message: name + ": no valid registry token: call this provider through the registry"}
	}
	if g, v := md.Get(MDGroup), md.Get(MDVersion); checkKey && !se.builtin && (g != se.key.Group || v != se.key.Version) {
		return Errorf(NotFound, "%s: this server serves %s, not %s", name, se.key, registry.Key{Service: se.key.Service, Group: g, Version: v})
	}
	if lim := se.limit.Load(); lim != nil && !lim.allow(c.ip, md.Get(MDApp), s.o.clock.Now()) {
		return &Error{Code: ResourceExhausted, Message: name + ": rate limit exceeded"}
	}
	if max := int64(s.o.limits.MaxCallsPerConn); max > 0 && c.inflight.Load() >= max {
		return Errorf(ResourceExhausted, "%s: %d calls in flight on this connection (the server's Limits.MaxCallsPerConn)", name, max)
	}
	if s.conc != nil && !s.conc.Acquire() {
		return &Error{Code: ResourceExhausted, Message: name + ": too many calls in flight (the server's Limits.MaxCalls)"}
	}
	return nil
}

// serverCall is one call being served; its context is the handler's.
type serverCall struct {
	ctx    callCtx
	conn   *serverConn
	me     *methodEntry
	req    Message
	id     uint32
	oneway bool
	inline bool // serve on the reading goroutine (the method is quick)
	held   int  // the request's bytes, accounted while the call is in flight
}

// run serves the call on a pooled worker.
func (sc *serverCall) run() {
	sc.serve(sock.Queued)
}

// serve runs the handler and answers. mode is how the response is
// written; sock.Queued means "directly if no other call is in flight,
// else through the writer loop".
func (sc *serverCall) serve(mode sock.WriteMode) {
	c := sc.conn
	defer c.inflight.Add(-1)
	defer c.srv.callDone()
	defer c.srv.held.release(sc.held)
	defer c.held.release(sc.held)
	obs := c.srv.o.observer
	var start time.Time
	if obs != nil {
		start = time.Now()
	}
	resp, err := sc.invoke()
	if obs != nil {
		obs.Observe(metrics.Event{Side: metrics.Server, Service: sc.me.info.Service.Name, Method: sc.me.info.Method.Name,
			Code: CodeOf(err).String(), Latency: time.Since(start)})
	}
	md := sc.ctx.finish()
	if sc.oneway {
		if err != nil {
			c.srv.o.logger.Debug("rt: oneway handler failed", "method", sc.me.info.Method.FullName, "err", err)
		}
		return
	}
	c.mu.Lock()
	if c.calls[sc.id] == sc {
		delete(c.calls, sc.id)
	}
	if mode == sock.Queued && len(c.calls) == 0 {
		mode = sock.Direct
	}
	c.mu.Unlock()
	c.reply(sc.id, resp, err, md, mode)
}

// invoke validates the request and calls the handler, turning a panic into
// an Internal error.
func (sc *serverCall) invoke() (resp Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			sc.conn.srv.o.logger.Error("rt: handler panicked", "method", sc.me.info.Method.FullName, "panic", p)
			resp, err = nil, Errorf(Internal, "%s: handler panicked", sc.me.info.Method.FullName)
		}
	}()
	if err := authorize(&sc.ctx, sc.me, &sc.conn.srv.o); err != nil {
		return nil, err
	}
	if v, ok := sc.req.(Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, &Error{Code: InvalidArgument, Message: err.Error(), Cause: err}
		}
	}
	resp, err = sc.me.handler(&sc.ctx, sc.req)
	if err == nil && resp == nil && !sc.oneway {
		err = Errorf(Internal, "%s: handler returned a nil response and no error", sc.me.info.Method.FullName)
	}
	return resp, err
}

// authorize finds the principal of the call or stream whose handler
// context is ctx (the Authenticator's, else the client certificate's
// identity) and checks it against the method's access rule.
func authorize(ctx *callCtx, me *methodEntry, o *serverConfig) error {
	m := me.info.Method
	if o.auth != nil {
		p, err := o.auth.Authenticate(ctx, AuthRequest{Peer: ctx.peer, MD: ctx.md, Info: &me.info})
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return e
			}
			return &Error{Code: Unauthenticated, Message: m.FullName + ": " + err.Error(), Cause: err}
		}
		ctx.principal = p
	} else {
		ctx.principal = defaultPrincipal(ctx.peer)
	}
	if me.allow != nil && !allowed(me.allow, ctx.principal) {
		who := ctx.principal
		if who == "" {
			who = "an unauthenticated caller"
		}
		return Errorf(PermissionDenied, "%s: %s may not call it", m.FullName, who)
	}
	return nil
}

// reply writes a response frame: resp when err is nil, else err's code and
// message, written as mode says.
func (c *serverConn) reply(id uint32, resp Message, err error, md MD, mode sock.WriteMode) {
	h := wire.Header{Type: wire.TypeResponse, ID: id}
	if cerr := c.fits(&h, resp, err, md); cerr != nil {
		// The client would close the connection on it (and fail its other
		// calls): this call alone fails.
		resp, err, md = nil, cerr, nil
	}
	var werr error
	if err != nil {
		h.Status = uint8(CodeOf(err))
		if h.Status == 0 {
			h.Status = uint8(Unknown)
		}
		werr = c.w.Write(func(b []byte) []byte {
			return wire.AppendFrame(b, &h, md, []byte(errorMessage(err)))
		}, mode)
	} else if c.comp && c.srv.o.compress > 0 && resp.Size() >= c.srv.o.compress {
		body := resp.MarshalAppend(nil)
		werr = c.w.Write(func(b []byte) []byte {
			cz := c.srv.o.compressors.Get().(*wire.Compressor)
			b = cz.AppendFrame(b, &h, md, body, c.srv.o.compress)
			c.srv.o.compressors.Put(cz)
			return b
		}, mode)
	} else {
		size := resp.Size()
		werr = c.w.Write(func(b []byte) []byte {
			return resp.MarshalAppend(wire.AppendHeader(b, &h, md, size))
		}, mode)
	}
	if werr != nil {
		c.close(werr)
	}
}

// fits checks an answer against the client's announced limits: nil, or
// the error to answer with instead.
func (c *serverConn) fits(h *wire.Header, resp Message, err error, md MD) *Error {
	size := 0
	switch {
	case err != nil:
		size = len(errorMessage(err))
	case resp != nil:
		size = resp.Size()
	}
	cerr := c.limits.CheckSend(h, md, size)
	if cerr == nil {
		return nil
	}
	c.srv.o.logger.Warn("rt: answer over the client's limits", "peer", c.raw.RemoteAddr().String(), "err", cerr)
	return &Error{Code: ResourceExhausted, Message: "the answer exceeds the client's limits: " + cerr.Error(), Cause: cerr}
}

// refuse answers a call that did not run: the client may retry it elsewhere.
func (c *serverConn) refuse(id uint32, code Code, msg string) {
	c.reply(id, nil, &Error{Code: code, Message: msg}, MD{conn.MDRefused, "1"}, sock.Held)
}

// errorMessage is the message sent on the wire for err.
func errorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// waitHeld stops reading while the calls in flight hold more request
// bytes than the limits allow (Limits.MaxRequestBytes on the connection,
// MaxTotalRequestBytes on the server), until calls finish or the
// connection closes.
func (c *serverConn) waitHeld() error {
	for {
		ch := c.held.over()
		if ch == nil {
			ch = c.srv.held.over()
		}
		if ch == nil {
			return nil
		}
		if err := c.w.FlushHeld(); err != nil {
			return err
		}
		select {
		case <-ch:
		case <-c.closed:
			return net.ErrClosed
		}
	}
}

// closeWrite ends a drained connection gently (see Server.closeWrites):
// its last frames go out, then a FIN, and its reader drops what still
// comes until the client closes, for at most closeLinger.
func (c *serverConn) closeWrite() {
	w := c.writer()
	if w == nil {
		return
	}
	c.writeClosed.Store(true)
	_ = w.FlushHeld()
	for i := 0; i < 100 && !w.Flushed(); i++ {
		time.Sleep(time.Millisecond) // a bounded wait for the writer loop's last write
	}
	if cw, ok := c.raw.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = c.raw.SetReadDeadline(time.Now().Add(closeLinger))
}

// writer returns the connection's writer, nil before its handshake: for
// the goroutines other than the connection's own (shutdown, the ticker).
func (c *serverConn) writer() *sock.Writer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w
}

// writerH2 returns the connection's HTTP/2 side, nil if it has none.
func (c *serverConn) writerH2() *h2Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h2
}

// sendGoAway tells the client to send no more, naming the last request
// read: the server is closing, so it refuses (as not run) what it reads
// after that, and what it never reads is lost with the connection; either
// way the client knows that the requests after that id did not run.
func (c *serverConn) sendGoAway() {
	w := c.writer()
	if w == nil {
		return // not yet speaking yrpc: close will do
	}
	if c.h2 != nil {
		c.h2.sendGoAway(0, "server shutting down")
		return
	}
	c.admitMu.Lock()
	defer c.admitMu.Unlock()
	_ = w.Write(func(b []byte) []byte {
		return wire.AppendFrame(b, &wire.Header{Type: wire.TypeGoAway, ID: c.lastID, Status: uint8(Unavailable)}, nil, []byte("server shutting down"))
	}, sock.Direct)
}

// tick closes the connection when the client is silent for three heartbeat
// periods or idle past the idle timeout.
func (c *serverConn) tick(epoch int64, period time.Duration) {
	if c.writer() == nil {
		return // in its handshake (bounded by PrefaceTimeout), or handed to the HTTP/1.1 side, which has its own timeouts
	}
	if c.h2 != nil {
		c.h2.tick(epoch, period)
		return
	}
	o := &c.srv.o
	silent := time.Duration(epoch-c.lastFrame.Load()) * period
	if o.heartbeat > 0 && silent > 3*o.heartbeat {
		c.close(fmt.Errorf("rt: client %s silent for %v", c.nc.RemoteAddr(), silent))
		return
	}
	idle := time.Duration(epoch-c.lastCall.Load()) * period
	c.mu.Lock()
	busy := len(c.calls) > 0
	c.mu.Unlock()
	if o.idleTimeout > 0 && !busy && idle > o.idleTimeout {
		c.sendGoAway()
		c.close(fmt.Errorf("rt: client %s idle for %v", c.nc.RemoteAddr(), idle))
	}
}

// close tears the connection down and cancels its calls.
func (c *serverConn) close(err error) {
	c.closeOnce.Do(func() {
		close(c.closed)
		if err == nil || errors.Is(err, io.EOF) {
			err = io.EOF
		}
		c.stall.Stop()
		if h := c.writerH2(); h != nil {
			h.closed()
		}
		c.mu.Lock()
		streams, sc := c.streams, c.sc
		c.streams = map[uint32]*serverStream{}
		c.mu.Unlock()
		for _, ss := range streams {
			// Streams still open when the server closes end with
			// Unavailable: graceful shutdown let them finish until
			// its context ended.
			ss.reset(Errorf(Unavailable, "%s: server closing", ss.me.info.Method.FullName), true)
		}
		if sc != nil {
			sc.Fail(err)
		}
		if w := c.writer(); w != nil {
			// Let queued responses (e.g. GOAWAY) go out before closing.
			_ = w.FlushHeld()
			for i := 0; i < 100 && !w.Flushed(); i++ {
				time.Sleep(time.Millisecond)
			}
			w.Close(err)
		}
		c.raw.Close()
		c.mu.Lock()
		calls := c.calls
		c.calls = map[uint32]*serverCall{}
		c.mu.Unlock()
		for _, sc := range calls {
			sc.ctx.cancel(context.Canceled)
		}
		c.srv.removeConn(c)
		c.srv.wg.Done()
	})
}
