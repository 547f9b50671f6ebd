package wire

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Format constants.
const (
	// Version is the protocol version this package speaks, sent in the
	// preface and in every frame header.
	Version = 1
	// Magic is the first byte of every frame: 'y'.
	Magic = 0x79
	// HeaderLen is the size of the fixed frame header in bytes.
	HeaderLen = 17

	// DefaultMaxFrameSize is the default limit on a frame's size (header
	// included) and on a decompressed body: 4 MiB.
	DefaultMaxFrameSize = 4 << 20
	// DefaultMaxMetadataSize is the default limit on a frame's metadata
	// block: 16 KiB.
	DefaultMaxMetadataSize = 16 << 10
	// DefaultBufferSize is the default size of the read buffer a Reader
	// starts with and holds while idle: 4 KiB.
	DefaultBufferSize = 4 << 10
	// DefaultBatchSize is the default size up to which a Reader's read
	// buffer grows while reads fill it, so that one read brings many
	// frames on a loaded connection: 64 KiB.
	DefaultBatchSize = 64 << 10
	// DefaultCompressThreshold is the body size from which
	// Compressor.AppendFrame tries to compress when given threshold 0.
	DefaultCompressThreshold = 1024
)

// Type is a frame's type.
type Type uint8

// Frame types. Zero is not a valid type, so a zeroed header is refused.
// Types 1-7 (unary calls and control) are always valid; TypeSettings is
// sent only in the handshake; the stream types only when both prefaces
// announced FeatureStreams.
const (
	// TypeRequest carries a call: ID is the request id, Method the method
	// ID, Body the encoded request.
	TypeRequest Type = 1 + iota
	// TypeResponse answers the request with the same ID. Status 0 means
	// success and Body is the encoded response; otherwise Status is the
	// error's code and Body its message (UTF-8).
	TypeResponse
	// TypeOneway is a request that gets no response.
	TypeOneway
	// TypePing asks the peer for a TypePong with the same (opaque) ID.
	TypePing
	// TypePong answers a ping.
	TypePong
	// TypeCancel tells the server to abandon the request with this ID.
	TypeCancel
	// TypeGoAway says the sender will serve no request with an ID above ID;
	// Status may carry a code and Body a reason (UTF-8).
	TypeGoAway
	// TypeSettings carries a side's Settings, once, right after the
	// prefaces (see ClientHandshake); the Reader never returns one.
	TypeSettings
	// TypeStreamOpen opens stream ID (a request id of the client) for
	// method Method, with an optional deadline and metadata; no body.
	TypeStreamOpen
	// TypeStreamMessage carries one message of stream ID in Body (lz4
	// compressed when negotiated).
	TypeStreamMessage
	// TypeStreamHalfClose says the client will send no more messages on
	// stream ID; no body.
	TypeStreamHalfClose
	// TypeStreamClose ends stream ID from the server: Status is the code,
	// Body the message (UTF-8), the metadata the trailer.
	TypeStreamClose
	// TypeStreamReset aborts stream ID, from either side: Status is the
	// code, Body an optional reason (UTF-8).
	TypeStreamReset
	// TypeWindowUpdate grants the peer Frame.Increment more bytes of
	// credit on stream ID, or on the connection when ID is 0.
	TypeWindowUpdate

	lastUnaryType = TypeGoAway
	maxType       = TypeWindowUpdate
)

var typeNames = [...]string{"", "Request", "Response", "Oneway", "Ping", "Pong", "Cancel", "GoAway",
	"Settings", "StreamOpen", "StreamMessage", "StreamHalfClose", "StreamClose", "StreamReset", "WindowUpdate"}

