// Package grpcclient is the client side of gRPC over HTTP/2, for yrpc
// clients that call plain gRPC servers: a Pool per server address holds
// one HTTP/2 connection (net/http's, made with Transport.NewClientConn:
// TLS with ALPN h2, or unencrypted HTTP/2 with prior knowledge), dialed
// lazily, redialed with backoff, replaced after a GOAWAY; Conn.Call makes
// unary calls and Conn.OpenStream opens streams of the three kinds.
//
// Calls have the contract of package conn's: a conn.Request describes the
// call, the response's metadata lands in conn.Pending.MD, and errors are
// *conn.Error values with rt's codes (gRPC's numbers), wrapped in
// *conn.NotSent when the call provably did not run (no connection, the
// request's headers never written, or the server's yrpc-refused trailer).
//
// The mapping: the path is "/" and the method's full name; the deadline
// goes in grpc-timeout; metadata in request headers (keys in lowercase,
// "-bin" values in base64; the transport's own headers are left out);
// grpc-status, grpc-message and grpc-status-details-bin (a
// google.rpc.Status) come back as the error's code, message and details;
// the response's headers and trailers are its metadata. Responses may be
// gzipped (grpc-encoding); requests are gzipped from Config.Compress bytes
// once the server said it accepts gzip. Response messages are bounded by
// Config.MaxMessage (ResourceExhausted). The framing, timeout, status and
// metadata encodings are package grpcwire's.
package grpcclient
