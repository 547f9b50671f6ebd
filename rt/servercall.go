package rt

import (
	"context"
	"errors"
	"time"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/wire"
)

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
			c.reply(f.ID, "", nil, r.err, nil, sock.Held)
		}
		return nil
	}
	req := me.newRequest()
	sc, err := newServerCall(req, f.Body)
	if err != nil {
		me.reuseRequest(req)
		if s.conc != nil {
			s.conc.Release()
		}
		if !oneway {
			c.reply(f.ID, me.info.Method.FullName, nil, Errorf(InvalidArgument, "%s: decode request: %v", me.info.Method.FullName, err), nil, sock.Held)
		}
		return nil
	}
	sc.conn, sc.me, sc.req, sc.id, sc.oneway = c, me, req, f.ID, oneway
	sc.inline = me.quick(s.o.clock)
	if !oneway {
		c.mu.Lock()
		_, dup := c.calls[f.ID]
		gone := isClosed(c.closed)
		if !dup && !gone {
			c.calls[f.ID] = sc
		}
		c.mu.Unlock()
		if gone {
			// The connection closed while this request was read: close
			// has canceled the calls it tracked, and would never cancel
			// this one. Nobody is left to answer.
			me.reuseRequest(req)
			if s.conc != nil {
				s.conc.Release()
			}
			return nil
		}
		if dup {
			// A broken client: refuse the second call, and keep the
			// first one tracked, so that a cancel or the connection's
			// end still reaches it.
			me.reuseRequest(req)
			if s.conc != nil {
				s.conc.Release()
			}
			c.reply(f.ID, me.info.Method.FullName, nil, Errorf(InvalidArgument, "%s: request id %d is in use by a call in flight", me.info.Method.FullName, f.ID), nil, sock.Held)
			return nil
		}
	}
	c.initContext(&sc.ctx, f, me, md)
	sc.arrived = c.arrived.Sub(s.made)
	sc.held = len(f.Body)
	c.held.add(sc.held)
	s.held.add(sc.held)
	s.inflight.Add(1)
	c.inflight.Add(1)
	return sc
}

// initContext sets up ctx as the handler context of the call or stream
// that f opens. Its deadline counts from when f was read off the
// connection (wall clock, whatever the server's Clock).
func (c *serverConn) initContext(ctx *callCtx, f *wire.Frame, me *methodEntry, md MD) {
	ctx.parent, ctx.md, ctx.peer, ctx.info, ctx.drop = context.Background(), md, c.peer, &me.info, c.dropFunc
	if f.Timeout > 0 {
		ctx.deadline = c.arrived.Add(f.Timeout)
	}
}

// admitCall checks a call to method me of se with metadata md against the
// registry token, the service's group and version (only if checkKey;
// neither for a built-in service), its rate limit and the limits on calls
// in flight; yrpc's and gRPC's calls and streams alike. It returns why the
// call is refused (it did not run), or nil with a slot of Limits.MaxCalls
// taken: Server.callDone gives it back. A refusal is counted in the
// server's metrics, under its code, with a latency of 0.
func (c *serverConn) admitCall(se *serviceEntry, me *methodEntry, md MD, checkKey bool) *Error {
	e := c.admission(se, me, md, checkKey)
	if e != nil {
		if obs := c.srv.o.observer; obs != nil {
			obs.Observe(metrics.Event{Side: metrics.Server, Service: me.info.Service.Name, Method: me.info.Method.Name, Code: e.Code.String()})
		}
	}
	return e
}

