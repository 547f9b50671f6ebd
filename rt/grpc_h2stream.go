package rt

import (
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/internal/h2"
	"github.com/yrpc/yrpc/rt/internal/sock"
)

// h2Stream is a call on an HTTP/2 stream: its transport
// (grpcTransport), and a task that serves it on a pooled worker.
type h2Stream struct {
	grpcCall
	h         *h2Conn
	id        uint32
	req       h2.Request
	meta      [8]string      // req.Meta's first pairs, which become the call's metadata
	mode      sock.WriteMode // how its answers are written
	pipe      *h2Pipe        // a stream method's request bytes; nil for unary calls
	inflow    h2.Inflow      // the stream's receive window
	received  int64          // DATA bytes; the reader's
	recvEnded atomic.Bool    // END_STREAM came, or the stream was reset
	dead      atomic.Bool    // reset: nothing more is sent
	pendingN  atomic.Int64   // bytes waiting for send credit
	wake      chan struct{}  // a waiting SendMsg's; streams only

	// A unary call's request, guarded by h.mu.
	waiting   bool      // admitted, its request not yet in
	requestBy time.Time // when it must be in (see armTimer)
	graced    bool      // requestBy was put off once (see expire)
	body      *grpcBuf  // the request message's bytes so far
	held      int       // request bytes taken from the connection's window
	gotMsg    bool      // the request message is whole (and being decoded, or decoded)
	sized     bool      // the message's prefix came: its reservation was asked for, if it needs one
	resv      int64     // the window reserved beyond the initial one (see h2Conn)
	queued    bool      // in h.resvQ

	// The decoded request, or why there is none: the reader's until it
	// hands the call over to be served.
	msg    Message
	msgErr error

	// The send side, guarded by the writer's lock.
	sendWin   int64    // send window, relative to the client's initial window
	pend      *grpcBuf // data waiting for credit
	pendOff   int
	inBlocked bool // in h.out.blocked
	bodyEnd   bool // the response ends with its last DATA frame, no trailers (gRPC-Web, HTTP errors)
	endQueued bool // the end is sent once pend is
	dataEnded bool // a DATA frame with END_STREAM went
	sendEnded bool
	endStatus grpcEnd
	endMD     MD
}

// stream returns open stream id, nil if it is not.
func (h *h2Conn) stream(id uint32) *h2Stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streams[id]
}

// onHeaders starts reading a header block: a new stream's request, or
// a request's trailers.
func (h *h2Conn) onHeaders(f *h2.Frame) (*h2Stream, error) {
	id := f.StreamID
	h.blockID, h.blockEnd, h.blockBad, h.block = id, f.Has(h2.FlagEndStream), f.SelfDependent(), nil
	if id > h.maxID {
		if id%2 == 0 {
			return nil, &h2.ConnError{Code: h2.ErrProtocol, Reason: fmt.Sprintf("the client opened stream %d, an even number", id)}
		}
		h.maxID = id
		st := &h2Stream{h: h, id: id}
		h.block = st
		h.hd.Begin(&st.req, false)
		st.req.Meta = st.meta[:0]
	} else {
		h.hd.Begin(&h.scratch, true) // trailers, or a closed stream's block
	}
	if err := h.hd.Write(f.Data); err != nil {
		return nil, err
	}
	if f.Has(h2.FlagEndHeaders) {
		return h.endBlock()
	}
	return nil, nil
}

// endBlock acts on a header block read whole.
func (h *h2Conn) endBlock() (*h2Stream, error) {
	if err := h.hd.End(); err != nil {
		return nil, err
	}
	st := h.block
	h.block = nil
	switch {
	case h.blockBad:
		h.resetStream(h.blockID, h2.ErrProtocol)
		return nil, nil
	case st != nil:
		return h.open(st), nil
	}
	// Trailers: they end the request.
	st = h.stream(h.blockID)
	switch {
	case st == nil || st.recvEnded.Load():
		h.resetStream(h.blockID, h2.ErrStreamClosed)
	case !h.blockEnd || h.scratch.Malformed != "":
		h.resetStream(h.blockID, h2.ErrProtocol)
	default:
		return h.endRequest(st), nil
	}
	return nil, nil
}

// open starts the call of a new stream. It returns the call when it is
// unary and its request is in already, to serve.
func (h *h2Conn) open(st *h2Stream) *h2Stream {
	if !h.accept(st) || !h.admit(st) {
		return nil
	}
	return h.track(st)
}

