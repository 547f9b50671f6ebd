package rt

import (
	"context"
)

// serveStream serves a stream method: the handler gets the call as its
// ServerStreamer, reading request messages from the call's reader (see
// readFrom) and sending response messages as they come. closeBody, run
// once the handler's context ends, makes a blocked read of the request
// return.
func (gc *grpcCall) serveStream(closeBody func()) {
	// A blocked RecvMsg ends with the stream's context (deadline, cancel).
	ctx := &gc.sc.ctx
	ctx.Done() // arms the deadline's timer
	stop := context.AfterFunc(ctx, closeBody)
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
	o := &gc.out
	*o = grpcOut{headers: !gc.headerSent, end: true, md: md}
	if err != nil {
		o.status.code, o.status.msg, o.status.details = grpcStatus(err)
	}
	if gc.web {
		o.body = gc.appendWebTrailers(nil, o.status.code, o.status.msg, o.status.details, md)
	}
	_ = gc.tr.send(o)
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
func (gc *grpcCall) RecvMsg(m Message) error {
	if m == nil {
		return nilMessage(gc.sc.me.info.Method.FullName)
	}
	gc.sendMu.Lock()
	ended := gc.ended
	gc.sendMu.Unlock()
	if ended { // else the closed request body says only "context canceled"
		return Errorf(FailedPrecondition, "%s: RecvMsg after the stream's handler returned", gc.sc.me.info.Method.FullName)
	}
	return gc.recv(m, true)
}

// SetTrailer implements ServerStreamer.
func (gc *grpcCall) SetTrailer(md MD) {
	gc.sendMu.Lock()
	defer gc.sendMu.Unlock()
	gc.trailer = append(gc.trailer, md...)
}

// SendMsg implements ServerStreamer: it sends m to the client, waiting
// for HTTP/2 flow-control credit. The first message goes with the
// response headers, and the response metadata set so far.
func (gc *grpcCall) SendMsg(m Message) error {
	if m == nil {
		return nilMessage(gc.sc.me.info.Method.FullName)
	}
	gc.sendMu.Lock()
	defer gc.sendMu.Unlock()
	name := gc.sc.me.info.Method.FullName
	if gc.ended { // first: the handler's return canceled the context too
		return Errorf(FailedPrecondition, "%s: SendMsg after the stream's handler returned", name)
	}
	if err := gc.sc.ctx.Err(); err != nil {
		return &Error{Code: CodeOf(err), Message: name + ": " + err.Error(), Cause: err}
	}
	o := &gc.out
	*o = grpcOut{headers: !gc.headerSent}
	if o.headers {
		o.md = gc.sc.ctx.takeResponseMD()
		gc.headerSent = true
	}
	var zb *grpcBuf
	if o.msg, zb = gc.compress(m); zb != nil {
		o.body = zb.b
		defer gc.g.pools.putBuf(zb)
	}
	if err := gc.tr.send(o); err != nil {
		return &Error{Code: Canceled, Message: name + ": send: " + err.Error(), Cause: err}
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