// admission is admitCall's decision.
func (c *serverConn) admission(se *serviceEntry, me *methodEntry, md MD, checkKey bool) *Error {
	s := c.srv
	name := me.info.Method.FullName
	if !se.builtin && !s.tokenOK(md) {
		return &Error{Code: Unauthenticated, Message: name + ": no valid registry token: call this provider through the registry"}
	}
	if g, v := md.Get(MDGroup), md.Get(MDVersion); checkKey && !se.builtin && (g != se.key.Group || v != se.key.Version) {
		return Errorf(NotFound, "%s: this server serves %s, not %s", name, se.key, registry.Key{Service: se.key.Service, Group: g, Version: v})
	}
	if lim := se.limit.Load(); lim != nil && !lim.afterAuth(s.o.auth) && !lim.allow(c.ip, c.peer, md, s.o.clock.Now()) {
		return rateLimited(name)
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
	// arrived is when the request was read off the connection, since
	// the server was made (Server.made): its latency counts from then.
	arrived time.Duration
}

// run serves the call on a pooled worker.
func (sc *serverCall) run() {
	sc.serve(sock.Queued)
}

// serve runs the handler and answers. mode is how the response is
// written; sock.Queued means "directly if no other call is in flight,
// else through the writer loop".
func (sc *serverCall) serve(mode sock.WriteMode) {
	// Deferred, so that a handler that ends its goroutine
	// (runtime.Goexit, as t.FailNow does) still lets the call go.
	defer sc.conn.callDone(sc.held)
	resp, err := sc.invoke()
	sc.answer(mode, resp, err)
}

// callDone lets a call go that held n request bytes.
func (c *serverConn) callDone(n int) {
	c.held.release(n)
	c.srv.held.release(n)
	c.srv.callDone()
	c.inflight.Add(-1)
}

// answer reports the call's end and answers it (unless it is oneway). It
// is not part of serve, which stays on the stack while the handler runs,
// so that a handler that blocks holds less stack for the garbage
// collector to scan at every cycle.
func (sc *serverCall) answer(mode sock.WriteMode, resp Message, err error) {
	c := sc.conn
	if obs := c.srv.o.observer; obs != nil {
		obs.Observe(metrics.Event{Side: metrics.Server, Service: sc.me.info.Service.Name, Method: sc.me.info.Method.Name,
			Code: CodeOf(err).String(), Latency: time.Since(c.srv.made) - sc.arrived})
	}
	md := sc.ctx.finish()
	if sc.oneway {
		if err != nil {
			c.srv.o.logger.Debug("rt: oneway handler failed", "method", sc.me.info.Method.FullName, "err", err)
		}
	} else {
		c.mu.Lock()
		if c.calls[sc.id] == sc {
			delete(c.calls, sc.id)
		}
		if mode == sock.Queued && len(c.calls) == 0 {
			mode = sock.Direct
		}
		c.mu.Unlock()
		c.reply(sc.id, sc.me.info.Method.FullName, resp, err, md, mode)
	}
	sc.me.reuseRequest(sc.req) // after reply: the response may be the request
	// A handler that keeps its context, or a string of its request (see
	// newServerCall), keeps this record: it must not keep the connection
	// alive, nor the request message, which may be reused.
	sc.conn, sc.req = nil, nil
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
	if err := authorize(&sc.ctx, sc.me, sc.conn); err != nil {
		return nil, err
	}
	if v, ok := sc.req.(Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, &Error{Code: InvalidArgument, Message: err.Error(), Cause: err}
		}
	}
	resp, err = sc.me.handler(&sc.ctx, sc.req)
	if err == nil && resp == nil && !sc.oneway {
		if sc.me.info.Method.Oneway {
			// A client that calls a oneway method as a unary one (a schema
			// of before the method became oneway) gets an empty answer, as
			// gRPC clients get google.protobuf.Empty: the call ran.
			return emptyMessage{}, nil
		}
		err = Errorf(Internal, "%s: handler returned a nil response and no error", sc.me.info.Method.FullName)
	}
	return resp, err
}

// authorize finds the principal of the call or stream on c whose handler
// context is ctx (the Authenticator's, else the client certificate's
// identity), checks a per-app rate limit keyed on the Authenticator's
// principal (see callLimiter.afterAuth) and the method's access rule.
func authorize(ctx *callCtx, me *methodEntry, c *serverConn) error {
	o := &c.srv.o
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
		// A per-app limit keys on the principal, known only now.
		if lim := me.limit.Load(); lim != nil && lim.afterAuth(o.auth) && !lim.allowAs(c.ip, p, ctx.md, o.clock.Now()) {
			return refusedAfterAuth(ctx, m.FullName)
		}
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

// reply writes a response frame of call id to method name ("" when
// unknown): resp when err is nil, else err's code and message, written as
// mode says.
func (c *serverConn) reply(id uint32, name string, resp Message, err error, md MD, mode sock.WriteMode) {
	h := wire.Header{Type: wire.TypeResponse, ID: id}
	size := 0 // the response's, computed once: Size walks the message
	if err == nil && resp != nil {
		size = resp.Size()
	}
	if cerr := c.fits(name, &h, size, err, md); cerr != nil {
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
	} else if c.comp && c.srv.o.compress > 0 && size >= c.srv.o.compress {
		body := resp.MarshalAppend(make([]byte, 0, size))
		werr = c.w.Write(func(b []byte) []byte {
			cz := c.srv.o.compressors.Get().(*wire.Compressor)
			b = cz.AppendFrame(b, &h, md, body, c.srv.o.compress)
			c.srv.o.compressors.Put(cz)
			return b
		}, mode)
	} else {
		// Sized: a large response is not grown append by append.
		werr = c.w.WriteSized(wire.FrameSize(&h, md, size), func(b []byte) []byte {
			return resp.MarshalAppend(wire.AppendHeader(b, &h, md, size))
		}, mode)
	}
	if werr != nil {
		c.close(werr)
	}
}

// fits checks an answer to method name against the client's announced
// limits: nil, or the error to answer with instead, which names the
// method. size is the response's size when err is nil.
func (c *serverConn) fits(name string, h *wire.Header, size int, err error, md MD) *Error {
	if err != nil {
		size = len(errorMessage(err))
	}
	cerr := c.limits.CheckSend(h, md, size)
	if cerr == nil {
		return nil
	}
	c.srv.o.logger.Warn("rt: answer over the client's limits", "method", name, "peer", c.raw.RemoteAddr().String(), "err", cerr)
	msg := "the answer exceeds the client's limits: " + cerr.Error()
	if name != "" {
		msg = name + ": " + msg
	}
	return &Error{Code: ResourceExhausted, Message: msg, Cause: cerr}
}

// refuse answers a call that did not run: the client may retry it elsewhere.
func (c *serverConn) refuse(id uint32, code Code, msg string) {
	c.reply(id, "", nil, &Error{Code: code, Message: msg}, MD{conn.MDRefused, "1"}, sock.Held)
}

// errorMessage is the message sent on the wire for err.
func errorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
