// Package grpcwire implements the protocol-level parts of gRPC over
// HTTP/2 and of gRPC-Web that yrpc's server needs, on the standard library
// and yrpc's own protobuf primitives (package rt/codec): no gRPC or
// protobuf-go dependency.
//
// # Messages
//
// A request or response body is a sequence of length-prefixed messages:
//
//	offset size field
//	0      1    flags: bit 0 compressed (with the stream's grpc-encoding);
//	            bit 7 (gRPC-Web only) a trailers frame, see below
//	1      4    length of the message in bytes, big endian
//	5      n    the message
//
// [Reader] reads them from a body with a size limit (a longer prefix is a
// [*TooLargeError], which servers answer with ResourceExhausted) and a
// buffer that grows with the bytes that arrive, never with the bytes a
// prefix claims. [AppendHeader] writes the prefix. [Compress] and
// [Decompress] apply the gzip encoding; Decompress bounds the output, so a
// small compressed message cannot inflate past the limit.
//
// # Headers
//
// grpc-timeout is one to eight ASCII digits and a unit (H, M, S, m, u, n):
// [ParseTimeout] and [AppendTimeout]. grpc-message is percent-encoded
// (bytes outside printable ASCII, and '%' itself, as %XX): [EncodeMessage]
// and [DecodeMessage]. Metadata whose key ends in "-bin" carries bytes in
// base64 (sent unpadded, read padded or not): [EncodeBinary] and
// [DecodeBinary]. grpc-status-details-bin carries a google.rpc.Status
// ([Status], with details as google.protobuf.Any and Validate's failures
// as a google.rpc.BadRequest, [AppendBadRequest]).
//
// # gRPC-Web
//
// gRPC-Web (application/grpc-web, application/grpc-web+proto) frames
// messages the same way and cannot rely on HTTP trailers: the response
// ends with a frame whose flags have bit 7 set and whose body is the
// trailers in HTTP/1 header form, "key: value\r\n" per field, keys in
// lowercase ([AppendWebTrailers], [ParseWebTrailers]).
//
// The specifications: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md
// and https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-WEB.md.
package grpcwire