// accept checks a new stream's request headers and refuses, with a reset
// or an HTTP error, what is no gRPC call or exceeds a limit; it reports
// whether the stream may go on.
func (h *h2Conn) accept(st *h2Stream) bool {
	c, r := h.c, &st.req
	if !h.started {
		h.started = true
		_ = c.raw.SetReadDeadline(time.Time{})
	}
	c.lastCall.Store(h.s.epoch.Load())
	h.mu.Lock()
	full := h.maxStreams > 0 && len(h.streams) >= h.maxStreams
	h.mu.Unlock()
	switch {
	case r.Malformed != "":
		h.s.o.logger.Debug("rt: malformed HTTP/2 request", "peer", c.raw.RemoteAddr().String(), "reason", r.Malformed)
		h.resetStream(st.id, h2.ErrProtocol)
		return false
	case full:
		h.resetStream(st.id, h2.ErrRefusedStream)
		return false
	}
	st.g, st.tr, st.sc.conn, st.mode = h.g, st, c, sock.Held
	// Until the client acknowledges the server's SETTINGS it may count
	// on the default initial window (RFC 9113 6.9.2): no more than the
	// connection's first window in all, so that little goes past
	// streamWin.
	st.inflow.Init(h.streamWin)
	if !h.acked {
		st.inflow.Init(max(h.streamWin, h2.InitialWindow))
	}
	st.recvEnded.Store(h.blockEnd)
	if r.Method != http.MethodPost {
		st.httpError(http.StatusMethodNotAllowed, errNotPost)
		return false
	}
	proto := grpcwire.ParseContentType(r.ContentType)
	if proto == grpcwire.Unsupported {
		st.httpError(http.StatusUnsupportedMediaType, errMediaType+r.ContentType)
		return false
	}
	st.web, st.bodyEnd = proto == grpcwire.Web, proto == grpcwire.Web
	if r.TooLarge {
		st.fail(Errorf(ResourceExhausted, "%s: request headers exceed the server's limit of %d bytes (WithMaxMetadataSize)", strings.TrimPrefix(r.Path, "/"), h.s.o.maxMD), nil)
		return false
	}
	return true
}

// admit starts the call of an accepted stream unless the connection is
// going away; it reports whether the call started.
func (h *h2Conn) admit(st *h2Stream) bool {
	c, r := h.c, &st.req
	rq := grpcRequest{name: r.Path[1:], timeout: r.Timeout, encoding: r.Encoding, acceptEncoding: r.AcceptEncoding, meta: r.Meta}
	c.admitMu.Lock()
	h.mu.Lock()
	gone := h.goneAway
	h.mu.Unlock()
	ok := false
	if !gone {
		c.lastID = st.id
		ok = st.start(&rq)
	}
	c.admitMu.Unlock()
	if gone {
		h.resetStream(st.id, h2.ErrRefusedStream)
	}
	return ok
}

// track registers a started stream with the connection and hands it on:
// a streaming call to a worker at once, a unary one once its request has
// arrived (see endRequest).
func (h *h2Conn) track(st *h2Stream) *h2Stream {
	c := h.c
	unary := st.sc.me.info.Method.Stream == NotStream
	if !unary {
		st.pipe = &h2Pipe{st: st, wake: make(chan struct{}, 1)}
		st.wake = make(chan struct{}, 1)
		if st.recvEnded.Load() {
			st.pipe.close(io.EOF)
		} else if more := h2StreamWindow - h.streamWin; more > 0 {
			st.grant(more, sock.Held) // a stream's messages: a window of their own
		}
	}
	h.mu.Lock()
	h.streams[st.id] = st
	st.waiting = unary
	h.mu.Unlock()
	select {
	case <-c.closed:
		h.cancel(st.id) // closed meanwhile: closed() may have missed it
	default:
	}
	if !unary {
		h.s.workers.run(st)
		return nil
	}
	if st.recvEnded.Load() {
		return h.endRequest(st)
	}
	if h.newAwait = append(h.newAwait, st); len(h.newAwait) >= 64 {
		h.armTimer()
	}
	return nil
}

