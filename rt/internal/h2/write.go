package h2

import (
	"encoding/binary"

	"github.com/yrpc/yrpc/internal/hpack"
)

// AppendFrameHeader appends the header of a frame whose payload is n
// bytes long.
func AppendFrameHeader(b []byte, t FrameType, flags uint8, stream uint32, n int) []byte {
	return append(b, byte(n>>16), byte(n>>8), byte(n), byte(t), flags,
		byte(stream>>24)&0x7f, byte(stream>>16), byte(stream>>8), byte(stream))
}

// putFrameHeader writes a frame header at b[:FrameHeaderLen].
func putFrameHeader(b []byte, t FrameType, flags uint8, stream uint32, n int) {
	AppendFrameHeader(b[:0], t, flags, stream, n)
}

// AppendData appends a DATA frame.
func AppendData(b []byte, stream uint32, endStream bool, data []byte) []byte {
	var flags uint8
	if endStream {
		flags = FlagEndStream
	}
	return append(AppendFrameHeader(b, FrameData, flags, stream, len(data)), data...)
}

// AppendRSTStream appends a RST_STREAM frame.
func AppendRSTStream(b []byte, stream uint32, code ErrCode) []byte {
	return binary.BigEndian.AppendUint32(AppendFrameHeader(b, FrameRSTStream, 0, stream, 4), uint32(code))
}

// AppendSettings appends a SETTINGS frame.
func AppendSettings(b []byte, settings ...Setting) []byte {
	b = AppendFrameHeader(b, FrameSettings, 0, 0, 6*len(settings))
	for _, s := range settings {
		b = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(b, uint16(s.ID)), s.Val)
	}
	return b
}

// AppendSettingsAck appends the acknowledgement of a SETTINGS frame.
func AppendSettingsAck(b []byte) []byte { return AppendFrameHeader(b, FrameSettings, FlagAck, 0, 0) }

// AppendPing appends a PING frame (its acknowledgement with ack).
func AppendPing(b []byte, ack bool, data [8]byte) []byte {
	var flags uint8
	if ack {
		flags = FlagAck
	}
	return append(AppendFrameHeader(b, FramePing, flags, 0, 8), data[:]...)
}

// AppendGoAway appends a GOAWAY frame.
func AppendGoAway(b []byte, lastStream uint32, code ErrCode, debug []byte) []byte {
	b = AppendFrameHeader(b, FrameGoAway, 0, 0, 8+len(debug))
	b = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(b, lastStream&(1<<31-1)), uint32(code))
	return append(b, debug...)
}

// AppendWindowUpdate appends a WINDOW_UPDATE frame (stream 0: the
// connection's).
func AppendWindowUpdate(b []byte, stream, increment uint32) []byte {
	return binary.BigEndian.AppendUint32(AppendFrameHeader(b, FrameWindowUpdate, 0, stream, 4), increment&(1<<31-1))
}

// BlockEncoder encodes header blocks with one connection's HPACK encoder
// and frames them. The zero value is not usable; use NewBlockEncoder. A
// BlockEncoder is not safe for concurrent use: blocks must reach the
// connection in the order they were encoded.
type BlockEncoder struct {
	enc     *hpack.Encoder
	b       []byte // the buffer given to Start, with the block so far
	start   int    // where the block's frame header goes
	scratch []byte // for splitting a long block
}

// NewBlockEncoder returns a BlockEncoder with a dynamic table of 4096
// bytes, HPACK's default.
func NewBlockEncoder() *BlockEncoder {
	return &BlockEncoder{enc: hpack.NewEncoder()}
}

// SetMaxDynamicTableSizeLimit applies the peer's SETTINGS_HEADER_TABLE_SIZE.
func (e *BlockEncoder) SetMaxDynamicTableSizeLimit(v uint32) {
	e.enc.SetMaxTableSize(v)
}

// Start begins a header block at the end of b; add its fields with Field,
// then End it.
func (e *BlockEncoder) Start(b []byte) {
	e.start = len(b)
	e.b = append(b, make([]byte, FrameHeaderLen)...)
}

// Field adds a field. Fields that vary from block to block should be
// sensitive: they are then never indexed, so that they do not push the
// constant ones out of the dynamic table.
func (e *BlockEncoder) Field(name, value string, sensitive bool) {
	e.b = e.enc.AppendField(e.b, name, value, sensitive)
}

// End frames the block as a HEADERS frame on stream (with END_STREAM if
// endStream) and CONTINUATION frames of at most maxFrame bytes each, and
// returns the buffer given to Start with the frames appended.
func (e *BlockEncoder) End(stream uint32, endStream bool, maxFrame int) []byte {
	b := e.b
	e.b = nil
	n := len(b) - e.start - FrameHeaderLen
	flags := uint8(0)
	if endStream {
		flags = FlagEndStream
	}
	if n <= maxFrame {
		putFrameHeader(b[e.start:], FrameHeaders, flags|FlagEndHeaders, stream, n)
		return b
	}
	e.scratch = append(e.scratch[:0], b[e.start+FrameHeaderLen:]...)
	b = b[:e.start]
	block := e.scratch
	for t := FrameHeaders; len(block) > 0; t = FrameContinuation {
		m := min(len(block), maxFrame)
		f := flags
		if m == len(block) {
			f |= FlagEndHeaders
		}
		b = append(AppendFrameHeader(b, t, f, stream, m), block[:m]...)
		block = block[m:]
		flags = 0
	}
	if cap(e.scratch) > 64<<10 {
		e.scratch = nil // a rare long block: do not keep its buffer
	}
	return b
}
