// Package wire implements yrpc's wire format: the connection preface and
// the frames that carry requests, responses and control messages over one
// multiplexed stream connection.
//
// The package only encodes and decodes; it owns no connection. Encoders
// append to a caller's buffer ([AppendHeader], [AppendFrame],
// [Compressor.AppendFrame]) so that a message can be marshaled straight
// into the output; the [Reader] decodes frames from a stream in large reads
// without allocating per frame.
//
// # Preface
//
// Each side sends a preface once, when the connection opens, and reads the
// peer's before anything else. All integers are little endian.
//
//	offset size field
//	0      4    magic "YRPC" (59 52 50 43)
//	4      1    protocol version: 1
//	5      4    features (uint32): bit 0 = lz4; other bits reserved, sent as 0
//	9      4    max frame size (uint32): the largest frame, header included,
//	            the sender accepts (>= 1024)
//
// A side uses a feature only if both prefaces announce it (the intersection,
// [Preface.Negotiate]), and never sends a frame larger than the peer's max
// frame size. A preface that starts with anything but "YRPC" (an HTTP or TLS
// client, garbage) is refused with [ErrBadPreface]; another version with
// [ErrVersion]. Example, version 1, lz4, 4 MiB:
//
//	59 52 50 43  01  01 00 00 00  00 00 40 00
//
// # Frames
//
// Then each side sends frames: a 17-byte fixed header, an optional section
// and the body. A uvarint is encoding/binary's unsigned varint (protobuf's
// base-128 varint).
//
//	offset size field
//	0      1    magic 0x79 ('y')
//	1      1    version: 1
//	2      1    type: 1 Request, 2 Response, 3 Oneway, 4 Ping, 5 Pong,
//	            6 Cancel, 7 GoAway
//	3      1    flags: bit 0 compressed, bit 1 deadline, bit 2 metadata;
//	            bits 3-7 reserved, must be 0
//	4      1    status: the rt.Code of a Response or GoAway; else 0
//	5      4    id (uint32): see below
//	9      4    method ID (uint32) of a Request or Oneway; else 0
//	13     4    length (uint32): bytes after the header (optional section
//	            and body), so the frame size is 17 + length
//	17     ...  optional section, in this order:
//	            if deadline: uvarint timeout in microseconds (>= 1)
//	            if metadata: uvarint block length (>= 1), then the block
//	...    ...  body: the rest of the frame
//
// The fixed header alone tells the frame's size, so a reader can bound and
// buffer a frame before looking inside it.
//
// The id is the request id of a Request, Oneway, Response (the request it
// answers) and Cancel (the request to abandon); an opaque value echoed from
// Ping to Pong; and in GoAway the highest request id the sender will still
// serve.
//
// The body of a Request, Oneway or successful Response (status 0) is the
// protobuf-encoded message. An error Response has the error's code in status
// and its message (UTF-8) as body; a GoAway may carry a code and a reason.
// Ping, Pong and Cancel bodies are normally empty.
//
// The timeout is the caller's remaining budget, relative so that the peers'
// clocks need not agree; the encoder rounds it up to whole microseconds.
//
// The metadata block is a sequence of key/value pairs, each string as
// uvarint(length) followed by its bytes: key1, value1, key2, value2, ....
// The block's length gives the count; a key with no value is malformed.
//
// A compressed body (flag bit 0, only sent when both sides announced lz4)
// is uvarint(decompressed length) followed by one lz4 block (the lz4 block
// format of https://github.com/lz4/lz4/blob/dev/doc/lz4_Block_format.md,
// no lz4 frame header, as github.com/pierrec/lz4/v4 writes it). The
// decompressed length may not exceed the receiver's max frame size.
//
// Canonical form: the deadline flag is never set with a zero timeout, nor
// the metadata flag with an empty block, nor the compressed flag with an
// empty body; the Reader refuses such frames.
//
// # Example
//
// A request with id 1 for method ID 0x98f998eb (FNV-1a 32 of
// "greeter.Greeter/SayHello"), a 250ms timeout, metadata yrpc-app=web and
// the body 0a 03 41 64 61 (field 1 = "Ada") is 39 bytes:
//
//	79                 magic
//	01                 version 1
//	01                 type Request
//	06                 flags: deadline | metadata
//	00                 status 0
//	01 00 00 00        id 1
//	eb 98 f9 98        method ID 0x98f998eb
//	16 00 00 00        length 22 = 3 + 1 + 13 + 5
//	90 a1 0f           timeout 250000µs (uvarint)
//	0d                 metadata block of 13 bytes:
//	08 79 72 70 63 2d 61 70 70     "yrpc-app"
//	03 77 65 62                    "web"
//	0a 03 41 64 61     body
//
// # Limits and errors
//
// The Reader refuses a frame larger than its MaxFrameSize (default 4 MiB)
// or a decompressed body above it with [ErrFrameTooLarge], metadata above
// MaxMetadataSize (default 16 KiB) with [ErrMetadataTooLarge], and anything
// else that breaks the format with [ErrMalformed]; these are *[FrameError]
// values whose message names the frame and the sizes involved. A stream
// cannot be resynchronised after a bad frame, so the Reader then stays
// failed and the connection should be closed.
package wire
