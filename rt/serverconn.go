package rt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/limiter"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/wire"
)

// prefaceTimeout bounds the connection preface exchange.
const prefaceTimeout = 10 * time.Second

// serverConn is one client connection of a Server.
type serverConn struct {
	srv  *Server
	nc   net.Conn
	w    *connWriter
	r    *wire.Reader // used by one goroutine at a time
	ip   string       // the client's IP, for per-IP limits
	comp bool         // lz4 negotiated

	mu    sync.Mutex
	calls map[uint32]*serverCall // in flight, for cancel frames

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
	peek          *peeker
}

func newServerConn(s *Server, nc net.Conn) *serverConn {
	c := &serverConn{srv: s, nc: nc, w: newConnWriter(nc), calls: make(map[uint32]*serverCall)}
	c.peek = newPeeker(nc)
	c.dropFunc = func() { c.close(errors.New("rt: connection dropped by fault injection")) }
	c.stall = time.AfterFunc(time.Hour, c.watchdog)
	c.stall.Stop()
	c.ip = limiter.ClientKey(nc.RemoteAddr().String())
	e := s.epoch.Load()
	c.lastFrame.Store(e)
	c.lastCall.Store(e)
	return c
}

func (c *serverConn) serve() {
	if err := c.handshake(); err != nil {
		c.close(err)
		return
	}
	go c.w.loop()
	var negotiated wire.Features // the peer may send compressed bodies only if lz4 was negotiated
	if c.comp {
		negotiated = wire.FeatureLZ4
	}
	c.r = wire.NewReader(c.nc, wire.ReaderOptions{MaxFrameSize: c.srv.o.maxFrame, Features: negotiated})
	c.run()
}

// handshake exchanges prefaces.
func (c *serverConn) handshake() error {
	_ = c.nc.SetDeadline(time.Now().Add(prefaceTimeout))
	peer, err := wire.ReadPreface(c.nc)
	if err != nil {
		c.srv.o.logger.Info("rt: bad connection preface", "peer", c.nc.RemoteAddr().String(), "err", err)
		return err
	}
	mine := localPreface(&c.srv.o)
	c.comp = mine.Negotiate(peer).Has(wire.FeatureLZ4)
	if _, err := c.nc.Write(wire.AppendPreface(nil, mine)); err != nil {
		return err
	}
	return c.nc.SetDeadline(time.Time{})
}

func localPreface(o *options) wire.Preface {
	p := wire.Preface{Version: wire.Version, MaxFrameSize: uint32(o.maxFrame)}
	if o.compress > 0 {
		p.Features |= wire.FeatureLZ4
	}
	return p
}

