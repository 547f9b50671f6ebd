package rt

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/metrics"
)

// grpcCall is one gRPC or gRPC-Web call (unary, or a stream: it is then
// the handler's ServerStreamer) on either transport: an HTTP/2 stream of
// the server's own (h2Stream), or net/http's HTTP/1.1 for gRPC-Web
// (httpCall). The transport sends what the call hands it (grpcOut).
type grpcCall struct {
	sc        serverCall // conn is the client connection's; ctx the handler's
	g         *grpcServer
	tr        grpcTransport
	web       bool // gRPC-Web: trailers in the body
	gzipIn    bool // the request's grpc-encoding is gzip
	gzipOut   bool // answer with gzip
	acceptEnc bool // answer grpc-accept-encoding
	admitted  bool // holds a place in flight: done gives it back
	rd        grpcwire.Reader
	rbuf      *grpcBuf // rd's storage, from the pool
	out       grpcOut  // what is being sent (one send at a time)

	// A stream's handler returned: SendMsg and RecvMsg fail from then on
	// (a goroutine of the handler's may still hold the stream).
	returned atomic.Bool
	// recvMu is held by RecvMsg while it uses rd and rbuf; the stream's
	// end takes it (see stopRecv) before they go back to the pool.
	recvMu sync.Mutex

	sendMu     sync.Mutex // SendMsg against the stream's end
	headerSent bool
	trailer    MD // SetTrailer's
}

// grpcTransport sends a call's response.
type grpcTransport interface {
	// send sends o: a piece of the response, or all of it.
	send(o *grpcOut) error
}

// grpcOut is a piece of a response for grpcTransport.send, sent in this
// order: the response headers (if headers; with md unless end), msg
// (marshaled and length-prefixed by the transport), body, and if end the
// end of the response: for gRPC the trailers (status and md), or with
// nothing before them in the response a Trailers-Only response.
type grpcOut struct {
	headers bool
	msg     Message // uncompressed
	body    []byte  // a compressed message, gRPC-Web's trailers frame
	end     bool
	status  grpcEnd
	md      MD
}

// grpcEnd is the status a response ends with.
type grpcEnd struct {
	code    Code
	msg     string
	details []byte // google.rpc.Status; nil without details
}

// trailersOnly reports whether o is a whole gRPC response of only
// trailers: a status and no message.
func (o *grpcOut) trailersOnly(web bool) bool {
	return o.headers && o.end && o.msg == nil && o.body == nil && !web
}

// grpcRequest is what a call's request headers say.
type grpcRequest struct {
	name                              string // "package.Service/Method"
	timeout, encoding, acceptEncoding string
	meta                              []string // other fields: keys lowercase, -bin values in base64
}

// start runs the checks of serverConn.request on a call and makes it
// ready to run: its method, encoding, deadline, metadata and handler
// context, and its place in flight. It reports false when it answered
// the call instead.
func (gc *grpcCall) start(rq *grpcRequest) bool {
	s, c := gc.g.s, gc.sc.conn
	se, me := s.lookupName(rq.name)
	if me == nil {
		gc.fail(Errorf(Unimplemented, "unknown method %q (this server serves %s)", rq.name, s.serviceNames()), nil)
		return false
	}
	gc.sc.me, gc.sc.oneway = me, me.info.Method.Oneway
	if s.closing.Load() {
		gc.refuse(&Error{Code: Unavailable, Message: "server closing"})
		return false
	}
	var deadline time.Time
	if rq.timeout != "" {
		d, err := grpcwire.ParseTimeout(rq.timeout)
		if err != nil {
			gc.fail(&Error{Code: InvalidArgument, Message: me.info.Method.FullName + ": " + err.Error()}, nil)
			return false
		}
		deadline = time.Now().Add(d) // wall clock, whatever the server's Clock
	}
	gc.acceptEnc = rq.acceptEncoding != ""
	switch rq.encoding {
	case "gzip":
		gc.gzipIn, gc.gzipOut, gc.acceptEnc = true, true, true
	case "", "identity":
	default:
		gc.acceptEnc = true
		gc.fail(Errorf(Unimplemented, "%s: grpc-encoding %q is not supported: this server takes gzip and identity", me.info.Method.FullName, rq.encoding), nil)
		return false
	}
	md, err := incomingMD(me.info.Method.FullName, rq.meta)
	if err != nil {
		gc.fail(err, nil)
		return false
	}
	if gc.web && (me.info.Method.Stream == ClientStreaming || me.info.Method.Stream == BidiStreaming) {
		gc.fail(Errorf(Unimplemented, "%s: gRPC-Web carries unary calls and server streams, not %s", me.info.Method.FullName, me.info.Method.Stream), nil)
		return false
	}
	keyed := md.Get(MDGroup) != "" || md.Get(MDVersion) != ""
	if e := c.admitCall(se, me, md, keyed); e != nil {
		gc.refuse(e)
		return false
	}
	s.inflight.Add(1)
	c.inflight.Add(1)
	gc.admitted = true
	proto := protoGRPC
	if gc.web {
		proto = protoGRPCWeb
	}
	gc.sc.ctx = callCtx{parent: context.Background(), md: md, peer: c.peer, info: &me.info, deadline: deadline, drop: c.dropFunc, proto: proto}
	return true
}

