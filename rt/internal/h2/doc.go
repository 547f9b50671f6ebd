// Package h2 is the protocol layer of yrpc's HTTP/2 server connections
// (RFC 9113), which carry gRPC: reading frames, writing them into a
// caller's buffer, header blocks and flow-control windows. HPACK is
// golang.org/x/net/http2/hpack's; everything else is here, so that a
// connection reads and writes frames without allocating.
//
// # Reading
//
// [Reader] reads frames from a buffered connection: each frame's payload
// is a slice of the reader's buffer, valid until the next call of Next. It
// checks what RFC 9113 asks of each frame type on its own (lengths, stream
// identifiers, padding, the order of HEADERS and CONTINUATION frames, the
// maximum frame size) and reports violations as a [ConnError] (the
// connection must end with GOAWAY) or a [StreamError] (the stream must be
// reset). What depends on the connection's state (which streams exist,
// flow control) is the caller's.
//
// [HeaderDecoder] decodes a request's header block, fed fragment by
// fragment from HEADERS and CONTINUATION frames, into a [Request]: the
// pseudo-header fields, the fields gRPC uses and the others in order. It
// enforces the rules of RFC 9113 section 8 (lowercase names, no
// connection-specific fields, pseudo-header fields first and once) and a
// limit on the header list size; past the limit it goes on decoding, to
// keep the HPACK state, without keeping fields. It also bounds the bytes
// and frames of a header block (CONTINUATION floods).
//
// # Writing
//
// The Append functions append one frame to a buffer. [BlockEncoder]
// encodes a header block with a connection's HPACK encoder and frames it as
// HEADERS followed by as many CONTINUATION frames as the peer's maximum
// frame size needs.
//
// # Flow control
//
// [Inflow] is a receive window shared by the goroutine that reads frames
// (Take) and those that consume their bytes (Add): it decides when a
// WINDOW_UPDATE is due, batching increments. Send windows are plain
// arithmetic under the connection's write lock ([AddWindow]).
package h2
