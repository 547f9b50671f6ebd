package rt

import (
	"net"
	"strconv"

	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/internal/h2"
	"github.com/yrpc/yrpc/rt/internal/sock"
)

// The send side of HTTP/2 calls. Everything here but send runs under
// the connection writer's lock, in the functions given to its Write:
// frames are appended to the writer's buffer in order, the HPACK
// encoder's state follows them, and the send windows are counted where
// the frames are. Data that the client's windows do not let out yet
// waits in its stream (pend) and the stream in h.out.blocked, until a
// WINDOW_UPDATE or SETTINGS frame gives credit (drain).

// send implements grpcTransport. A stream's message returns once the
// client's windows let it out (or the stream ends); a unary call's answer
// is left to go out when they do.
func (st *h2Stream) send(o *grpcOut) error {
	h := st.h
	var inc uint32
	if o.end {
		// The call is done with its request: its bytes' credit goes
		// back with the answer.
		h.mu.Lock()
		held := st.held
		st.held = 0
		h.mu.Unlock()
		inc = h.inflow.Add(held)
	}
	err := h.w.Write(func(b []byte) []byte {
		if inc > 0 {
			b = h2.AppendWindowUpdate(b, 0, inc)
		}
		return h.appendOut(b, st, o)
	}, st.mode)
	if err != nil || o.end || st.pipe == nil {
		return err
	}
	for st.pendingN.Load() > 0 {
		select {
		case <-st.wake:
		case <-st.sc.ctx.Done():
			return st.sc.ctx.Err()
		case <-h.c.closed:
			return net.ErrClosed
		}
	}
	if st.dead.Load() {
		return errStreamReset
	}
	return nil
}

// wakeSender wakes a SendMsg waiting for credit.
func (st *h2Stream) wakeSender() {
	if st.wake != nil {
		select {
		case st.wake <- struct{}{}:
		default:
		}
	}
}

// appendOut appends the frames of o.
func (h *h2Conn) appendOut(b []byte, st *h2Stream, o *grpcOut) []byte {
	if st.dead.Load() || st.endQueued {
		return b
	}
	if o.trailersOnly(st.web) {
		st.endQueued, st.sendEnded = true, true
		b = h.appendHeaders(b, st, &o.status, o.md, true)
		return h.closeSend(b, st)
	}
	if o.headers {
		md := o.md
		if o.end {
			md = nil // they go in the trailers
		}
		b = h.appendHeaders(b, st, nil, md, false)
	}
	if o.end {
		st.endQueued, st.endStatus, st.endMD = true, o.status, o.md
	}
	if o.msg != nil || len(o.body) > 0 {
		b = h.appendData(b, st, o.msg, o.body)
	}
	if o.end && st.pend == nil && !st.sendEnded { // flushPending may have ended it
		b = h.finishEnd(b, st)
	}
	return b
}

// appendData appends msg (length-prefixed) and body as DATA frames, as
// far as the windows allow; the rest waits in st.pend.
func (h *h2Conn) appendData(b []byte, st *h2Stream, msg Message, body []byte) []byte {
	out := &h.out
	size, n := 0, len(body)
	if msg != nil {
		size = msg.Size()
		n += grpcwire.HeaderLen + size
	}
	if st.pend == nil && int64(n) <= min(out.conn, out.init+st.sendWin) && n <= out.maxFrame {
		// One frame, marshaled in place: the common case.
		var flags uint8
		if st.endQueued && st.bodyEnd {
			flags, st.dataEnded = h2.FlagEndStream, true
		}
		b = h2.AppendFrameHeader(b, h2.FrameData, flags, st.id, n)
		if msg != nil {
			b = msg.MarshalAppend(grpcwire.AppendHeader(b, 0, size))
		}
		out.conn -= int64(n)
		st.sendWin -= int64(n)
		return append(b, body...)
	}
	if st.pend == nil {
		st.pend = h.g.pools.getBuf()
	}
	if msg != nil {
		st.pend.b = msg.MarshalAppend(grpcwire.AppendHeader(st.pend.b, 0, size))
	}
	st.pend.b = append(st.pend.b, body...)
	return h.flushPending(b, st)
}

// flushPending appends as much of st's waiting data as the windows
// allow, and the end of the response once all of it is out.
func (h *h2Conn) flushPending(b []byte, st *h2Stream) []byte {
	out := &h.out
	p := st.pend.b
	for st.pendOff < len(p) {
		m := min(int64(min(len(p)-st.pendOff, out.maxFrame)), out.conn, out.init+st.sendWin)
		if m <= 0 {
			st.pendingN.Store(int64(len(p) - st.pendOff))
			if !st.inBlocked {
				st.inBlocked = true
				out.blocked = append(out.blocked, st)
			}
			return b
		}
		end := st.pendOff+int(m) == len(p) && st.endQueued && st.bodyEnd
		b = h2.AppendData(b, st.id, end, p[st.pendOff:st.pendOff+int(m)])
		st.dataEnded = st.dataEnded || end
		st.pendOff += int(m)
		out.conn -= m
		st.sendWin -= m
	}
	h.g.pools.putBuf(st.pend)
	st.pend, st.pendOff = nil, 0
	st.pendingN.Store(0)
	st.wakeSender()
	if st.endQueued {
		b = h.finishEnd(b, st)
	}
	return b
}

