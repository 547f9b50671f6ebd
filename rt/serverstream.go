package rt

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/internal/stream"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/wire"
)

// serverStream is one stream being served: the handler's ServerStreamer,
// and a task that runs the handler on a pooled worker (streams live long,
// so they never run on the connection's reading goroutine).
type serverStream struct {
	ctx  callCtx // the handler's context
	conn *serverConn
	me   *methodEntry
	s    *stream.Stream
	id   uint32
	// arrived is when the stream's open frame was read off the
	// connection, since the server was made (as serverCall.arrived).
	arrived time.Duration

	// sendMu and recvMu serialize SendMsg and RecvMsg: a stream.Stream
	// has one sender and one receiver (its Send checks and spends credit
	// in two steps; its end wakes one waiting Recv).
	sendMu, recvMu sync.Mutex

	mu      sync.Mutex
	trailer MD
	over    bool // closed or reset: no frame of the stream goes out any more
}

var _ ServerStreamer = (*serverStream)(nil)

func (ss *serverStream) Context() context.Context { return &ss.ctx }

func (ss *serverStream) SendMsg(m Message) error {
	if m == nil {
		return nilMessage(ss.me.info.Method.FullName)
	}
	ss.sendMu.Lock()
	err := ss.s.Send(m)
	ss.sendMu.Unlock()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errHandlerReturned):
		return ss.afterReturn("SendMsg")
	case errors.Is(err, stream.ErrCanceled):
		return ctxError(ss.ctx.Err(), ss.me.info.Method.FullName)
	case errors.Is(err, stream.ErrTooLarge):
		return &Error{Code: ResourceExhausted, Message: ss.me.info.Method.FullName + ": " + err.Error(), Cause: err}
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Message: ss.me.info.Method.FullName + ": send: " + err.Error(), Cause: err}
}

func (ss *serverStream) RecvMsg(m Message) error {
	if m == nil {
		return nilMessage(ss.me.info.Method.FullName)
	}
	ss.recvMu.Lock()
	err := ss.s.Recv(m)
	ss.recvMu.Unlock()
	switch {
	case err == nil:
		if v, ok := m.(Validator); ok {
			if err := v.Validate(); err != nil {
				return &Error{Code: InvalidArgument, Message: err.Error(), Cause: err}
			}
		}
		return nil
	case err == io.EOF:
		return err
	case errors.Is(err, errHandlerReturned):
		return ss.afterReturn("RecvMsg")
	case errors.Is(err, stream.ErrCanceled):
		return ctxError(ss.ctx.Err(), ss.me.info.Method.FullName)
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: InvalidArgument, Message: ss.me.info.Method.FullName + ": decode message: " + err.Error(), Cause: err}
}

func (ss *serverStream) SetTrailer(md MD) {
	ss.mu.Lock()
	ss.trailer = appendUnreserved(ss.trailer, md)
	ss.mu.Unlock()
}

// openStream starts the stream that f opens, or refuses it with a close
// frame (marked as not run when it did not).
func (c *serverConn) openStream(f *wire.Frame) {
	if c.sc == nil {
		return // not negotiated: the reader refuses stream frames already
	}
	_, me, md, r := c.admit(f, true)
	if r != nil {
		var trailer MD
		if r.notRun {
			trailer = MD{conn.MDRefused, "1"}
		}
		c.closeStream(f.ID, r.err, trailer)
		return
	}
	ss := &serverStream{conn: c, me: me, id: f.ID, arrived: c.arrived.Sub(c.srv.made)}
	c.initContext(&ss.ctx, f, me, md)
	ss.s = stream.New(c.sc, f.ID, &ss.ctx, me.info.Method.Policy.MaxMessageSize)
	c.srv.inflight.Add(1)
	c.inflight.Add(1)
	c.mu.Lock()
	_, dup := c.streams[f.ID]
	if _, call := c.calls[f.ID]; call {
		dup = true
	}
	if !dup {
		c.streams[f.ID] = ss
	}
	c.mu.Unlock()
	if dup {
		ss.s.Leave()
		c.srv.inflight.Add(-1)
		c.inflight.Add(-1)
		if c.srv.conc != nil {
			c.srv.conc.Release()
		}
		c.closeStream(f.ID, Errorf(InvalidArgument, "%s: id %d is in use by a call or stream in flight", me.info.Method.FullName, f.ID), nil)
		return
	}
	select {
	case <-c.closed: // closed meanwhile (frames read before it still come): close may have missed it
		ss.reset(Errorf(Unavailable, "%s: connection closed", me.info.Method.FullName), false)
	default:
	}
	c.srv.workers.run(ss)
}

