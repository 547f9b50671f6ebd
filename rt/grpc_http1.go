package rt

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// httpCall is a gRPC-Web call over HTTP/1.1, served by the grpcServer's
// http.Server. (HTTP/2 connections, gRPC-Web's included, are the
// server's own: see h2Conn.)
type httpCall struct {
	grpcCall
	w http.ResponseWriter
	r *http.Request
}

// ServeHTTP serves one gRPC-Web request over HTTP/1.1; a gRPC request
// over HTTP/1.1 is refused (505), gRPC needs HTTP/2.
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
	ct := r.Header.Get("Content-Type")
	proto := grpcwire.ParseContentType(ct)
	switch {
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, errNotPost, http.StatusMethodNotAllowed)
		return
	case proto == grpcwire.Unsupported:
		http.Error(w, errMediaType+ct, http.StatusUnsupportedMediaType)
		return
	case proto == grpcwire.GRPC:
		http.Error(w, "rt: gRPC needs HTTP/2 (gRPC-Web works over HTTP/1.1)", http.StatusHTTPVersionNotSupported)
		return
	}
	call := &httpCall{w: w, r: r}
	call.g, call.tr, call.web, call.sc.conn = g, call, true, hc.c
	rq := grpcRequest{name: strings.TrimPrefix(r.URL.Path, "/"), timeout: r.Header.Get("Grpc-Timeout"),
		encoding: r.Header.Get("Grpc-Encoding"), acceptEncoding: r.Header.Get("Grpc-Accept-Encoding")}
	for k, vs := range r.Header {
		key := strings.ToLower(k)
		for _, v := range vs {
			rq.meta = append(rq.meta, key, v)
		}
	}
	if !call.start(&rq) {
		return
	}
	defer call.done()
	stop := context.AfterFunc(r.Context(), func() { call.sc.ctx.cancel(context.Canceled) })
	defer stop()
	call.readFrom(r.Body)
	m := call.sc.me.info.Method
	if m.Stream != NotStream {
		// Streams last: the read deadline of unary requests does not apply.
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		call.serveStream(func() { _ = r.Body.Close() })
		return
	}
	req := m.NewRequest()
	err := call.recv(req, false)
	if err == io.EOF {
		err = Errorf(InvalidArgument, "%s: the request has no message", m.FullName)
	}
	call.serveUnary(req, err)
}

// Texts of HTTP errors.
const (
	errNotPost   = "rt: gRPC calls are POST requests"
	errMediaType = "rt: this server answers gRPC (application/grpc) and gRPC-Web (application/grpc-web) with protobuf messages, not "
)

// send implements grpcTransport: headers and body, flushed. gRPC-Web has
// no HTTP trailers: the call put its status in the body.
func (hc *httpCall) send(o *grpcOut) error {
	if o.headers {
		h := hc.w.Header()
		h["Content-Type"] = []string{grpcwire.ContentTypeWeb + "+proto"}
		if hc.gzipOut {
			h["Grpc-Encoding"] = []string{"gzip"}
		}
		if hc.acceptEnc {
			h["Grpc-Accept-Encoding"] = []string{acceptedEncodings}
		}
		if !o.end {
			for k, v := range outgoingMD(o.md) {
				key := http.CanonicalHeaderKey(k)
				h[key] = append(h[key], v)
			}
		}
	}
	wb := hc.g.pools.getBuf()
	defer hc.g.pools.putBuf(wb)
	if o.msg != nil {
		wb.b = o.msg.MarshalAppend(grpcwire.AppendHeader(wb.b, 0, o.msg.Size()))
	}
	wb.b = append(wb.b, o.body...)
	if _, err := hc.w.Write(wb.b); err != nil {
		return err
	}
	if f, ok := hc.w.(http.Flusher); ok && !o.end {
		f.Flush()
	}
	return nil
}

// acceptedEncodings is grpc-accept-encoding's value.
const acceptedEncodings = "gzip,identity"
