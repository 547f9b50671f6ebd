package rt

import (
	"context"
	"net/http"
	"time"
)

// serveStream serves a stream method: the handler gets the call as its
// ServerStreamer, reading request messages from the request body and
// writing response messages to the response as they come.
func (gc *grpcCall) serveStream() {
	// Streams last: the read deadline of unary requests does not apply.
	_ = http.NewResponseController(gc.w).SetReadDeadline(time.Time{})
	// A blocked RecvMsg ends with the stream's context (deadline, cancel).
	ctx := &gc.sc.ctx
	ctx.Done() // arms the deadline's timer
	stop := context.AfterFunc(ctx, func() { _ = gc.r.Body.Close() })
	defer stop()
	start := gc.g.s.observeStart()
	err := gc.runStream()
	gc.g.s.observe(&gc.sc.me.info, start, err)
	md := ctx.finish()
	gc.sendMu.Lock()
	defer gc.sendMu.Unlock()
	gc.ended = true
	md = append(md, gc.trailer...)
	if err != nil && !gc.headerSent {
		gc.fail(err, md)
		return
	}
	code, msg, details := OK, "", []byte(nil)
	if err != nil {
		code, msg, details = grpcStatus(err)
	}
	h := gc.w.Header()
	if !gc.headerSent {
		gc.setHeaders(h)
	}
	if gc.web {
		_, _ = gc.w.Write(gc.appendWebTrailers(nil, code, msg, details, md))
		return
	}
	setStatus(h, http.TrailerPrefix, code, msg, details)
	addMD(h, http.TrailerPrefix, md)
}

// runStream authorizes the stream and runs its handler, turning a panic
// into an Internal error.
func (gc *grpcCall) runStream() (err error) {
	m := gc.sc.me.info.Method
	defer func() {
		if p := recover(); p != nil {
			gc.g.s.o.logger.Error("rt: stream handler panicked", "method", m.FullName, "panic", p)
			err = Errorf(Internal, "%s: handler panicked", m.FullName)
		}
	}()
	if err := authorize(&gc.sc.ctx, gc.sc.me, &gc.g.s.o); err != nil {
		return err
	}
	return gc.sc.me.streamHandler(gc)
}

// Context implements ServerStreamer: the handler's context.
func (gc *grpcCall) Context() context.Context { return &gc.sc.ctx }

// RecvMsg implements ServerStreamer: the next request message, validated;
// io.EOF once the client half-closed.
func (gc *grpcCall) RecvMsg(m Message) error { return gc.recv(m, true) }

// SetTrailer implements ServerStreamer.
func (gc *grpcCall) SetTrailer(md MD) {
	gc.sendMu.Lock()
	defer gc.sendMu.Unlock()
	gc.trailer = append(gc.trailer, md...)
}

// SendMsg implements ServerStreamer: it writes m and flushes it to the
// client, waiting for HTTP/2 flow-control credit. The first message goes
// with the response headers, and the response metadata set so far.
func (gc *grpcCall) SendMsg(m Message) error {
	gc.sendMu.Lock()
	defer gc.sendMu.Unlock()
	name := gc.sc.me.info.Method.FullName
	if err := gc.sc.ctx.Err(); err != nil {
		return &Error{Code: CodeOf(err), Message: name + ": " + err.Error(), Cause: err}
	}
	if gc.ended {
		return Errorf(FailedPrecondition, "%s: SendMsg after the stream ended", name)
	}
	if !gc.headerSent {
		h := gc.w.Header()
		gc.setHeaders(h)
		addMD(h, "", gc.sc.ctx.takeResponseMD())
		gc.headerSent = true
	}
	wb := gc.g.pools.getBuf()
	defer gc.g.pools.putBuf(wb)
	wb.b = gc.appendMessage(wb.b, m)
	if _, err := gc.w.Write(wb.b); err != nil {
		return &Error{Code: Canceled, Message: name + ": send: " + err.Error(), Cause: err}
	}
	if f, ok := gc.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// takeResponseMD returns the response metadata set so far and clears it.
func (c *callCtx) takeResponseMD() MD {
	c.mu.Lock()
	defer c.mu.Unlock()
	md := c.respMD
	c.respMD = nil
	return md
}