// run serves the stream: authentication and authorization, the stream
// interceptors and the handler; then the close frame with the handler's
// status and trailer.
func (ss *serverStream) run() {
	c := ss.conn
	defer c.srv.callDone()
	defer c.inflight.Add(-1)
	obs := c.srv.o.observer
	err := ss.serve()
	if obs != nil {
		obs.Observe(metrics.Event{Side: metrics.Server, Service: ss.me.info.Service.Name, Method: ss.me.info.Method.Name,
			Code: CodeOf(err).String(), Latency: time.Since(c.srv.made) - ss.arrived})
	}
	ss.mu.Lock()
	over, trailer := ss.over, ss.trailer
	ss.over = true
	ss.mu.Unlock()
	if !over {
		// Before the cancel: a goroutine the handler left using the
		// stream hears that it returned, not that it was canceled.
		ss.s.End(errHandlerReturned, errHandlerReturned)
	}
	// A yrpc stream has no response headers: SetResponseMetadata's
	// pairs go in the trailer (over gRPC they come back as headers or
	// trailers), ahead of SetTrailer's.
	if md := ss.ctx.finish(); len(md) > 0 {
		trailer = append(md, trailer...)
	}
	c.mu.Lock()
	delete(c.streams, ss.id)
	c.mu.Unlock()
	ss.s.Leave()
	if over {
		return // reset by the client, or the connection is gone
	}
	c.closeStream(ss.id, err, trailer)
}

// errHandlerReturned is what Send and Recv return after the handler
// returned; SendMsg and RecvMsg turn it into an error naming the method.
var errHandlerReturned = errors.New("the handler has returned")

// afterReturn is the error of SendMsg or RecvMsg (op) on a stream whose
// handler returned (a goroutine of the handler's that kept it).
func (ss *serverStream) afterReturn(op string) error { return afterReturn(&ss.me.info, op) }

// afterReturn is the error of op (SendMsg, RecvMsg) on a stream of info's
// method whose handler returned, on either endpoint.
func afterReturn(info *CallInfo, op string) error {
	return Errorf(FailedPrecondition, "%s: %s after the stream's handler returned", info.Method.FullName, op)
}

// serve runs the handler, turning a panic into an Internal error.
func (ss *serverStream) serve() (err error) {
	name := ss.me.info.Method.FullName
	defer func() {
		if p := recover(); p != nil {
			ss.conn.srv.o.logger.Error("rt: stream handler panicked", "method", name, "panic", p)
			err = Errorf(Internal, "%s: handler panicked", name)
		}
	}()
	if err := authorize(&ss.ctx, ss.me, ss.conn); err != nil {
		return err
	}
	return ss.me.streamHandler(ss)
}

// closeStream ends stream id with err's status (OK for nil) and trailer.
func (c *serverConn) closeStream(id uint32, err error, trailer MD) {
	var code Code
	var msg string
	if err != nil {
		code = CodeOf(err)
		if code == OK {
			code = Unknown
		}
		msg = errorMessage(err)
	}
	if werr := c.w.Write(func(b []byte) []byte {
		return wire.AppendStreamClose(b, id, uint8(code), msg, trailer)
	}, sock.Direct); werr != nil {
		c.close(werr)
	}
}

// streamFrame acts on a frame of an open stream: a message, the client's
// half-close or reset, a window update. It returns an error when the
// connection must close.
func (c *serverConn) streamFrame(f *wire.Frame) error {
	if f.Type == wire.TypeWindowUpdate && f.ID == 0 {
		if c.sc == nil {
			return nil
		}
		return c.sc.Grant(f.Increment)
	}
	c.mu.Lock()
	ss := c.streams[f.ID]
	c.mu.Unlock()
	if ss == nil { // over here; it may have crossed the close
		if f.Type == wire.TypeStreamMessage && c.sc != nil {
			return c.sc.Drop(f.Body) // the client spent credit on it
		}
		return nil
	}
	switch f.Type {
	case wire.TypeStreamMessage:
		if err := ss.s.Deliver(f.Body); err != nil {
			if stream.IsConnError(err) {
				return err
			}
			code := Internal
			if errors.Is(err, stream.ErrTooLarge) {
				code = ResourceExhausted
			}
			ss.reset(Errorf(code, "%s: %v", ss.me.info.Method.FullName, err), true)
		}
	case wire.TypeStreamHalfClose:
		ss.s.RemoteDone()
	case wire.TypeStreamReset:
		ss.reset(&Error{Code: Code(f.Status), Message: ss.me.info.Method.FullName + ": reset by the client: " + string(f.Body), Remote: true}, false)
	case wire.TypeWindowUpdate:
		if err := ss.s.Grant(f.Increment); err != nil {
			ss.reset(Errorf(Internal, "%s: the client broke flow control: %v", ss.me.info.Method.FullName, err), true)
		}
	}
	return nil
}

// reset ends the stream before its handler returned: the handler's
// context is canceled and its Send and Recv fail with err; with send set,
// a reset frame tells the client.
func (ss *serverStream) reset(err *Error, send bool) {
	ss.mu.Lock()
	if ss.over {
		ss.mu.Unlock()
		return
	}
	ss.over = true
	ss.mu.Unlock()
	ss.s.End(err, err)
	ss.ctx.cancel(context.Canceled)
	if send {
		id := ss.id
		_ = ss.conn.w.Write(func(b []byte) []byte {
			return wire.AppendStreamReset(b, id, uint8(err.Code), err.Message)
		}, sock.Queued)
	}
}
