package rt

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/metrics"
)

// grpcCall is one gRPC or gRPC-Web call (unary, or a stream: it is then
// the handler's ServerStreamer) being served on an HTTP request.
type grpcCall struct {
	sc      serverCall // conn is the HTTP connection's; ctx the handler's
	g       *grpcServer
	se      *serviceEntry
	w       http.ResponseWriter
	r       *http.Request
	web     bool // gRPC-Web: trailers in the body
	gzipIn  bool // the request's grpc-encoding is gzip
	gzipOut bool // answer with gzip
	rd      grpcwire.Reader

	sendMu     sync.Mutex // SendMsg against the stream's end
	headerSent bool
	ended      bool
	trailer    MD // SetTrailer's
}

// grpcHeaders are response header values that every response of a
// server shares: net/http only reads them.
type grpcHeaders struct {
	grpc, web, gzip, encodings, statusOK []string
}

func (h *grpcHeaders) init() {
	*h = grpcHeaders{grpc: []string{grpcwire.ContentTypeGRPC}, web: []string{grpcwire.ContentTypeWeb + "+proto"},
		gzip: []string{"gzip"}, encodings: []string{"gzip,identity"}, statusOK: []string{"0"}}
}

// Header keys, canonical as net/http keeps them.
const (
	hdrKeyContentType    = "Content-Type"
	hdrKeyTimeout        = "Grpc-Timeout"
	hdrKeyEncoding       = "Grpc-Encoding"
	hdrKeyAcceptEncoding = "Grpc-Accept-Encoding"
	hdrKeyStatus         = "Grpc-Status"
	hdrKeyMessage        = "Grpc-Message"
	hdrKeyDetails        = "Grpc-Status-Details-Bin"
)

// ServeHTTP serves one gRPC or gRPC-Web request.
func (g *grpcServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hc, _ := r.Context().Value(httpConnKey{}).(*httpConn)
	if hc == nil {
		http.Error(w, "rt: connection not handed over by the server", http.StatusInternalServerError)
		return
	}
	if !hc.started.Load() {
		hc.started.Store(true)
		if hc.idle != nil {
			hc.idle.Stop()
		}
	}
	var ct string
	if v := r.Header[hdrKeyContentType]; len(v) > 0 {
		ct = v[0]
	}
	proto := grpcwire.ParseContentType(ct)
	switch {
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "rt: gRPC calls are POST requests", http.StatusMethodNotAllowed)
		return
	case proto == grpcwire.Unsupported:
		http.Error(w, "rt: this server answers gRPC (application/grpc) and gRPC-Web (application/grpc-web) with protobuf messages, not "+ct, http.StatusUnsupportedMediaType)
		return
	case proto == grpcwire.GRPC && r.ProtoMajor < 2:
		http.Error(w, "rt: gRPC needs HTTP/2 (gRPC-Web works over HTTP/1.1)", http.StatusHTTPVersionNotSupported)
		return
	}
	gc := &grpcCall{g: g, w: w, r: r, web: proto == grpcwire.Web}
	gc.sc.conn = hc.c
	gc.serve()
}

