package grpcclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// Stream is the client's end of a gRPC stream on a Conn: an HTTP/2
// request whose body carries the messages sent and whose response carries
// the messages received. OpenStream makes them (the zero value is not
// usable). One goroutine may send while another receives.
// It ends when the server's answer ends (read to its end by Recv), when
// the server answers an error before any message, when its context ends
// (it is then reset), or on a failure (the connection's, a message over
// the limit or that does not decode: it is then reset).
type Stream struct {
	c      *Conn
	name   string             // "pkg.Service/Method", for errors
	ctx    context.Context    // the request's
	cancel context.CancelFunc // ends the request
	onEnd  func(end error)    // called once when the stream ends
	pw     *io.PipeWriter     // the request body
	limit  int                // of messages both ways; 0: Config's for those received
	gzOut  bool               // requests may be gzipped
	wrote  chan struct{}      // closed once the request headers went out
	ready  chan struct{}      // closed once RoundTrip returned

	// Set before ready is closed.
	res   *http.Response
	rtErr error

	sendBuf []byte // the sender's
	// The receiver's.
	rd     *grpcwire.Reader
	gzIn   bool
	headed bool

	mu       sync.Mutex
	opened   bool // OpenStream returned it
	returned bool // RoundTrip returned
	half     bool // CloseSend was called
	ending   bool // finish is reporting the end (onEnd); over comes next
	over     bool
	overc    chan struct{} // closed once over is set
	end      error         // io.EOF for a close with status OK, else the error
	md       []string      // the answer's metadata, once over
	stop     func() bool
}