// done gives back the call's place in flight and its buffers.
func (gc *grpcCall) done() {
	if gc.rbuf != nil {
		gc.rbuf.b = gc.rd.Buffer()
		gc.g.pools.putBuf(gc.rbuf)
		gc.rbuf = nil
	}
	if gc.admitted {
		gc.admitted = false
		gc.sc.conn.inflight.Add(-1)
		gc.g.s.callDone()
	}
}

// readFrom makes the call read its request messages from body.
func (gc *grpcCall) readFrom(body io.Reader) {
	gc.rbuf = gc.g.pools.getBuf()
	gc.rd.Reset(body, gc.g.s.o.maxFrame, gc.rbuf.b)
}

// incomingMD returns the metadata of a call of method from the request
// fields kv, which it reuses: those of the transport left out, "-bin"
// values decoded (several in one field, comma-separated, are several
// values).
func incomingMD(method string, kv []string) (MD, error) {
	md, own := MD(kv[:0]), false
	for i := 0; i+1 < len(kv); i += 2 {
		key, v := kv[i], kv[i+1]
		switch {
		case grpcwire.Reserved(key):
		case grpcwire.IsBinary(key):
			if !strings.Contains(v, ",") {
				b, err := grpcwire.DecodeBinary(strings.TrimSpace(v))
				if err != nil {
					return nil, Errorf(InvalidArgument, "%s: metadata %q: bad base64: %v", method, key, err)
				}
				md = append(md, key, b)
				continue
			}
			if !own {
				md, own = slices.Clone(md), true // its values could overwrite the fields after it
			}
			for part := range strings.SplitSeq(v, ",") {
				b, err := grpcwire.DecodeBinary(strings.TrimSpace(part))
				if err != nil {
					return nil, Errorf(InvalidArgument, "%s: metadata %q: bad base64: %v", method, key, err)
				}
				md = append(md, key, b)
			}
		default:
			md = append(md, key, v)
		}
	}
	return md, nil
}

// lookupName finds the method whose full name is name
// ("package.Service/Method"): by its wire ID, which generated code
// computes from the name, else (hand-written descriptors) by its name.
func (s *Server) lookupName(name string) (*serviceEntry, *methodEntry) {
	h := uint32(2166136261) // FNV-1a 32, as the generator's MethodID
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	if se, me := s.lookup(h); me != nil && me.info.Method.FullName == name {
		return se, me
	}
	for i := 0; i <= len(s.services); i++ {
		se := s.health.entry
		if i < len(s.services) {
			se = s.services[i]
		}
		for j := range se.methods {
			if se.methods[j].info.Method.FullName == name {
				return se, &se.methods[j]
			}
		}
	}
	return nil, nil
}

