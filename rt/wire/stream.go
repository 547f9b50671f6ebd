package wire

import (
	"encoding/binary"
	"time"
)

// Encoders of the stream frames; see the package doc for their layout.
// Each appends one whole frame to dst and does not allocate when dst has
// room. Send them only when both prefaces announced FeatureStreams.
//
// A message is written like any frame: AppendFrame (or AppendHeader and
// the body marshaled after it, or Compressor.AppendFrame when lz4 was
// negotiated) with Header{Type: TypeStreamMessage, ID: id}.

// AppendStreamOpen appends a StreamOpen frame: stream id (a request id of
// the client, never 0) for method, with the call's remaining timeout (0:
// none) and metadata md (flattened pairs; nil: none).
func AppendStreamOpen(dst []byte, id, method uint32, timeout time.Duration, md []string) []byte {
	return AppendFrame(dst, &Header{Type: TypeStreamOpen, ID: id, Method: method, Timeout: timeout}, md, nil)
}

// AppendStreamHalfClose appends a StreamHalfClose frame: the client sends
// no more messages on stream id.
func AppendStreamHalfClose(dst []byte, id uint32) []byte {
	return AppendFrame(dst, &Header{Type: TypeStreamHalfClose, ID: id}, nil, nil)
}

// AppendStreamClose appends a StreamClose frame, the server's end of
// stream id: code (an rt.Code, 0 for OK), msg (the error message, UTF-8)
// and the trailer metadata (flattened pairs; nil: none).
func AppendStreamClose(dst []byte, id uint32, code uint8, msg string, trailer []string) []byte {
	return appendStringFrame(dst, &Header{Type: TypeStreamClose, ID: id, Status: code}, trailer, msg)
}

// AppendStreamReset appends a StreamReset frame, which aborts stream id
// from either side with code (an rt.Code) and an optional reason.
func AppendStreamReset(dst []byte, id uint32, code uint8, reason string) []byte {
	return appendStringFrame(dst, &Header{Type: TypeStreamReset, ID: id, Status: code}, nil, reason)
}

// AppendWindowUpdate appends a WindowUpdate frame that grants the peer
// increment (1 to MaxWindow) more bytes of credit on stream id, or on the
// connection when id is 0.
func AppendWindowUpdate(dst []byte, id, increment uint32) []byte {
	var b [binary.MaxVarintLen32]byte
	return AppendFrame(dst, &Header{Type: TypeWindowUpdate, ID: id}, nil, binary.AppendUvarint(b[:0], uint64(increment)))
}

func appendStringFrame(dst []byte, h *Header, md []string, body string) []byte {
	l := plan(h, md, 0)
	dst = appendHeader(dst, h, md, l, len(body))
	return append(dst, body...)
}