// OpenStream opens a stream of r's method (r.Req, r.Resp and r.WantMD
// are not used; r.MaxMessage bounds messages both ways, 0: Config's for
// those received). It returns once the request's headers went out: a
// server answers a stream when it wants to, maybe after reading messages.
// onEnd (may be nil) is called once when the stream ends, with io.EOF for
// a close with status OK, else the stream's error, before Recv returns
// that end; it must be quick, and it is not called when OpenStream fails.
// Errors are *conn.Error values, wrapped in *conn.NotSent when nothing
// was sent.
func (c *Conn) OpenStream(ctx context.Context, r *conn.Request, onEnd func(error)) (*Stream, error) {
	p := c.p
	timeout, err := timeoutOf(ctx, r)
	if err != nil {
		return nil, err
	}
	rctx, cancel := requestContext(ctx, r.Deadline)
	pr, pw := io.Pipe()
	s := &Stream{c: c, name: r.Name, ctx: rctx, cancel: cancel, onEnd: onEnd, pw: pw, limit: r.MaxMessage,
		gzOut: c.sendGzip(true), wrote: make(chan struct{}), ready: make(chan struct{}), overc: make(chan struct{})}
	var once sync.Once
	trace := &httptrace.ClientTrace{WroteHeaders: func() { once.Do(func() { close(s.wrote) }) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(rctx, trace), http.MethodPost, p.base+r.Name, pr)
	if err == nil {
		err = p.fillHeader(req.Header, r.Name, r.MD, timeout, s.gzOut)
	} else {
		err = &conn.NotSent{Err: errorf(internal, "%s: %v", r.Name, err)}
	}
	if err != nil {
		cancel()
		return nil, err
	}
	go s.roundTrip(req)
	select {
	case <-s.wrote:
	case <-s.ready:
	}
	s.mu.Lock()
	if s.returned && s.rtErr != nil {
		s.mu.Unlock()
		err := c.failed(rctx, r.Name, s.rtErr, isClosed(s.wrote))
		cancel()
		return nil, err
	}
	s.opened = true
	returned := s.returned
	s.mu.Unlock()
	if returned {
		s.settle()
	}
	stop := context.AfterFunc(rctx, func() { s.finish(ctxError(rctx.Err(), r.Name), nil) })
	s.mu.Lock()
	if s.over {
		stop() // it ended meanwhile: finish had nothing to stop
	} else {
		s.stop = stop
	}
	s.mu.Unlock()
	return s, nil
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// roundTrip runs the request until the server's answer starts (or it
// fails); the answer is then Recv's to read.
func (s *Stream) roundTrip(req *http.Request) {
	res, err := s.c.cc.RoundTrip(req)
	s.mu.Lock()
	s.res, s.rtErr, s.returned = res, err, true
	opened := s.opened
	s.mu.Unlock()
	close(s.ready)
	if opened {
		s.settle()
	}
}

// settle ends the open stream when RoundTrip failed, or when the answer
// ended before any message (an HTTP error, a Trailers-Only answer), so
// that its end is known without a Recv. It runs once, after RoundTrip
// returned and OpenStream succeeded.
func (s *Stream) settle() {
	if s.rtErr != nil {
		s.finish(s.c.lostError(s.ctx, s.name, s.rtErr), nil)
		return
	}
	if e := s.c.p.head(s.name, s.res); e != nil {
		s.finish(e, nil)
		return
	}
	if len(s.res.Header[hdrStatus]) > 0 {
		s.endWithStatus()
	}
}

// endWithStatus ends the stream with the status of its answer, whose
// body has been read to its end (or is empty: Trailers-Only).
func (s *Stream) endWithStatus() {
	p, res := s.c.p, s.res
	var end error = io.EOF
	if err := p.status(s.name, res.Header, res.Trailer); err != nil {
		end = unwrapNotSent(err) // a stream is never retried: the mark does not matter
	}
	md, err := p.responseMD(s.name, res.Header, res.Trailer)
	if err != nil && end == io.EOF {
		end = err
	}
	s.finish(end, md)
}

func unwrapNotSent(err error) error {
	var ns *conn.NotSent
	if errors.As(err, &ns) {
		return ns.Err
	}
	return err
}

// Send sends m; it fails once the stream is over or CloseSend was called.
// It returns when the transport has taken m (flow control permitting).
func (s *Stream) Send(m conn.Message) error {
	s.mu.Lock()
	over, half, end := s.over, s.half, s.end
	s.mu.Unlock()
	switch {
	case over:
		return s.afterEnd(end)
	case half:
		return errorf(failedPrecondition, "%s: send after CloseSend", s.name)
	}
	b, err := s.c.appendMessage(s.sendBuf[:0], s.name, m, s.limit, s.gzOut)
	if err != nil {
		return err
	}
	if cap(b) <= 64<<10 {
		s.sendBuf = b[:0]
	}
	if _, err := s.pw.Write(b); err != nil {
		return s.sendError()
	}
	return nil
}

// afterEnd is the error of a Send after the stream ended with end.
func (s *Stream) afterEnd(end error) error {
	if end == io.EOF {
		return errorf(failedPrecondition, "%s: the server closed the stream", s.name)
	}
	return end
}

// sendError is the error of a Send whose message the transport did not
// take: the stream is ending.
func (s *Stream) sendError() error {
	select {
	case <-s.ready:
	case <-s.ctx.Done():
	}
	s.mu.Lock()
	over, half, end, rtErr := s.over, s.half, s.end, s.rtErr
	s.mu.Unlock()
	switch {
	case over:
		return s.afterEnd(end)
	case half:
		return errorf(failedPrecondition, "%s: send after CloseSend", s.name)
	case s.ctx.Err() != nil:
		return ctxError(s.ctx.Err(), s.name)
	case rtErr != nil:
		return s.c.lostError(s.ctx, s.name, rtErr)
	}
	return errorf(failedPrecondition, "%s: the server no longer reads the stream (Recv tells how it ended)", s.name)
}

// CloseSend half-closes the stream: the server sees the end of its input.
func (s *Stream) CloseSend() error {
	s.mu.Lock()
	if s.half || s.over {
		s.mu.Unlock()
		return nil
	}
	s.half = true
	s.mu.Unlock()
	return s.pw.Close()
}

// Recv receives the next message into m; io.EOF once the server closed
// the stream with status OK, else the stream's error.
func (s *Stream) Recv(m conn.Message) error {
	if !s.headed {
		<-s.ready // comes: finish cancels the request
		s.headed = true
		if s.rtErr != nil {
			s.finish(s.c.lostError(s.ctx, s.name, s.rtErr), nil)
			return s.ended()
		}
		if e := s.c.p.head(s.name, s.res); e != nil {
			s.finish(e, nil)
			return s.ended()
		}
		gzIn, e := s.c.encoding(s.name, s.res.Header)
		if e != nil {
			s.finish(e, nil)
			return s.ended()
		}
		s.gzIn = gzIn
		s.rd = grpcwire.NewReader(s.res.Body, s.recvLimit(), nil)
	}
	if s.isOver() {
		return s.ended()
	}
	flags, msg, err := s.rd.Next()
	switch {
	case err == io.EOF:
		s.endWithStatus()
		return s.ended()
	case err != nil:
		var tl *grpcwire.TooLargeError
		e := s.c.lostError(s.ctx, s.name, err)
		if errors.As(err, &tl) {
			e = errorf(resourceExhausted, "%s: message of %d bytes exceeds the limit of %d", s.name, tl.Size, tl.Max)
		}
		s.finish(e, nil)
		return s.ended()
	}
	if msg, err = s.c.decompress(s.name, flags, s.gzIn, msg, s.recvLimit()); err != nil {
		s.finish(err, nil)
		return s.ended()
	}
	if err := m.Unmarshal(msg); err != nil {
		s.finish(&conn.Error{Code: internal, Message: "decode message from " + s.c.p.addr + ": " + err.Error(), Cause: err}, nil)
		return s.ended()
	}
	return nil
}

func (s *Stream) recvLimit() int {
	if s.limit > 0 {
		return s.limit
	}
	return s.c.p.maxMessage()
}

func (s *Stream) isOver() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.over
}

// ended is how the stream ended: io.EOF or its error. Called once a
// finish has been called, it waits for that finish to set the end.
func (s *Stream) ended() error {
	<-s.overc
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// Trailer returns the metadata the server answered the stream with (its
// headers' and its trailers'), once it ended.
func (s *Stream) Trailer() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.md
}

// Reset aborts the stream, as conn.Stream.Reset does: the request is
// reset (RST_STREAM CANCEL: gRPC gives a client no way to name a code or
// a reason), the server's handler sees its context canceled, and this
// side's Send and Recv fail with err.
func (s *Stream) Reset(_ uint8, _ string, err error) { s.finish(err, nil) }

// finish ends the stream once with end and the answer's metadata md: the
// request ends (reset if the server's answer had not), Send fails, and
// Recv returns end. It reports whether this call ended it.
func (s *Stream) finish(end error, md []string) bool {
	s.mu.Lock()
	if s.over || s.ending {
		s.mu.Unlock()
		return false
	}
	s.ending = true
	s.mu.Unlock()
	// onEnd first: the end is reported (the attempt, the breaker) before
	// Recv, which looks at over, can hand it to the caller.
	if s.onEnd != nil {
		s.onEnd(end)
	}
	s.mu.Lock()
	s.over, s.end, s.md = true, end, md
	stop := s.stop
	s.mu.Unlock()
	close(s.overc)
	s.cancel()
	s.pw.CloseWithError(errStreamOver)
	if stop != nil {
		stop()
	}
	return true
}

// errStreamOver is what the transport reads from the request body of a
// stream that ended.
var errStreamOver = errors.New("grpcclient: stream over")
