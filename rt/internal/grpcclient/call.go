package grpcclient

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// Call makes the unary or oneway call r on the connection: POST
// /package.Service/Method with r.Req, then r.Resp from the answer's one
// message, and the answer's metadata (headers and trailers) in p.MD when
// r.WantMD. The deadline (r.Deadline or ctx's, the earlier) goes in
// grpc-timeout. A oneway call waits for the server's answer too (gRPC has
// no oneway calls). Only p.MD of p is used. Errors are *conn.Error values,
// wrapped in *conn.NotSent when the call provably did not run: the request
// did not leave (no connection, its headers were not written) or the
// server refused it before running it.
func (c *Conn) Call(ctx context.Context, r *conn.Request, pd *conn.Pending) error {
	pd.MD = nil
	timeout, err := timeoutOf(ctx, r)
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(ctx, r.Deadline)
	defer cancel()
	gz := c.sendGzip(false)
	err = c.call(ctx, r, pd, timeout, gz)
	if gz && c.noteGzipAnswer(err) {
		pd.MD = nil
		err = c.call(ctx, r, pd, timeout, false)
	}
	return err
}

// call makes the call r once, its request gzipped when gz.
func (c *Conn) call(ctx context.Context, r *conn.Request, pd *conn.Pending, timeout time.Duration, gz bool) error {
	p := c.p
	body, err := c.appendMessage(nil, r.Name, r.Req, r.MaxMessage, gz)
	if err != nil {
		return err
	}
	t := new(sentTrace)
	t.ct.WroteHeaders = t.wroteHeaders
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, &t.ct), http.MethodPost, p.base+r.Name, bytes.NewReader(body))
	if err != nil {
		return &conn.NotSent{Err: errorf(internal, "%s: %v", r.Name, err)}
	}
	if err := p.fillHeader(req.Header, r.Name, r.MD, timeout, gz); err != nil {
		return err
	}
	res, err := c.cc.RoundTrip(req)
	if err != nil {
		return c.failed(ctx, r.Name, err, t.wrote.Load())
	}
	defer res.Body.Close()
	return c.answer(ctx, r, pd, res)
}

// sentTrace tells whether a request's headers were written.
type sentTrace struct {
	ct    httptrace.ClientTrace
	wrote atomic.Bool
}

func (t *sentTrace) wroteHeaders() { t.wrote.Store(true) }

// requestContext is the context of a request: ctx, bounded by d too
// when d is earlier than ctx's deadline (zero: none), and cancelable.
func requestContext(ctx context.Context, d time.Time) (context.Context, context.CancelFunc) {
	if cd, ok := ctx.Deadline(); !d.IsZero() && (!ok || d.Before(cd)) {
		return context.WithDeadline(ctx, d)
	}
	return context.WithCancel(ctx)
}

// timeoutOf is the grpc-timeout of r: until the earlier of r.Deadline and
// ctx's deadline; 0 for none. A deadline already passed is an error, not
// sent.
func timeoutOf(ctx context.Context, r *conn.Request) (time.Duration, error) {
	d := r.Deadline
	if cd, ok := ctx.Deadline(); ok && (d.IsZero() || cd.Before(d)) {
		d = cd
	}
	if d.IsZero() {
		return 0, nil
	}
	t := time.Until(d)
	if t <= 0 {
		return 0, &conn.NotSent{Err: errorf(deadlineExceeded, "%s: deadline exceeded before sending", r.Name)}
	}
	return t, nil
}

// appendMessage appends m, length-prefixed, to dst: gzipped when gz and m
// has at least Config.Compress bytes. A message over max bytes (0: no
// limit but the prefix's) is ResourceExhausted, not sent.
func (c *Conn) appendMessage(dst []byte, name string, m conn.Message, limit int, gz bool) ([]byte, error) {
	size := m.Size()
	if limit <= 0 {
		limit = int(min(uint64(math.MaxInt), math.MaxUint32)) // the prefix's limit, or int's on 32 bits
	}
	if size > limit {
		return dst, errorf(resourceExhausted, "%s: request message of %d bytes exceeds the limit of %d", name, size, limit)
	}
	if !gz || size < c.p.cfg.Compress {
		return m.MarshalAppend(grpcwire.AppendHeader(dst, 0, size)), nil
	}
	raw := m.MarshalAppend(make([]byte, 0, size))
	zw := c.p.gzw.Get().(*gzip.Writer)
	start := len(dst)
	dst = grpcwire.Compress(zw, grpcwire.AppendHeader(dst, grpcwire.FlagCompressed, 0), raw)
	c.p.gzw.Put(zw)
	grpcwire.AppendHeader(dst[start:start], grpcwire.FlagCompressed, len(dst)-start-grpcwire.HeaderLen)
	return dst, nil
}

// answer reads the response res of the unary call r.
func (c *Conn) answer(ctx context.Context, r *conn.Request, pd *conn.Pending, res *http.Response) error {
	p := c.p
	if e := p.head(r.Name, res); e != nil {
		return e
	}
	gzIn, e := c.encoding(r.Name, res.Header)
	if e != nil {
		return e
	}
	limit := p.maxMessage()
	bp := p.bufs.Get().(*[]byte)
	rd := grpcwire.NewReader(res.Body, limit, *bp)
	defer func() {
		// Unmarshal keeps no reference to the bytes it decodes.
		if b := rd.Buffer(); cap(b) <= maxPooledBuf {
			*bp = b
			p.bufs.Put(bp)
		}
	}()
	n := 0
	for {
		flags, msg, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return c.readError(ctx, r.Name, err)
		}
		if n++; n > 1 {
			return errorf(internal, "%s: %s answered more than one message to a unary call", r.Name, p.addr)
		}
		if r.Oneway { // google.protobuf.Empty
			continue
		}
		if msg, err = c.decompress(r.Name, flags, gzIn, msg, limit); err != nil {
			return err
		}
		if err := decode(r, pd, msg); err != nil {
			return &conn.Error{Code: internal, Message: fmt.Sprintf("decode response from %s: %v", p.addr, err), Cause: err}
		}
	}
	if err := p.status(r.Name, res.Header, res.Trailer); err != nil {
		if r.WantMD {
			pd.MD, _ = p.responseMD(r.Name, res.Header, res.Trailer)
		}
		return err
	}
	if n == 0 && !r.Oneway {
		return errorf(internal, "%s: %s answered OK without a message", r.Name, p.addr)
	}
	if r.WantMD {
		md, err := p.responseMD(r.Name, res.Header, res.Trailer)
		if err != nil {
			return err
		}
		pd.MD = md
	}
	return nil
}