// serveUnary runs the handler on req, or answers reqErr (reading or
// decoding the request failed), and answers.
func (gc *grpcCall) serveUnary(req Message, reqErr error) {
	if reqErr != nil {
		gc.fail(reqErr, gc.sc.ctx.finish())
		return
	}
	gc.sc.req = req
	start := gc.g.s.observeStart()
	resp, err := gc.sc.invoke()
	gc.answerUnary(start, resp, err)
}

// answerUnary reports a unary call's end and answers it. It is not part
// of serveUnary, which stays on the stack while the handler runs (see
// serverCall.answer).
func (gc *grpcCall) answerUnary(start time.Time, resp Message, err error) {
	gc.g.s.observe(&gc.sc.me.info, start, err)
	md := gc.sc.ctx.finish()
	if err != nil {
		gc.fail(err, md)
		return
	}
	if resp == nil { // oneway: google.protobuf.Empty
		resp = emptyMessage{}
	}
	o := &gc.out
	*o = grpcOut{headers: true, end: true, md: md}
	var zb *grpcBuf
	o.msg, zb = gc.compress(resp)
	if zb != nil {
		o.body = zb.b
		defer gc.g.pools.putBuf(zb)
	}
	if gc.web {
		o.body = gc.appendWebTrailers(o.body, OK, "", nil, md)
	}
	_ = gc.tr.send(o) // a failure is the client's: it is gone
}

// emptyMessage is google.protobuf.Empty, the response of oneway methods.
type emptyMessage struct{}

func (emptyMessage) Size() int                     { return 0 }
func (emptyMessage) MarshalAppend(b []byte) []byte { return b }
func (emptyMessage) Unmarshal([]byte) error        { return nil }

// observeStart returns the start time of a call for observe; zero without
// an observer.
func (s *Server) observeStart() time.Time {
	if s.o.observer == nil {
		return time.Time{}
	}
	return time.Now()
}

// observe reports a call that ended with err to the server's observer.
func (s *Server) observe(info *CallInfo, start time.Time, err error) {
	if obs := s.o.observer; obs != nil {
		obs.Observe(metrics.Event{Side: metrics.Server, Service: info.Service.Name, Method: info.Method.Name,
			Code: CodeOf(err).String(), Latency: time.Since(start)})
	}
}

// recv reads the next request message into m, validating it if validate.
// It returns io.EOF at the end of the requests, else an *Error.
func (gc *grpcCall) recv(m Message, validate bool) error {
	name := gc.sc.me.info.Method.FullName
	flags, msg, err := gc.rd.Next()
	if err != nil {
		var tl *grpcwire.TooLargeError
		switch {
		case err == io.EOF:
			return io.EOF
		case errors.As(err, &tl):
			return tooLarge(name, tl)
		case gc.sc.ctx.Err() != nil:
			return &Error{Code: CodeOf(gc.sc.ctx.Err()), Message: name + ": " + gc.sc.ctx.Err().Error(), Cause: err}
		case errors.Is(err, os.ErrDeadlineExceeded):
			return &Error{Code: DeadlineExceeded, Message: name + ": the request did not arrive in time (Limits.FirstFrameTimeout)", Cause: err}
		}
		return &Error{Code: Canceled, Message: name + ": reading the request: " + err.Error(), Cause: err}
	}
	if err := gc.decode(m, flags, msg); err != nil {
		return err
	}
	if v, ok := m.(Validator); ok && validate {
		if err := v.Validate(); err != nil {
			return &Error{Code: InvalidArgument, Message: err.Error(), Cause: err}
		}
	}
	return nil
}

// tooLarge is the error of a request message over the size limit.
func tooLarge(name string, tl *grpcwire.TooLargeError) *Error {
	return Errorf(ResourceExhausted, "%s: request message of %d bytes exceeds the server's limit of %d (WithMaxFrameSize)", name, tl.Size, tl.Max)
}

