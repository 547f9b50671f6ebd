package rt

import (
	"context"
	"io"
)

// serveStream serves a stream method: the handler gets the call as its
// ServerStreamer, reading request messages from the call's reader (see
// readFrom) and sending response messages as they come. closeBody makes
// a blocked read of the request return: it runs once the handler's
// context ends while the handler runs, and once the handler returned
// while a goroutine it left is in RecvMsg (see stopRecv). When
// serveStream returns, no RecvMsg uses the call's reader any more.
func (gc *grpcCall) serveStream(closeBody func()) {
	// A blocked RecvMsg ends with the stream's context (deadline, cancel).
	ctx := &gc.sc.ctx
	ctx.Done() // arms the deadline's timer
	stop := context.AfterFunc(ctx, closeBody)
	start := gc.g.s.observeStart()
	err := gc.runStream()
	// Before the context's end: a goroutine the handler left with the
	// stream hears that it returned, not that it was canceled.
	gc.returned.Store(true)
	stop() // stopRecv closes the body, if a RecvMsg still reads it
	gc.g.s.observe(&gc.sc.me.info, start, err)
	md := ctx.finish()
	gc.end(err, md)
	gc.stopRecv(closeBody)
}

// end answers the stream: the status of the handler's err, with md.
func (gc *grpcCall) end(err error, md MD) {
	gc.sendMu.Lock()
	defer gc.sendMu.Unlock()
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

// stopRecv waits, once the handler returned, for a RecvMsg that a
// goroutine of the handler's is still in, making its read of the request
// return with closeBody: the call's reader and its pooled buffer (done
// gives it back) are the call's alone after it, and later RecvMsg calls
// fail without reading. Over HTTP/2 the read returns at once. Over
// HTTP/1.1 (gRPC-Web) closing the body waits for a read under way, which
// net/http has made short already: before the response's first bytes
// go out (end's at the latest) it reads the rest of the request body, up
// to 256 KiB.
func (gc *grpcCall) stopRecv(closeBody func()) {
	if !gc.recvMu.TryLock() {
		closeBody()
		gc.recvMu.Lock()
	}
	gc.recvMu.Unlock()
}

// afterReturn is the error of SendMsg or RecvMsg (op) on a stream whose
// handler returned (a goroutine of the handler's that kept it).
func (gc *grpcCall) afterReturn(op string) error { return afterReturn(&gc.sc.me.info, op) }

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
	if err := authorize(&gc.sc.ctx, gc.sc.me, gc.sc.conn); err != nil {
		return err
	}
	return gc.sc.me.streamHandler(gc)
}

// Context implements ServerStreamer: the handler's context.
func (gc *grpcCall) Context() context.Context { return &gc.sc.ctx }

// RecvMsg implements ServerStreamer: the next request message, validated;
// io.EOF once the client half-closed. Calls from several goroutines take
// turns.
func (gc *grpcCall) RecvMsg(m Message) error {
	if m == nil {
		return nilMessage(gc.sc.me.info.Method.FullName)
	}
	gc.recvMu.Lock()
	defer gc.recvMu.Unlock()
	if gc.returned.Load() { // the reader is not the call's to use any more
		return gc.afterReturn("RecvMsg")
	}
	err := gc.recv(m, true)
	if err != nil && err != io.EOF && gc.returned.Load() {
		return gc.afterReturn("RecvMsg") // woken by the return (stopRecv), not "context canceled"
	}
	return err
}

// SetTrailer implements ServerStreamer.
func (gc *grpcCall) SetTrailer(md MD) {
	gc.sendMu.Lock()
	defer gc.sendMu.Unlock()
	gc.trailer = appendUnreserved(gc.trailer, md)
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
	switch err := gc.sc.ctx.Err(); {
	case gc.returned.Load(): // read after the context: the return sets it before the cancel
		return gc.afterReturn("SendMsg")
	case err != nil:
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
		if gc.returned.Load() { // the return's cancel ended its wait for credit
			return gc.afterReturn("SendMsg")
		}
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
