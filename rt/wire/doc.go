// Package wire implements yrpc's wire format: the connection handshake
// (preface and settings) and the frames that carry requests, responses,
// streams and control messages over one multiplexed stream connection.
//
// The package only encodes and decodes; it owns no connection. Encoders
// append to a caller's buffer ([AppendHeader], [AppendFrame],
// [Compressor.AppendFrame], [AppendStreamOpen], ...) so that a message can
// be marshaled straight into the output; the [Reader] decodes frames from a
// stream in large reads without allocating per frame; [ClientHandshake]
// and [ServerHandshake] run the handshake; [SendWindow] and [RecvWindow]
// do the flow-control arithmetic of streams.
//
// # Preface
//
// Each side sends a preface once, when the connection opens, and reads the
// peer's before anything else. All integers are little endian.
//
//	offset size field
//	0      4    magic "YRPC" (59 52 50 43)
//	4      1    protocol version: 1
//	5      4    features (uint32): bit 0 lz4, bit 1 settings, bit 2 streams;
//	            other bits reserved, sent as 0 and ignored
//	9      4    max frame size (uint32): the largest frame, header included,
//	            the sender accepts (>= 1024)
//
// A side uses a feature only if both prefaces announce it (the intersection,
// [Preface.Negotiate]), and never sends a frame larger than the peer's max
// frame size. A preface that starts with anything but "YRPC" (an HTTP or TLS
// client, garbage) is refused with [ErrBadPreface]; another version with
// [ErrVersion]. Examples, version 1 with 4 MiB frames: lz4 only (as the
// first release sends), then lz4, settings and streams:
//
//	59 52 50 43  01  01 00 00 00  00 00 40 00
//	59 52 50 43  01  07 00 00 00  00 00 40 00
//
// # Settings
//
// The preface has a fixed size, so whatever else a side must announce
// travels in a Settings frame (type 8), exchanged only when both prefaces
// announce the settings feature, in this order (see [ClientHandshake]):
//
//  1. the client sends its preface;
//  2. the server reads it and sends its preface and, if both announce
//     settings, its Settings frame right after it;
//  3. the client reads the server's preface and, if both announce
//     settings, the server's Settings frame, then sends its own;
//  4. the server reads the client's Settings frame, the first frame after
//     the client's preface.
//
// Each side waits only for bytes the other has already sent, so the
// handshake cannot deadlock even on an unbuffered connection, and a peer
// that does not announce settings (the first release, which refuses frame
// types it does not know) never gets a Settings frame: its settings are the
// defaults. The client may send requests right after its Settings frame.
//
// A Settings frame has the fixed header of any frame with type 8 and
// flags, status, id and method 0, and at most [MaxSettingsSize] bytes of
// body: pairs of uvarint id, uvarint value. A receiver ignores ids it does
// not know, so later features add settings without a new version; a later
// pair overrides an earlier one with the same id; a value of 0 means the
// default, as if the pair were left out. The ids ([Settings]):
//
//	id name                   value (uint32)                        default
//	1  max frame size         as in the preface (the smaller wins)   the preface's
//	2  max metadata size      largest metadata block accepted        16 KiB
//	3  max concurrent calls   calls and streams served at once      not announced
//	4  initial stream window  credit of each new stream (<= 2^31-1) 64 KiB
//	5  connection window      credit of the connection (<= 2^31-1)  1 MiB
//
// Example: max metadata size 16 KiB, 100 concurrent calls, windows of
// 64 KiB and 1 MiB (a body of 14 bytes):
//
//	79 01 08 00 00 00 00 00 00 00 00 00 00 0e 00 00 00   header, type 8
//	02 80 80 01    max metadata size 16384
//	03 64          max concurrent calls 100
//	04 80 80 04    initial stream window 65536
//	05 80 80 40    connection window 1048576
//
// A sender checks a call against the peer's limits before sending it
// ([Settings.CheckSend]) and fails that call alone, rather than have the
// peer close a connection that other calls share.
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
//	            6 Cancel, 7 GoAway, 8 Settings (handshake only),
//	            9 StreamOpen, 10 StreamMessage, 11 StreamHalfClose,
//	            12 StreamClose, 13 StreamReset, 14 WindowUpdate
//	3      1    flags: bit 0 compressed, bit 1 deadline, bit 2 metadata;
//	            bits 3-7 reserved, must be 0
//	4      1    status: the rt.Code of a Response, GoAway, StreamClose or
//	            StreamReset; else 0
//	5      4    id (uint32): see below
//	9      4    method ID (uint32) of a Request, Oneway or StreamOpen; else 0
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
// Ping to Pong; in GoAway the highest request id the sender will still
// serve; the stream id of stream frames.
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
// A compressed body (flag bit 0, only sent when both sides announced lz4;
// the Reader refuses it otherwise) is uvarint(decompressed length) followed
// by one lz4 block (the lz4 block format of
// https://github.com/lz4/lz4/blob/dev/doc/lz4_Block_format.md, no lz4
// frame header, as github.com/pierrec/lz4/v4 writes it). The decompressed
// length may not exceed the receiver's max frame size, nor 256 times the
// block's size (more than lz4 can encode).
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
// # Streams
//
// Stream frames (types 9 to 14) are sent only when both prefaces announce
// the streams feature; a Reader refuses them otherwise, so a peer without
// streams never sees one (a runtime fails a stream call to it locally) and
// keeps serving unary and oneway calls. A stream's id is a request id: the
// client takes it from the counter of its requests (never 0), and does not
// reuse it while the stream lives. Each type carries only what this table
// allows; anything else is malformed:
//
//	type               sent by  method  status  flags       body
//	9  StreamOpen      client   method  0       deadline,   none
//	                                            metadata
//	10 StreamMessage   both     0       0       compressed  one message
//	11 StreamHalfClose client   0       0       none        none
//	12 StreamClose     server   0       code    metadata    error message (UTF-8)
//	13 StreamReset     both     0       code    none        reason (UTF-8), optional
//	14 WindowUpdate    both     0       0       none        uvarint increment,
//	                                                        1 to 2^31-1
//
// A StreamOpen starts a call like a Request: its metadata are the call's,
// its timeout bounds the whole stream, and it counts as one call against
// the server's limits. Then both sides send messages. A StreamHalfClose
// says the client sends no more. A StreamClose ends the stream with a
// status (0 for OK), a message and trailer metadata; the server sends
// nothing on the stream after it. A StreamReset aborts the stream from
// either side (the client's cancellation, say, or the server's shutdown);
// its sender sends nothing more on the stream. The stream is over for a
// side once it has sent or received StreamClose or StreamReset; frames that
// arrive later for a stream that is over or unknown (they may have crossed
// a reset) are dropped. A GoAway's id covers streams as it covers requests.
//
// Examples for stream 3: an open for method 0x98f998eb with a 250ms
// timeout and metadata yrpc-app=web; a message 0a 03 41 64 61; a
// half-close; a close with status OK and trailer n=2; a reset with code 1
// (Canceled) and reason "canceled"; and a window update of 16384:
//
//	79 01 09 06 00 03 00 00 00 eb 98 f9 98 11 00 00 00
//	   90 a1 0f  0d 08 79 72 70 63 2d 61 70 70 03 77 65 62
//	79 01 0a 00 00 03 00 00 00 00 00 00 00 05 00 00 00  0a 03 41 64 61
//	79 01 0b 00 00 03 00 00 00 00 00 00 00 00 00 00 00
//	79 01 0c 04 00 03 00 00 00 00 00 00 00 05 00 00 00  04 01 6e 01 32
//	79 01 0d 00 01 03 00 00 00 00 00 00 00 08 00 00 00  63 61 6e 63 65 6c 65 64
//	79 01 0e 00 00 03 00 00 00 00 00 00 00 03 00 00 00  80 80 01
//
// # Flow control
//
// Stream messages, and only they, are flow controlled, per stream and per
// connection, with credit in bytes. A message costs 17 plus the length of
// its body uncompressed ([MessageCost]), so that empty messages are not
// free. A sender starts each stream with the receiver's initial stream
// window and the connection with its connection window (the receiver's
// Settings, or the defaults). It may send a message while both its credit
// on the stream and on the connection are positive, and subtracts the cost
// from both; the credit may so go negative by less than one message, and a
// message larger than the window is never stuck ([SendWindow]). A
// WindowUpdate adds its increment to the stream's credit, or to the
// connection's when its id is 0; a credit above 2^31-1 is an error.
//
// A receiver grants credit back as it is done with messages
// ([RecvWindow]): on a stream when the application has read the message,
// so that a slow reader stops only its own stream; on the connection as
// soon as the message is taken off the connection, so that a stalled
// stream never stops the others (the stream windows bound what it holds).
// It batches grants until a quarter of the window is consumed, but grants
// at once when the sender has run out of credit. A message that arrives
// when the sender had no credit left breaks the protocol
// ([ErrFlowControl]): the receiver resets the stream, or closes the
// connection for the connection's window.
//
// # Limits and errors
//
// The Reader refuses a frame larger than its MaxFrameSize (default 4 MiB)
// or a decompressed body above it with [ErrFrameTooLarge], metadata above
// MaxMetadataSize (default 16 KiB) with [ErrMetadataTooLarge], and anything
// else that breaks the format, including a compressed body or a stream
// frame that was not negotiated, with [ErrMalformed]; these are
// *[FrameError] values whose message names the frame and the sizes
// involved. A stream cannot be resynchronised after a bad frame, so the
// Reader then stays failed and the connection should be closed.
//
// The Reader's memory follows the bytes received, never the sizes a peer
// claims: a 4 KiB buffer to start with ([DefaultBufferSize]), doubling up
// to 64 KiB ([DefaultBatchSize]) while reads fill it; a larger frame is
// read into a buffer that doubles only when the bytes received fill it.
// That buffer is lent by a [BufferPool] and given back once the frame has
// been returned, or, with no pool, kept for the next large frame.
// [Reader.Release] shrinks an idle Reader back to its first buffer.
package wire