// onData takes a DATA frame: request bytes.
func (h *h2Conn) onData(f *h2.Frame) (*h2Stream, error) {
	id, n := f.StreamID, f.Length
	if !h.inflow.Take(n) {
		return nil, &h2.ConnError{Code: h2.ErrFlowControl, Reason: "DATA beyond the connection's window"}
	}
	if id > h.maxID {
		return nil, &h2.ConnError{Code: h2.ErrProtocol, Reason: fmt.Sprintf("DATA on idle stream %d", id)}
	}
	st := h.stream(id)
	if st == nil || st.recvEnded.Load() {
		h.giveBack(n, sock.Held)
		h.resetStream(id, h2.ErrStreamClosed)
		return nil, nil
	}
	if !st.inflow.Take(n) {
		h.giveBack(n, sock.Held)
		h.resetStream(id, h2.ErrFlowControl)
		return nil, nil
	}
	data, end := f.Data, f.Has(h2.FlagEndStream)
	st.received += int64(len(data))
	if cl := st.req.ContentLength; cl >= 0 && (st.received > cl || end && st.received != cl) {
		h.giveBack(n, sock.Held)
		h.resetStream(id, h2.ErrProtocol)
		return nil, nil
	}
	if st.pipe != nil {
		// A stream's bytes leave the connection's window as they come,
		// within the connection's budget of such bytes, so that a
		// handler that does not read holds up only its own stream: its
		// window, given back as the handler reads, bounds what the pipe
		// holds.
		pad := n - len(data)
		early := h.takeEarly(len(data))
		conn := pad
		if early {
			conn += len(data)
		}
		st.consumed(conn, pad, sock.Held)
		st.pipe.write(data, early)
	} else {
		if pad := n - len(data); pad > 0 {
			st.consumed(pad, pad, sock.Held)
		}
		h.unaryData(st, data, end)
	}
	if end {
		return h.endRequest(st), nil
	}
	return nil, nil
}

// takeEarly reports whether n bytes of a stream may leave the
// connection's window before they are read, counting them if so (see
// h2Conn.early).
func (h *h2Conn) takeEarly(n int) bool {
	if h.early.Add(int64(n)) <= int64(h.windowSize) {
		return true
	}
	h.early.Add(-int64(n))
	return false
}

// unread accounts for n bytes of a stream's pipe read or dropped, early
// of which left the connection's window as they came: it gives back the
// window of the others, and the stream's for n if stream, writing the
// updates as mode says.
func (st *h2Stream) unread(n, early int, stream bool, mode sock.WriteMode) {
	st.h.early.Add(-int64(early))
	s := 0
	if stream {
		s = n
	}
	st.consumed(n-early, s, mode)
}

// giveBack gives n bytes of the connection's window back to the client,
// writing the update if one is due as mode says.
func (h *h2Conn) giveBack(n int, mode sock.WriteMode) {
	if inc := h.inflow.Add(n); inc > 0 {
		_ = h.w.Write(func(b []byte) []byte { return h2.AppendWindowUpdate(b, 0, inc) }, mode)
	}
}

// consumed gives back conn bytes of the connection's window and n of
// the stream's, writing the updates due as mode says.
func (st *h2Stream) consumed(conn, n int, mode sock.WriteMode) {
	h := st.h
	var cinc, sinc uint32
	if conn > 0 {
		cinc = h.inflow.Add(conn)
	}
	if n > 0 && !st.recvEnded.Load() {
		sinc = st.inflow.Add(n)
	}
	if cinc == 0 && sinc == 0 {
		return
	}
	_ = h.w.Write(func(b []byte) []byte {
		if cinc > 0 {
			b = h2.AppendWindowUpdate(b, 0, cinc)
		}
		if sinc > 0 {
			b = h2.AppendWindowUpdate(b, st.id, sinc)
		}
		return b
	}, mode)
}

// grant gives the client n more bytes of the stream's window at once.
func (st *h2Stream) grant(n int, mode sock.WriteMode) {
	st.inflow.Grant(n)
	_ = st.h.w.Write(func(b []byte) []byte { return h2.AppendWindowUpdate(b, st.id, uint32(n)) }, mode)
}