// decode decodes the response msg, which it does not keep, into r.Resp,
// or into a message that r.NewResp makes (pd.Response).
func decode(r *conn.Request, pd *conn.Pending, msg []byte) error {
	if r.Resp != nil {
		return r.Resp.Unmarshal(msg)
	}
	m, err := conn.DecodeNew(r.NewResp, msg)
	pd.SetResponse(m)
	return err
}

// decompress returns the message msg of a response whose grpc-encoding is
// gzip (gzIn) or identity, as its flags say, bounded by limit.
func (c *Conn) decompress(name string, flags byte, gzIn bool, msg []byte, limit int) ([]byte, error) {
	if flags&grpcwire.FlagCompressed == 0 {
		return msg, nil
	}
	if !gzIn {
		return nil, &conn.Error{Code: internal, Remote: true, Message: fmt.Sprintf("%s: %s sent a compressed message without grpc-encoding", name, c.p.addr)}
	}
	zr := c.p.gzr.Get().(*gzip.Reader)
	out, err := grpcwire.Decompress(zr, nil, msg, limit)
	c.p.gzr.Put(zr)
	var tl *grpcwire.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, errorf(resourceExhausted, "%s: decompressed response message exceeds the limit of %d bytes", name, tl.Max)
	case err != nil:
		return nil, &conn.Error{Code: internal, Remote: true, Message: fmt.Sprintf("%s: %s sent a bad compressed message: %v", name, c.p.addr, err), Cause: err}
	}
	return out, nil
}

// readError is the error of reading an answer's body of the call name.
func (c *Conn) readError(ctx context.Context, name string, err error) error {
	var tl *grpcwire.TooLargeError
	if errors.As(err, &tl) {
		return errorf(resourceExhausted, "%s: response message of %d bytes exceeds the limit of %d", name, tl.Size, tl.Max)
	}
	return c.lostError(ctx, name, err)
}

// lostError is the error of a call that failed after it was sent: the
// pool's when it was closed, the context's, DeadlineExceeded once the
// context's deadline passed, else Unavailable. A server may end a call at
// its deadline before this side's context notices (grpc-go's resets the
// stream with CANCEL); gRPC's clients then report DeadlineExceeded too.
func (c *Conn) lostError(ctx context.Context, name string, err error) *conn.Error {
	if cerr := c.p.closedErr(); cerr != nil {
		var ce *conn.Error
		if errors.As(cerr, &ce) {
			return ce
		}
		return &conn.Error{Code: unavailable, Message: cerr.Error(), Cause: cerr}
	}
	if ctx.Err() != nil {
		return ctxError(ctx.Err(), name)
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return ctxError(context.DeadlineExceeded, name)
	}
	msg := fmt.Sprintf("%s: %s: %v", name, c.p.addr, err)
	if c.p.tls == nil && strings.HasSuffix(err.Error(), "ErrCode:"+http2InadequateSecurity) {
		// How a TLS-only server (rt's among them) refuses h2c.
		msg += " (the server requires TLS: call it as grpcs://" + c.p.addr + ")"
	}
	return &conn.Error{Code: unavailable, Message: msg, Cause: err}
}

// http2InadequateSecurity is the name net/http gives the HTTP/2 error
// code INADEQUATE_SECURITY.
const http2InadequateSecurity = "INADEQUATE_SECURITY"

// failed is the error of a call whose RoundTrip failed with err; wrote
// says whether its headers were written. One that did not leave, or that
// the server did not process, is not sent (a canceled context aside: its
// race with the write is not worth claiming). The connection then takes
// no more calls when it has no slot left (RoundTrip waits for one while
// the connection lives): the server sent it away, or it is closed.
func (c *Conn) failed(ctx context.Context, name string, err error, wrote bool) error {
	e := c.lostError(ctx, name, err)
	if wrote && !unprocessed(err) || ctx.Err() != nil {
		return e
	}
	if c.cc.Err() != nil || c.cc.Available() == 0 {
		c.retire()
	}
	return &conn.NotSent{Err: e}
}

// unprocessed reports whether err is net/http's report that the server
// did not process a request whose headers went out: a stream above the
// last one a GOAWAY admitted (RFC 9113 §6.8; the connection's first
// stream when the GOAWAY has an error code), or one reset with
// REFUSED_STREAM (§8.7). net/http's Transport retries those itself; its
// errors are unexported, so they are told by their text. Should the text
// change, such calls count as maybe run: the safe side.
func unprocessed(err error) bool {
	msg := err.Error()
	return msg == "http2: Transport received Server's graceful shutdown GOAWAY" ||
		strings.HasPrefix(msg, "http2: Transport received GOAWAY from server ErrCode:") ||
		strings.HasPrefix(msg, "stream error: ") && strings.Contains(msg, "; REFUSED_STREAM")
}