// drain sends what waited for credit, as far as the windows now allow.
func (h *h2Conn) drain(b []byte) []byte {
	out := &h.out
	keep := out.blocked[:0]
	for _, st := range out.blocked {
		if st.pend != nil && !st.dead.Load() {
			b = h.flushPending(b, st)
		}
		switch {
		case st.pend == nil:
		case st.dead.Load():
			h.g.pools.putBuf(st.pend)
			st.pend = nil
		default:
			keep = append(keep, st)
			continue
		}
		st.inBlocked = false
	}
	clear(out.blocked[len(keep):])
	out.blocked = keep
	return b
}

// finishEnd appends the end of st's response: its trailers, or END_STREAM
// on an empty DATA frame if the last one did not carry it.
func (h *h2Conn) finishEnd(b []byte, st *h2Stream) []byte {
	switch {
	case !st.bodyEnd:
		e := h.out.enc
		e.Start(b)
		statusFields(e, &st.endStatus)
		mdFields(e, st.endMD)
		b = e.End(st.id, true, h.out.maxFrame)
	case !st.dataEnded:
		b = h2.AppendData(b, st.id, true, nil)
	}
	st.sendEnded, st.endMD = true, nil
	return h.closeSend(b, st)
}

// closeSend follows the end of a response whose request has not ended
// with RST_STREAM(NO_ERROR): the client need not send the rest (RFC 9113
// 8.1).
func (h *h2Conn) closeSend(b []byte, st *h2Stream) []byte {
	if st.recvEnded.Load() {
		return b
	}
	return h2.AppendRSTStream(b, st.id, h2.ErrNo)
}

// Content type of gRPC-Web responses.
const contentTypeWeb = grpcwire.ContentTypeWeb + "+proto"

// appendHeaders appends the response headers of st: with the status
// (a Trailers-Only response) unless status is nil, and md.
func (h *h2Conn) appendHeaders(b []byte, st *h2Stream, status *grpcEnd, md MD, endStream bool) []byte {
	e := h.out.enc
	e.Start(b)
	e.Field(":status", "200", false)
	if st.web {
		e.Field("content-type", contentTypeWeb, false)
	} else {
		e.Field("content-type", grpcwire.ContentTypeGRPC, false)
	}
	if st.gzipOut {
		e.Field("grpc-encoding", "gzip", false)
	}
	if st.acceptEnc {
		e.Field("grpc-accept-encoding", acceptedEncodings, false)
	}
	if status != nil {
		statusFields(e, status)
	}
	mdFields(e, md)
	return e.End(st.id, endStream, h.out.maxFrame)
}

// statusFields adds grpc-status, grpc-message and grpc-status-details-bin.
// The status is indexed in the dynamic table, the others never are.
func statusFields(e *h2.BlockEncoder, s *grpcEnd) {
	e.Field("grpc-status", strconv.Itoa(int(s.code)), false)
	if s.msg != "" {
		e.Field("grpc-message", grpcwire.EncodeMessage(s.msg), true)
	}
	if s.details != nil {
		e.Field("grpc-status-details-bin", grpcwire.EncodeBinary(string(s.details)), true)
	}
}

// mdFields adds the response metadata md (see outgoingMD), never indexed.
func mdFields(e *h2.BlockEncoder, md MD) {
	if len(md) == 0 {
		return
	}
	for k, v := range outgoingMD(md) {
		e.Field(k, v, true)
	}
}

// httpError answers a request that is not a gRPC call with an HTTP error:
// status and text.
func (st *h2Stream) httpError(status int, text string) {
	h := st.h
	st.bodyEnd = true
	_ = h.w.Write(func(b []byte) []byte {
		e := h.out.enc
		e.Start(b)
		e.Field(":status", strconv.Itoa(status), false)
		e.Field("content-type", "text/plain; charset=utf-8", false)
		if status == 405 {
			e.Field("allow", "POST", false)
		}
		b = e.End(st.id, false, h.out.maxFrame)
		st.endQueued = true
		b = h.appendData(b, st, nil, []byte(text+"\n"))
		if st.pend == nil && !st.sendEnded {
			b = h.finishEnd(b, st)
		}
		return b
	}, sock.Held)
}