// decode decodes the request message msg, whose prefix had flags, into m.
func (gc *grpcCall) decode(m Message, flags byte, msg []byte) error {
	name := gc.sc.me.info.Method.FullName
	if flags&grpcwire.FlagCompressed != 0 {
		if !gc.gzipIn {
			return Errorf(Internal, "%s: a compressed message without grpc-encoding", name)
		}
		pool := &gc.g.pools
		zr, out := pool.getGzipReader(), pool.getBuf()
		defer pool.putBuf(out)
		var err error
		out.b, err = grpcwire.Decompress(zr, out.b, msg, gc.g.s.o.maxFrame)
		pool.gzr.Put(zr)
		var tl *grpcwire.TooLargeError
		switch {
		case errors.As(err, &tl):
			return Errorf(ResourceExhausted, "%s: decompressed request message exceeds the server's limit of %d bytes (WithMaxFrameSize)", name, tl.Max)
		case err != nil:
			return Errorf(InvalidArgument, "%s: %v", name, err)
		}
		msg = out.b
	}
	if err := m.Unmarshal(msg); err != nil {
		return Errorf(InvalidArgument, "%s: decode request: %v", name, err)
	}
	return nil
}

// compress returns m as the transport sends it: m itself, or when the
// call answers with gzip and m is large enough nil and a pooled buffer
// holding m compressed and length-prefixed (give it back with putBuf).
func (gc *grpcCall) compress(m Message) (Message, *grpcBuf) {
	threshold := gc.g.s.o.compress
	if threshold <= 0 {
		threshold = 1 << 10
	}
	if !gc.gzipOut || m.Size() < threshold {
		return m, nil
	}
	pool := &gc.g.pools
	raw, out := pool.getBuf(), pool.getBuf()
	defer pool.putBuf(raw)
	raw.b = m.MarshalAppend(raw.b)
	zw := pool.getGzipWriter()
	out.b = grpcwire.Compress(zw, grpcwire.AppendHeader(out.b, grpcwire.FlagCompressed, 0), raw.b)
	pool.gzw.Put(zw)
	grpcwire.AppendHeader(out.b[:0], grpcwire.FlagCompressed, len(out.b)-grpcwire.HeaderLen)
	return nil, out
}

// refuse answers a call that did not run, marked so that the client may
// try it elsewhere.
func (gc *grpcCall) refuse(e *Error) {
	gc.fail(e, MD{conn.MDRefused, "1"})
}

// fail answers err, with md, when no message was sent: a Trailers-Only
// response (the status in the headers), or for gRPC-Web a trailers frame.
func (gc *grpcCall) fail(err error, md MD) {
	code, msg, details := grpcStatus(err)
	o := &gc.out
	*o = grpcOut{headers: true, end: true, md: md, status: grpcEnd{code: code, msg: msg, details: details}}
	if gc.web {
		o.body = gc.appendWebTrailers(nil, code, msg, details, md)
	}
	_ = gc.tr.send(o)
}

// grpcPools are a gRPC server's buffers and gzip coders.
type grpcPools struct {
	bufs     sync.Pool // of *grpcBuf
	gzw, gzr sync.Pool // of *gzip.Writer, *gzip.Reader
}

// grpcBuf is a pooled buffer.
type grpcBuf struct{ b []byte }

// maxPooledBuf bounds the buffers kept for reuse.
const maxPooledBuf = 64 << 10

func (p *grpcPools) init() {
	p.bufs.New = func() any { return &grpcBuf{b: make([]byte, 0, 4<<10)} }
	p.gzw.New = func() any { return gzip.NewWriter(nil) }
	p.gzr.New = func() any { return new(gzip.Reader) }
}

// getBuf returns an empty buffer; give it back with putBuf.
func (p *grpcPools) getBuf() *grpcBuf {
	gb := p.bufs.Get().(*grpcBuf)
	gb.b = gb.b[:0]
	return gb
}

func (p *grpcPools) putBuf(gb *grpcBuf) {
	if cap(gb.b) > maxPooledBuf {
		gb.b = make([]byte, 0, 4<<10)
	}
	p.bufs.Put(gb)
}

func (p *grpcPools) getGzipWriter() *gzip.Writer { return p.gzw.Get().(*gzip.Writer) }
func (p *grpcPools) getGzipReader() *gzip.Reader { return p.gzr.Get().(*gzip.Reader) }