// unaryData takes request bytes of a unary call (end: the last): its
// message is decoded as soon as it is whole; the bytes after it are
// dropped. A message over the size limit fails the call at once. The
// stream's window grows by the message's size beyond the initial window
// once the connection's window has room for it (see h2Conn), and by the
// bytes after the message as they come.
func (h *h2Conn) unaryData(st *h2Stream, data []byte, end bool) {
	h.mu.Lock()
	if !st.waiting {
		h.mu.Unlock()
		h.giveBack(len(data), sock.Held) // the call failed already
		return
	}
	st.held += len(data)
	if st.gotMsg {
		h.mu.Unlock()
		if !end {
			st.consumed(0, len(data), sock.Held) // the connection's window bounds what the call holds
		}
		return
	}
	b := data
	if st.body != nil {
		st.body.b = append(st.body.b, data...)
		b = st.body.b
	}
	flags, msg, _, err := grpcwire.Cut(b, h.s.o.maxFrame)
	switch err := err.(type) {
	case nil:
	case *grpcwire.TooLargeError:
		st.waiting = false
		h.mu.Unlock()
		st.fail(tooLarge(st.sc.me.info.Method.FullName, err), st.sc.ctx.finish())
		st.end()
		return
	default: // a part of the message
		if st.body == nil {
			st.body = h.g.pools.getBuf()
			st.body.b = append(st.body.b, data...)
		}
		more := 0
		if !st.sized && len(b) >= grpcwire.HeaderLen {
			st.sized = true
			more = h.reserve(st, grpcwire.HeaderLen+int(binary.BigEndian.Uint32(b[1:]))-h.streamWin)
		}
		h.mu.Unlock()
		if more > 0 {
			st.grant(more, sock.Held)
		}
		return
	}
	// The message is decoded without the lock, which the answers of the
	// connection's other calls take: a request that is slow to decode (a
	// large or gzipped one) holds up only its own call. Its bytes leave
	// the stream first, so that a failure of the call meanwhile (expire,
	// cancel) does not give them back to the pool under the decoding.
	st.gotMsg = true
	body := st.body
	st.body = nil
	h.mu.Unlock()
	st.msg = st.sc.me.info.Method.NewRequest()
	st.msgErr = st.decode(st.msg, flags, msg)
	if body != nil {
		h.g.pools.putBuf(body)
	}
}

// reserve asks for n bytes of the connection's window beyond the
// stream's initial window, for st's message. It returns n when reserved
// (grant it), else 0: st waits in line, or needs nothing. Called with h.mu
// held.
func (h *h2Conn) reserve(st *h2Stream, n int) int {
	if n <= 0 {
		return 0
	}
	if len(h.resvQ) == 0 && (h.resv == 0 || h.resv+int64(n) <= h.resvMax) {
		h.resv += int64(n)
		st.resv = int64(n)
		return n
	}
	st.resv, st.queued = int64(n), true // resv: what it waits for
	h.resvQ = append(h.resvQ, st)
	return 0
}

// release ends st's reservation (or its wait for one; st.resv > 0 either
// way) and returns the streams in line that are now reserved, to grant.
// Called with h.mu held.
func (h *h2Conn) release(st *h2Stream) []*h2Stream {
	if st.queued {
		st.queued = false
		h.resvQ = slices.DeleteFunc(h.resvQ, func(q *h2Stream) bool { return q == st })
	} else {
		h.resv -= st.resv
	}
	st.resv = 0
	var next []*h2Stream
	for len(h.resvQ) > 0 {
		q := h.resvQ[0]
		if h.resv > 0 && h.resv+q.resv > h.resvMax {
			break
		}
		h.resvQ[0] = nil
		h.resvQ = h.resvQ[1:]
		q.queued = false
		h.resv += q.resv
		next = append(next, q)
	}
	return next
}

// dropBody gives the request's buffer back. Called with h.mu held.
func (st *h2Stream) dropBody() {
	if st.body != nil {
		st.h.g.pools.putBuf(st.body)
		st.body = nil
	}
}

