package codec

import (
	"math/bits"
	"unsafe"
)

// WireType is the low three bits of a field tag.
type WireType uint8

// Wire types of the protobuf binary format. Groups (3 and 4) are obsolete:
// decoders only skip them.
const (
	VarintType     WireType = 0
	Fixed64Type    WireType = 1
	BytesType      WireType = 2
	StartGroupType WireType = 3
	EndGroupType   WireType = 4
	Fixed32Type    WireType = 5
)

// MaxFieldNumber is the largest valid field number, 2^29-1.
const MaxFieldNumber = 1<<29 - 1

// MaxDepth is how deeply messages and groups may nest in decoded input, the
// limit of google.golang.org/protobuf's default RecursionLimit.
const MaxDepth = 10000

// Tag returns the tag of field num with wire type t, as written on the wire
// (before varint encoding).
func Tag(num int32, t WireType) uint64 { return uint64(num)<<3 | uint64(t) }

// SizeVarint returns the encoded size of v: 1 to 10 bytes.
func SizeVarint(v uint64) int {
	// 9/64 is a close enough approximation of 1/7 for 0..64 bits
	// (google.golang.org/protobuf uses the same formula).
	return int(9*uint32(bits.Len64(v))+64) / 64
}

// AppendVarint appends v in base-128 varint form.
func AppendVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<7:
		return append(b, byte(v))
	case v < 1<<14:
		return append(b, byte(v)|0x80, byte(v>>7))
	case v < 1<<21:
		return append(b, byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14))
	}
	return appendVarintLong(b, v)
}

// appendVarintLong is AppendVarint for values of 21 bits and more.
func appendVarintLong(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// AppendFixed32 appends v in 4 little-endian bytes.
func AppendFixed32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

// AppendFixed64 appends v in 8 little-endian bytes.
func AppendFixed64(b []byte, v uint64) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24),
		byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

// AppendString appends s with its varint length prefix.
func AppendString(b []byte, s string) []byte {
	return append(AppendVarint(b, uint64(len(s))), s...)
}

// AppendBytes appends v with its varint length prefix.
func AppendBytes(b []byte, v []byte) []byte {
	return append(AppendVarint(b, uint64(len(v))), v...)
}

// SizeBytes returns the size of a length-prefixed value of n bytes.
func SizeBytes(n int) int { return SizeVarint(uint64(n)) + n }

// EncodeZigZag32 maps a signed 32-bit integer to an unsigned one so that
// small magnitudes have small encodings (sint32).
func EncodeZigZag32(v int32) uint64 { return uint64(uint32(v<<1) ^ uint32(v>>31)) }

// EncodeZigZag64 is EncodeZigZag32 for sint64.
func EncodeZigZag64(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// DecodeZigZag32 reverses EncodeZigZag32; the bits above 32 are ignored, as
// protobuf does.
func DecodeZigZag32(v uint64) int32 { return int32(uint32(v)>>1) ^ -int32(v&1) }

// DecodeZigZag64 reverses EncodeZigZag64.
func DecodeZigZag64(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

// EncodeBool returns 1 for true and 0 for false.
func EncodeBool(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// String returns a string that shares b's memory. The caller guarantees that
// b is never modified afterwards: generated decoders alias strings into
// their private copy of the input.
func String(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