// serve runs the call: the checks of serverConn.request, then the
// handler, then the answer.
func (gc *grpcCall) serve() {
	s, c := gc.g.s, gc.sc.conn
	name := strings.TrimPrefix(gc.r.URL.Path, "/")
	se, me := s.lookupName(name)
	if me == nil {
		gc.fail(Errorf(Unimplemented, "unknown method %q (this server serves %s)", name, s.serviceNames()), nil)
		return
	}
	gc.se, gc.sc.me, gc.sc.oneway = se, me, me.info.Method.Oneway
	if s.closing.Load() {
		gc.refuse(&Error{Code: Unavailable, Message: "server closing"})
		return
	}
	md, deadline, err := gc.readHeaders()
	if err != nil {
		gc.fail(err, nil)
		return
	}
	if gc.web && (me.info.Method.Stream == ClientStreaming || me.info.Method.Stream == BidiStreaming) {
		gc.fail(Errorf(Unimplemented, "%s: gRPC-Web carries unary calls and server streams, not %s", me.info.Method.FullName, me.info.Method.Stream), nil)
		return
	}
	keyed := md.Get(MDGroup) != "" || md.Get(MDVersion) != ""
	if e := c.admitCall(se, me, md, keyed); e != nil {
		gc.refuse(e)
		return
	}
	s.inflight.Add(1)
	c.inflight.Add(1)
	defer s.callDone()
	defer c.inflight.Add(-1)
	gc.sc.ctx = callCtx{parent: context.Background(), md: md, peer: c.peer, info: &me.info, deadline: deadline}
	gc.sc.ctx.drop = c.dropFunc
	stop := context.AfterFunc(gc.r.Context(), func() { gc.sc.ctx.cancel(context.Canceled) })
	defer stop()
	pool := &gc.g.pools
	rb := pool.getBuf()
	gc.rd.Reset(gc.r.Body, s.o.maxFrame, rb.b)
	defer func() {
		rb.b = gc.rd.Buffer()
		pool.putBuf(rb)
	}()
	if me.info.Method.Stream != NotStream {
		gc.serveStream()
		return
	}
	gc.serveUnary()
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

// readHeaders reads the call's metadata, deadline and encoding from the
// request headers.
func (gc *grpcCall) readHeaders() (MD, time.Time, error) {
	var deadline time.Time
	h := gc.r.Header
	if v := h[hdrKeyTimeout]; len(v) > 0 {
		d, err := grpcwire.ParseTimeout(v[0])
		if err != nil {
			return nil, deadline, &Error{Code: InvalidArgument, Message: err.Error()}
		}
		deadline = time.Now().Add(d) // wall clock, whatever the server's Clock
	}
	if v := h[hdrKeyEncoding]; len(v) > 0 {
		switch v[0] {
		case "gzip":
			gc.gzipIn, gc.gzipOut = true, true
		case "", "identity":
		default:
			gc.w.Header()[hdrKeyAcceptEncoding] = gc.g.hdr.encodings
			return nil, deadline, Errorf(Unimplemented, "grpc-encoding %q is not supported: this server takes gzip and identity", v[0])
		}
	}
	var md MD
	for k, vs := range h {
		key := metadataKey(k)
		if key == "" {
			continue
		}
		bin := grpcwire.IsBinary(key)
		for _, v := range vs {
			if !bin {
				md = append(md, key, v)
				continue
			}
			for part := range strings.SplitSeq(v, ",") {
				b, err := grpcwire.DecodeBinary(strings.TrimSpace(part))
				if err != nil {
					return nil, deadline, Errorf(InvalidArgument, "metadata %q: bad base64: %v", key, err)
				}
				md = append(md, key, b)
			}
		}
	}
	return md, deadline, nil
}

// metadataKey returns the metadata key of a request header as net/http
// keeps it (canonical form): in lowercase, "" for the transport's own.
func metadataKey(k string) string {
	switch k {
	case "User-Agent":
		return "user-agent" // in every call: spare ToLower's copy
	case "Content-Type", "Te", hdrKeyTimeout, hdrKeyEncoding, hdrKeyAcceptEncoding, "Accept-Encoding", "Content-Length":
		return "" // the common ones of grpcwire.Reserved, without ToLower's copy
	}
	key := strings.ToLower(k)
	if grpcwire.Reserved(key) {
		return ""
	}
	return key
}

// serveUnary reads the request, runs the handler and answers.
func (gc *grpcCall) serveUnary() {
	m := gc.sc.me.info.Method
	req := m.NewRequest()
	if err := gc.recv(req, false); err != nil {
		if err == io.EOF {
			err = Errorf(InvalidArgument, "%s: the request has no message", m.FullName)
		}
		gc.fail(err, gc.sc.ctx.finish())
		return
	}
	gc.sc.req = req
	start := gc.g.s.observeStart()
	resp, err := gc.sc.invoke()
	gc.g.s.observe(&gc.sc.me.info, start, err)
	md := gc.sc.ctx.finish()
	if err != nil {
		gc.fail(err, md)
		return
	}
	if resp == nil { // oneway: google.protobuf.Empty
		resp = emptyMessage{}
	}
	wb := gc.g.pools.getBuf()
	defer gc.g.pools.putBuf(wb)
	wb.b = gc.appendMessage(wb.b, resp)
	h := gc.w.Header()
	gc.setHeaders(h)
	if gc.web {
		wb.b = gc.appendWebTrailers(wb.b, OK, "", nil, md)
	} else {
		h[http.TrailerPrefix+hdrKeyStatus] = gc.g.hdr.statusOK
		addMD(h, http.TrailerPrefix, md)
	}
	_, _ = gc.w.Write(wb.b) // a failure is the client's: it is gone
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
			return Errorf(ResourceExhausted, "%s: request message of %d bytes exceeds the server's limit of %d (WithMaxFrameSize)", name, tl.Size, tl.Max)
		case gc.sc.ctx.Err() != nil:
			return &Error{Code: CodeOf(gc.sc.ctx.Err()), Message: name + ": " + gc.sc.ctx.Err().Error(), Cause: err}
		case errors.Is(err, os.ErrDeadlineExceeded):
			return &Error{Code: DeadlineExceeded, Message: name + ": the request did not arrive in time (Limits.FirstFrameTimeout)", Cause: err}
		}
		return &Error{Code: Canceled, Message: name + ": reading the request: " + err.Error(), Cause: err}
	}
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
	if v, ok := m.(Validator); ok && validate {
		if err := v.Validate(); err != nil {
			return &Error{Code: InvalidArgument, Message: err.Error(), Cause: err}
		}
	}
	return nil
}