// String returns the type's name, e.g. "Request", or "Type(15)".
func (t Type) String() string {
	if t != 0 && t <= maxType {
		return typeNames[t]
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// IsStream reports whether t is one of the stream frame types
// (TypeStreamOpen to TypeWindowUpdate), which need FeatureStreams.
func (t Type) IsStream() bool { return t >= TypeStreamOpen && t <= maxType }

// Flags are a frame's flag bits. The encoders derive them (see Header); the
// Reader reports the flags as they were on the wire.
type Flags uint8

// Frame flags. The other bits are reserved and must be zero.
const (
	// FlagCompressed: the body is uvarint(original length) + an lz4 block.
	FlagCompressed Flags = 1 << iota
	// FlagDeadline: the optional section holds a timeout.
	FlagDeadline
	// FlagMetadata: the optional section holds a metadata block.
	FlagMetadata

	knownFlags = FlagCompressed | FlagDeadline | FlagMetadata
)

// String returns the set flags joined by "|", e.g. "deadline|metadata", or
// "0" when none is set.
func (f Flags) String() string {
	if f == 0 {
		return "0"
	}
	var parts []string
	for i, name := range [...]string{"compressed", "deadline", "metadata"} {
		if f&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	if rest := f &^ knownFlags; rest != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(uint64(rest), 16))
	}
	return strings.Join(parts, "|")
}

// Header is a frame's header as the caller sees it. The zero value is not a
// valid frame (Type 0); fill at least Type.
//
// The encoders ignore Flags: they set FlagDeadline when Timeout is not zero,
// FlagMetadata when there is metadata and FlagCompressed when Compressor
// compressed the body. On frames from a Reader, Flags are the wire flags.
type Header struct {
	Type   Type
	Flags  Flags
	Status uint8  // code (rt.Code) of a Response, GoAway, StreamClose or StreamReset; 0 otherwise
	ID     uint32 // request or stream id; last served id for GoAway; opaque for Ping/Pong
	Method uint32 // method ID of requests, oneways and stream opens; 0 otherwise
	// Timeout is the call's remaining budget; 0 means none. It is sent in
	// microseconds, rounded up; a negative (already expired) timeout is sent
	// as 1µs so that the deadline is never lost.
	Timeout time.Duration
}

// layout is what the encoders work out before writing a header.
type layout struct {
	flags  Flags
	micros uint64 // timeout; 0 = none
	mdLen  int    // metadata block size; 0 = none
	opt    int    // optional section size
}

func plan(h *Header, md []string, flags Flags) layout {
	l := layout{flags: flags}
	if h.Timeout != 0 {
		l.micros = timeoutMicros(h.Timeout)
		l.flags |= FlagDeadline
		l.opt += uvarintLen(l.micros)
	}
	if len(md) > 0 {
		l.mdLen = MetadataSize(md)
		l.flags |= FlagMetadata
		l.opt += uvarintLen(uint64(l.mdLen)) + l.mdLen
	}
	return l
}

// FrameSize returns the size of the frame AppendHeader starts and the caller
// completes with bodyLen body bytes, header included. Senders compare it with
// the peer's Preface.MaxFrameSize before encoding.
func FrameSize(h *Header, md []string, bodyLen int) int {
	return HeaderLen + plan(h, md, 0).opt + max(bodyLen, 0)
}

// AppendHeader appends the header and optional section (deadline,
// metadata) of a frame whose body is bodyLen bytes long; the caller then
// appends exactly bodyLen bytes of body, typically by marshaling straight
// into the returned slice. md holds flattened key/value pairs (k1, v1, k2,
// v2, ...; an odd trailing key gets an empty value); nil means none.
// AppendHeader does not allocate when dst has room.
func AppendHeader(dst []byte, h *Header, md []string, bodyLen int) []byte {
	return appendHeader(dst, h, md, plan(h, md, 0), max(bodyLen, 0))
}

// AppendFrame appends a whole uncompressed frame: AppendHeader and body.
func AppendFrame(dst []byte, h *Header, md []string, body []byte) []byte {
	l := plan(h, md, 0)
	dst = slices.Grow(dst, HeaderLen+l.opt+len(body))
	dst = appendHeader(dst, h, md, l, len(body))
	return append(dst, body...)
}

func appendHeader(dst []byte, h *Header, md []string, l layout, bodyLen int) []byte {
	dst = slices.Grow(dst, HeaderLen+l.opt)
	n := len(dst)
	dst = dst[:n+HeaderLen]
	b := dst[n : n+HeaderLen]
	b[0] = Magic
	b[1] = Version
	b[2] = byte(h.Type)
	b[3] = byte(l.flags)
	b[4] = h.Status
	binary.LittleEndian.PutUint32(b[5:], h.ID)
	binary.LittleEndian.PutUint32(b[9:], h.Method)
	binary.LittleEndian.PutUint32(b[13:], uint32(l.opt+bodyLen))
	if l.micros != 0 {
		dst = binary.AppendUvarint(dst, l.micros)
	}
	if l.mdLen != 0 {
		dst = binary.AppendUvarint(dst, uint64(l.mdLen))
		dst = AppendMetadata(dst, md)
	}
	return dst
}

// timeoutMicros converts a timeout to whole microseconds, rounding up so
// that a small budget never becomes "no deadline"; d <= 0 gives 1.
func timeoutMicros(d time.Duration) uint64 {
	if d <= 0 {
		return 1
	}
	us := uint64(d / time.Microsecond)
	if d%time.Microsecond != 0 {
		us++
	}
	return us
}

// microsTimeout converts microseconds from the wire to a Duration,
// saturating at the largest Duration.
func microsTimeout(us uint64) time.Duration {
	if us > math.MaxInt64/uint64(time.Microsecond) {
		return math.MaxInt64
	}
	return time.Duration(us) * time.Microsecond
}

// uvarintLen returns the size of x's uvarint encoding.
func uvarintLen(x uint64) int {
	return (bits.Len64(x|1) + 6) / 7
}