// endRequest ends the request of st (END_STREAM). It returns a unary
// call that is now ready, to serve.
func (h *h2Conn) endRequest(st *h2Stream) *h2Stream {
	st.recvEnded.Store(true)
	if st.pipe != nil {
		st.pipe.close(io.EOF)
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !st.waiting {
		return nil // failed already
	}
	st.waiting = false
	if !st.gotMsg {
		name := st.sc.me.info.Method.FullName
		st.msgErr = Errorf(InvalidArgument, "%s: the request has no message", name)
		if st.body != nil {
			st.msgErr = Errorf(InvalidArgument, "%s: the request ends inside its message", name)
		}
	}
	st.dropBody()
	return st
}

// run serves the call on a pooled worker.
func (st *h2Stream) run() {
	if st.pipe == nil {
		st.mode = sock.Direct
		if st.sc.conn.inflight.Load() > 1 {
			st.mode = sock.Queued
		}
		st.serveCall()
		return
	}
	st.mode = sock.Direct
	defer st.end()
	st.readFrom(st.pipe)
	st.serveStream(func() { st.pipe.close(errStreamReset) })
}

// serveCall serves a unary call whose request is in.
func (st *h2Stream) serveCall() {
	defer st.end()
	st.serveUnary(st.msg, st.msgErr)
}

// end lets the call go: it leaves the connection's open streams and
// gives back what it held.
func (st *h2Stream) end() {
	h := st.h
	h.mu.Lock()
	if h.streams[st.id] == st {
		delete(h.streams, st.id)
	}
	held := st.held
	st.held = 0
	st.dropBody()
	var next []*h2Stream
	var grants []int
	if st.resv > 0 {
		next = h.release(st)
		for _, q := range next {
			grants = append(grants, int(q.resv))
		}
	}
	h.mu.Unlock()
	h.giveBack(held, sock.Direct)
	for i, q := range next {
		q.grant(grants[i], sock.Direct)
	}
	if !st.dead.Load() && h.budgetN.Add(1) > h.maxBudget {
		h.budgetN.Add(-1)
	}
	if st.pipe != nil {
		st.pipe.release()
	}
	st.done()
}

// h2Pipe carries a stream's request bytes from the connection's reader
// to the handler's RecvMsg. It holds at most the stream's window: the
// bytes count against the stream's window until read (the connection's
// window is given back as they arrive, within h2Conn.early's budget; see
// onData), and the buffer is compacted before it grows, so it stays
// within about twice the window.
type h2Pipe struct {
	st    *h2Stream
	mu    sync.Mutex
	buf   []byte
	off   int
	early int // of the bytes held, those whose connection window went back
	err   error
	wake  chan struct{} // capacity 1: bytes or the end came
}

// write adds b for Read (early: b's connection window went back); once
// the pipe is closed it drops b.
func (p *h2Pipe) write(b []byte, early bool) {
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		e := 0
		if early {
			e = len(b)
		}
		p.st.unread(len(b), e, false, sock.Held)
		return
	}
	if p.off > 0 && len(p.buf)+len(b) > cap(p.buf) {
		// Drop the bytes read before growing: a reader that keeps up
		// without ever emptying the pipe must not grow it.
		p.buf = p.buf[:copy(p.buf, p.buf[p.off:])]
		p.off = 0
	}
	p.buf = append(p.buf, b...)
	if early {
		p.early += len(b)
	}
	p.mu.Unlock()
	p.signal()
}

// takeEarly counts n bytes leaving the pipe and returns how many of them
// left the connection's window as they came. Called with p.mu held.
func (p *h2Pipe) takeEarly(n int) int {
	e := min(n, p.early)
	p.early -= e
	return e
}

// close ends the pipe: Read returns err once the bytes before it are read.
func (p *h2Pipe) close(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.signal()
}

func (p *h2Pipe) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Read implements io.Reader for the call's grpcwire.Reader.
func (p *h2Pipe) Read(b []byte) (int, error) {
	for {
		p.mu.Lock()
		if p.off < len(p.buf) {
			n := copy(b, p.buf[p.off:])
			if p.off += n; p.off == len(p.buf) {
				p.buf, p.off = p.buf[:0], 0
			}
			early := p.takeEarly(n)
			p.mu.Unlock()
			p.st.unread(n, early, true, sock.Direct)
			return n, nil
		}
		err := p.err
		p.mu.Unlock()
		if err != nil {
			return 0, err
		}
		<-p.wake
	}
}

// release drops the pipe's bytes, giving back the connection's window of
// those that still hold it (the stream's does not matter any more).
func (p *h2Pipe) release() {
	p.mu.Lock()
	n := len(p.buf) - p.off
	early := p.takeEarly(n)
	p.buf, p.off, p.err = nil, 0, errStreamReset
	p.mu.Unlock()
	p.st.unread(n, early, false, sock.Direct)
}
