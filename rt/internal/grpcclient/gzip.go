package grpcclient

import (
	"errors"
	"net/http"
	"strings"

	"github.com/yrpc/yrpc/rt/internal/conn"
)

// What a connection knows of its server's taking gzipped requests.
const (
	gzipUnknown  int32 = iota // not told yet: unary calls try it
	gzipAccepted              // it listed gzip, or answered a gzipped call
	gzipRefused               // it listed encodings without gzip, or refused a gzipped call
)

// sendGzip reports whether requests on c may be gzipped: never when
// Config.Compress is 0; else unless the server refused gzip, and for a
// stream only once it accepted gzip. A unary call sent gzipped to a
// server that refuses it is sent again identity (Call), which a stream
// cannot be: its messages may be gone already.
func (c *Conn) sendGzip(stream bool) bool {
	if c.p.cfg.Compress <= 0 {
		return false
	}
	switch c.gzip.Load() {
	case gzipAccepted:
		return true
	case gzipUnknown:
		return !stream
	}
	return false
}

// noteAccepted notes the grpc-accept-encoding of a response's headers h:
// whether the server takes gzip, when it lists its encodings.
func (c *Conn) noteAccepted(h http.Header) {
	if c.p.cfg.Compress <= 0 || c.gzip.Load() == gzipAccepted || len(h[hdrAcceptEncoding]) == 0 {
		return
	}
	state := gzipRefused
	for _, v := range h[hdrAcceptEncoding] {
		for e := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(e) == "gzip" {
				state = gzipAccepted
			}
		}
	}
	c.gzip.Store(state)
}

// noteGzipAnswer notes the outcome err of a unary call sent gzipped, and
// reports whether the server refused the encoding: the call did not run
// then (a server checks the encoding before it runs the call). A success,
// or an error the call's handler may have returned, says the server took
// gzip; errors that may come from before the encoding's check (no such
// method, the connection's, a proxy's) say nothing.
func (c *Conn) noteGzipAnswer(err error) (refused bool) {
	if gzipRefusal(err) {
		c.gzip.Store(gzipRefused)
		return true
	}
	var ce *conn.Error
	if err == nil || errors.As(err, &ce) && ce.Remote && !beforeHandler(ce.Code) {
		c.gzip.CompareAndSwap(gzipUnknown, gzipAccepted)
	}
	return false
}

// beforeHandler reports whether a server or a proxy may answer code
// before it looks at a request's encoding.
func beforeHandler(code uint8) bool {
	switch code {
	case unknown, unimplemented, internal, unavailable, unauthenticated, permissionDenied, resourceExhausted:
		return true
	}
	return false
}

// gzipRefusal reports whether err is a server's refusal of a request's
// gzip encoding: Unimplemented with a message about it, as gRPC's servers
// answer an encoding they do not decode (grpc-go: "grpc: Decompressor is
// not installed for grpc-encoding \"gzip\""; grpc-java: "Can't find
// decompressor for gzip").
func gzipRefusal(err error) bool {
	var ce *conn.Error
	if !errors.As(err, &ce) || !ce.Remote || ce.Code != unimplemented {
		return false
	}
	m := strings.ToLower(ce.Message)
	return strings.Contains(m, "gzip") && (strings.Contains(m, "encoding") || strings.Contains(m, "compress"))
}