// appendMessage appends m, length-prefixed (and compressed when gzipOut
// and m is large enough), to buf.
func (gc *grpcCall) appendMessage(buf []byte, m Message) []byte {
	size := m.Size()
	threshold := gc.g.s.o.compress
	if threshold <= 0 {
		threshold = 1 << 10
	}
	if !gc.gzipOut || size < threshold {
		return m.MarshalAppend(grpcwire.AppendHeader(buf, 0, size))
	}
	pool := &gc.g.pools
	raw := pool.getBuf()
	defer pool.putBuf(raw)
	raw.b = m.MarshalAppend(raw.b)
	zw := pool.getGzipWriter()
	start := len(buf)
	buf = grpcwire.Compress(zw, grpcwire.AppendHeader(buf, grpcwire.FlagCompressed, 0), raw.b)
	pool.gzw.Put(zw)
	n := len(buf) - start - grpcwire.HeaderLen
	grpcwire.AppendHeader(buf[start:start], grpcwire.FlagCompressed, n)
	return buf
}

// setHeaders sets the response headers of a call that answers messages.
func (gc *grpcCall) setHeaders(h http.Header) {
	if gc.web {
		h[hdrKeyContentType] = gc.g.hdr.web
	} else {
		h[hdrKeyContentType] = gc.g.hdr.grpc
	}
	if gc.gzipOut {
		h[hdrKeyEncoding] = gc.g.hdr.gzip
	}
	if gc.gzipIn || len(gc.r.Header[hdrKeyAcceptEncoding]) > 0 {
		h[hdrKeyAcceptEncoding] = gc.g.hdr.encodings
	}
	if gc.r.ProtoMajor == 2 {
		// Present but empty: net/http's HTTP/2 server then sends no
		// date and no content-length, which gRPC does not use, and
		// spares their formatting.
		h["Date"], h["Content-Length"] = nil, nil
	}
}

// refuse answers a call that did not run, marked so that the client may
// try it elsewhere.
func (gc *grpcCall) refuse(e *Error) {
	gc.fail(e, MD{conn.MDRefused, "1"})
}

// fail answers err, with md, when no message was sent: a Trailers-Only
// response (the status in the headers), or for gRPC-Web a trailers frame.
func (gc *grpcCall) fail(err error, md MD) {
	h := gc.w.Header()
	code, msg, details := grpcStatus(err)
	if gc.web {
		gc.setHeaders(h)
		_, _ = gc.w.Write(gc.appendWebTrailers(nil, code, msg, details, md))
		return
	}
	h[hdrKeyContentType] = gc.g.hdr.grpc
	setStatus(h, "", code, msg, details)
	addMD(h, "", md)
	gc.w.WriteHeader(http.StatusOK)
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
