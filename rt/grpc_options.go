package rt

import (
	"crypto/tls"
	"slices"
)

// GRPCMode says where a Server answers gRPC: gRPC over HTTP/2 (with TLS,
// or h2c without) and gRPC-Web (over HTTP/1.1 or HTTP/2).
//
// The gRPC side serves the same registered services as yrpc's protocol,
// through the same path: closing check, registry token, per-client rate
// limit, calls in flight per connection (Limits.MaxCallsPerConn, which is
// also the HTTP/2 connection's MaxConcurrentStreams) and overall
// (Limits.MaxCalls), decoding, authentication (Authenticator, PeerFrom
// with the connection's TLS state), authorization, Validate, the server
// interceptors, the handler and metrics. A gRPC stream counts as one call.
// The mapping:
//
//   - The path "/package.Service/Method" names the method; a gRPC caller
//     names no group or version, so it reaches the service the server
//     registered whatever its group and version (a call that carries
//     yrpc-group or yrpc-version metadata is checked as on yrpc's wire).
//   - grpc-timeout is the handler context's deadline.
//   - Request headers are the call's metadata (IncomingMetadata), keys in
//     lowercase, values of "-bin" keys base64-decoded; the transport's own
//     headers (content-type, te, grpc-*) are not.
//   - SetResponseMetadata's pairs go in the response trailers of a unary
//     call (in the headers of an error answered without a message, as
//     gRPC's Trailers-Only responses do); a stream sends those set before
//     its first message in its headers and the rest, with SetTrailer's,
//     in its trailers. Values of "-bin" keys are base64-encoded; pairs
//     gRPC cannot carry are left out: keys other than lowercase letters,
//     digits, '-', '_' and '.', the transport's own, and values of other
//     keys that are not printable ASCII.
//   - An error's Code is grpc-status, its Message grpc-message; its Details
//     (or, for Validate's failures, a google.rpc.BadRequest naming the
//     field) go in grpc-status-details-bin as a google.rpc.Status.
//   - grpc-encoding gzip is accepted on requests and answered in kind
//     (messages of 1 KiB and more are compressed, or from the
//     WithCompression threshold); identity always. Decompressed messages
//     are bounded like the others.
//   - Messages are bounded by WithMaxFrameSize (4 MiB): a longer request
//     message is refused with ResourceExhausted; request headers by
//     WithMaxMetadataSize plus 1 KiB for the transport's own.
//   - A call refused before it ran (closing, rate limit, calls in flight)
//     carries the trailer yrpc-refused: 1.
//
// A TLS server (WithTLS) answers gRPC only over TLS, unless
// WithPlaintextAllowed: it refuses h2c and plaintext gRPC-Web. It offers
// the ALPN protocols "yrpc", "h2" and "http/1.1", in that order.
//
// HTTP/2 is the server's own, standard library only, with yrpc's own
// HPACK (gRPC-Web over HTTP/1.1 is net/http's). Its limits: MAX_CONCURRENT_STREAMS is
// Limits.MaxCallsPerConn (a stream past it is refused with
// REFUSED_STREAM, which clients retry); a client that resets streams
// before they are answered much faster than it lets them finish (net of
// the finished ones, twice MaxCallsPerConn, at least 100) is sent
// GOAWAY(ENHANCE_YOUR_CALM) (rapid reset); frames are read up to 16 KiB;
// request headers up to the metadata limit plus 1 KiB
// (SETTINGS_MAX_HEADER_LIST_SIZE: a call past it fails with
// ResourceExhausted), and a header block of more than twice that (at
// least 64 KiB) or of more than 64 frames closes the connection
// (CONTINUATION floods). The connection's receive window is
// Limits.MaxRequestBytes (at least one message of WithMaxFrameSize): a
// unary call's request bytes count against it until the call is done with
// them, which bounds what a client makes the server hold without stopping
// the reader. So that incomplete requests never take all of it (none could
// then complete), a stream's initial window is small enough that
// MAX_CONCURRENT_STREAMS of them leave room for one message of
// WithMaxFrameSize (at most 1 MiB, at least 1 KiB: 11 KiB by default); a
// unary request larger than that is granted the window its message needs,
// in the order the messages' prefixes came, as room frees up. A stream
// method's window is 1 MiB: its bytes count against that window until its
// handler reads them, and leave the connection's window as they arrive (as
// in grpc-go), so that a handler that reads slowly, or not at all, holds
// up only its own stream, and holds at most 1 MiB of it. The streams of a
// connection return the window early for at most the window's size
// (MaxRequestBytes) of unread bytes together; beyond that their bytes
// hold the window until read, so that a connection's streams make the
// server hold at most twice MaxRequestBytes. A connection that
// starts no call within Limits.FirstFrameTimeout of its first bytes is
// closed, as is one idle for WithIdleTimeout, one silent for three
// WithHeartbeat periods (it is pinged after one), and one that takes none
// of the bytes written to it for WithWriteTimeout. A unary call's request must arrive within
// Limits.FirstFrameTimeout (or its deadline, if sooner). Shutdown sends
// GOAWAY naming the last stream admitted and refuses later streams with
// REFUSED_STREAM. Connections count against Limits.MaxConns and
// MaxConnsPerIP like yrpc's.
type GRPCMode uint8

// GRPC modes.
const (
	// GRPCSamePort makes the listeners given to Serve answer yrpc and
	// gRPC alike, telling them apart by the first bytes (yrpc's preface
	// "YRPC", HTTP/2's "PRI * HTTP/2.0", an HTTP/1.1 request line for
	// gRPC-Web) or, with TLS, by the ALPN protocol the client chose. The
	// default.
	GRPCSamePort GRPCMode = iota
	// GRPCOwnPort makes Serve's listeners answer yrpc only; gRPC is
	// served on the listeners given to ServeGRPC.
	GRPCOwnPort
	// GRPCOff turns gRPC off: Serve's listeners answer yrpc only and
	// ServeGRPC fails.
	GRPCOff
)

// WithGRPC says where the server answers gRPC and gRPC-Web (see
// GRPCMode). Default: GRPCSamePort. With any mode but GRPCOff,
// Server.ServeGRPC serves gRPC alone on a listener of its own.
func WithGRPC(m GRPCMode) ServerOption {
	return serverOption(func(c *serverConfig) { c.grpcMode = m })
}

// ALPN protocols of HTTP, offered by a TLS server that serves gRPC.
const (
	alpnH2    = "h2"
	alpnHTTP1 = "http/1.1"
)

// grpcTLS returns the server's TLS config with the ALPN protocols of
// HTTP/2 and HTTP/1.1 after yrpc's, when the server serves gRPC.
func grpcTLS(cfg *tls.Config, m GRPCMode) *tls.Config {
	if cfg == nil || m == GRPCOff {
		return cfg
	}
	c := cfg.Clone()
	for _, p := range [...]string{alpnH2, alpnHTTP1} {
		if !slices.Contains(c.NextProtos, p) {
			c.NextProtos = append(c.NextProtos, p)
		}
	}
	return c
}
