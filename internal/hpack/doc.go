// Package hpack encodes and decodes HTTP/2 header blocks (RFC 7541,
// HPACK): the static and dynamic tables, integers with prefixes, string
// literals with and without Huffman coding, and dynamic table size
// updates.
//
// It is yrpc's own, for the gRPC side of rt (rt/internal/h2), so that the
// root module needs nothing beyond the standard library for HTTP/2. A
// Decoder takes whole header blocks (the caller joins a block's HEADERS
// and CONTINUATION fragments, bounding their size); an Encoder appends
// fields to a caller's buffer. Neither is safe for concurrent use: each
// belongs to one connection and one direction.
//
// Limits against hostile peers: a Decoder refuses strings longer than its
// limit before it reads them, integers beyond 32 bits, table size updates
// above the limit this side announced or after the first field of a block,
// indexes outside the tables, and Huffman codes with an EOS symbol or
// padding that is not a prefix of EOS (RFC 7541 sections 4.2, 5.1, 5.2,
// 6.3).
package hpack