// run reads frames until the connection fails, then closes it. It
// implements task: the goroutine reading a connection may change (see
// request handling below), so the loop can continue on a pooled worker.
func (c *serverConn) run() {
	if err := c.readLoop(); err != nil {
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
	r := c.r
	batch := 0 // requests read since the last wait
	var perRead loneAvg
	for {
		if r.Buffered() == 0 {
			// About to wait for the client: send the batch's answers.
			if err := c.w.flushHeld(); err != nil {
				return err
			}
			if perRead.add(batch) {
				// Lone calls: the client sends the next soon (see
				// WithSpinWait).
				c.peek.await(c.srv.o.spinWait, c.srv.o.spinGate)
			}
			batch = 0
		}
		f, err := r.Next()
		if err != nil {
			var fe *wire.FrameError
			if errors.As(err, &fe) {
				c.srv.o.logger.Warn("rt: closing connection after bad frame", "peer", c.nc.RemoteAddr().String(), "err", err)
			}
			return err
		}
		c.lastFrame.Store(c.srv.epoch.Load())
		switch f.Type {
		case wire.TypeRequest, wire.TypeOneway:
			batch++
			c.lastCall.Store(c.srv.epoch.Load())
			sc := c.request(f)
			if sc == nil {
				continue
			}
			if !sc.inline {
				c.srv.workers.run(sc)
				continue
			}
			mode := writeDirect
			if r.Buffered() > 0 {
				mode = writeHeld // more requests to serve first
			}
			// From here until the CAS below, the watchdog may hand r to
			// a worker: this goroutine must not touch it.
			tok := c.tokens.Add(1)
			sc.me.inlined.Add(1)
			c.serving.Store(sc.me)
			c.owner.Store(tok)
			c.watch()
			sc.serve(mode)
			if !c.owner.CompareAndSwap(tok, 0) {
				// A worker reads now; it sends what this goroutine held.
				return c.w.flushHeld()
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
			_ = c.w.write(func(b []byte) []byte {
				return wire.AppendFrame(b, &wire.Header{Type: wire.TypePong, ID: id}, nil, nil)
			}, writeHeld)
		case wire.TypePong, wire.TypeGoAway:
		default:
			return fmt.Errorf("rt: unexpected %s frame from client", f.Type)
		}
	}
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
		if err := c.w.flushHeld(); err != nil {
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

// request prepares one call, or answers it at once when it cannot run
// (then it returns nil).
func (c *serverConn) request(f *wire.Frame) *serverCall {
	s := c.srv
	oneway := f.Type == wire.TypeOneway
	if s.closing.Load() {
		if !oneway {
			c.refuse(f.ID, Unavailable, "server closing")
		}
		return nil
	}
	se, me := s.lookup(f.Method)
	if me == nil {
		if !oneway {
			c.reply(f.ID, nil, Errorf(Unimplemented, "unknown method id %#x", f.Method), nil, writeHeld)
		}
		return nil
	}
	var md MD
	if len(f.Metadata) > 0 {
		kv, err := wire.ParseMetadata(f.Metadata, nil)
		if err != nil {
			if !oneway {
				c.reply(f.ID, nil, Errorf(InvalidArgument, "%s: bad metadata: %v", me.info.Method.FullName, err), nil, writeHeld)
			}
			return nil
		}
		md = MD(kv)
	}
	now := s.o.clock.Now()
	if lim := se.limit.Load(); lim != nil && !lim.allow(c.ip, md.Get(MDApp), now) {
		if !oneway {
			c.refuse(f.ID, ResourceExhausted, me.info.Method.FullName+": rate limit exceeded")
		}
		return nil
	}
	req := me.info.Method.NewRequest()
	if err := req.Unmarshal(f.Body); err != nil {
		if !oneway {
			c.reply(f.ID, nil, Errorf(InvalidArgument, "%s: decode request: %v", me.info.Method.FullName, err), nil, writeHeld)
		}
		return nil
	}
	if s.conc != nil && !s.conc.Acquire() {
		if !oneway {
			c.refuse(f.ID, ResourceExhausted, me.info.Method.FullName+": too many calls in flight")
		}
		return nil
	}
	sc := &serverCall{conn: c, me: me, req: req, id: f.ID, oneway: oneway, inline: now.UnixNano() >= me.slowUntil.Load()}
	sc.ctx = callCtx{parent: context.Background(), md: md, peer: c.nc.RemoteAddr(), info: &me.info, clock: s.o.clock}
	sc.ctx.drop = c.dropFunc
	if f.Timeout > 0 {
		sc.ctx.deadline = now.Add(f.Timeout)
	}
	s.inflight.Add(1)
	if !oneway {
		c.mu.Lock()
		c.calls[f.ID] = sc
		c.mu.Unlock()
	}
	return sc
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
}

// run serves the call on a pooled worker.
func (sc *serverCall) run() {
	sc.serve(writeQueued)
}

// serve runs the handler and answers. mode is how the response is
// written; writeQueued means "directly if no other call is in flight,
// else through the writer loop".
func (sc *serverCall) serve(mode writeMode) {
	c := sc.conn
	defer c.srv.callDone()
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
	sc.ctx.mu.Lock()
	sc.ctx.finished = true
	md := sc.ctx.respMD
	sc.ctx.mu.Unlock()
	sc.ctx.cancel(context.Canceled)
	if sc.oneway {
		if err != nil {
			c.srv.o.logger.Debug("rt: oneway handler failed", "method", sc.me.info.Method.FullName, "err", err)
		}
		return
	}
	c.mu.Lock()
	delete(c.calls, sc.id)
	if mode == writeQueued && len(c.calls) == 0 {
		mode = writeDirect
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

// reply writes a response frame: resp when err is nil, else err's code and
// message, written as mode says.
func (c *serverConn) reply(id uint32, resp Message, err error, md MD, mode writeMode) {
	h := wire.Header{Type: wire.TypeResponse, ID: id}
	var werr error
	if err != nil {
		h.Status = uint8(CodeOf(err))
		if h.Status == 0 {
			h.Status = uint8(Unknown)
		}
		werr = c.w.write(func(b []byte) []byte {
			return wire.AppendFrame(b, &h, md, []byte(errorMessage(err)))
		}, mode)
	} else if c.comp && c.srv.o.compress > 0 && resp.Size() >= c.srv.o.compress {
		body := resp.MarshalAppend(nil)
		werr = c.w.write(func(b []byte) []byte {
			cz := c.srv.o.compressors.Get().(*wire.Compressor)
			b = cz.AppendFrame(b, &h, md, body, c.srv.o.compress)
			c.srv.o.compressors.Put(cz)
			return b
		}, mode)
	} else {
		size := resp.Size()
		werr = c.w.write(func(b []byte) []byte {
			return resp.MarshalAppend(wire.AppendHeader(b, &h, md, size))
		}, mode)
	}
	if werr != nil {
		c.close(werr)
	}
}

// refuse answers a call that did not run: the client may retry it elsewhere.
func (c *serverConn) refuse(id uint32, code Code, msg string) {
	c.reply(id, nil, &Error{Code: code, Message: msg}, MD{mdRefused, "1"}, writeHeld)
}

// mdRefused marks responses to calls that never reached a handler, so that
// clients know a retry cannot execute the call twice.
const mdRefused = "yrpc-refused"

// errorMessage is the message sent on the wire for err.
func errorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

func (c *serverConn) sendGoAway() {
	_ = c.w.write(func(b []byte) []byte {
		return wire.AppendFrame(b, &wire.Header{Type: wire.TypeGoAway, Status: uint8(Unavailable)}, nil, []byte("server shutting down"))
	}, writeDirect)
}

// tick closes the connection when the client is silent for three heartbeat
// periods or idle past the idle timeout.
func (c *serverConn) tick(epoch int64, period time.Duration) {
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
		if err == nil || errors.Is(err, io.EOF) {
			err = io.EOF
		}
		// Let queued responses (e.g. GOAWAY) go out before closing.
		_ = c.w.flushHeld()
		for i := 0; i < 100 && !c.w.flushed(); i++ {
			time.Sleep(time.Millisecond)
		}
		c.stall.Stop()
		c.w.close(err)
		c.nc.Close()
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
