package codec

import (
	"math"
	"time"
)

// Well-known types: a time.Time travels as google.protobuf.Timestamp and a
// time.Duration as google.protobuf.Duration, both {int64 seconds = 1;
// int32 nanos = 2;}. The Append functions write the length prefix and the
// message; the Size functions return the message size without the prefix.

// SizeTime returns the size of t as a Timestamp message body.
func SizeTime(t time.Time) int {
	return sizeSecNanos(t.Unix(), int32(t.Nanosecond()))
}

// AppendTime appends t as a length-prefixed Timestamp message.
func AppendTime(b []byte, t time.Time) []byte {
	return appendSecNanos(b, t.Unix(), int32(t.Nanosecond()))
}

// ConsumeTime decodes a length-prefixed Timestamp message at the start of b
// into a UTC time. It returns the bytes read or a negative error code.
func ConsumeTime(b []byte) (time.Time, int) {
	sec, nanos, n := consumeSecNanos(b)
	if n < 0 {
		return time.Time{}, n
	}
	return time.Unix(sec, int64(nanos)).UTC(), n
}

// SizeDuration returns the size of d as a Duration message body.
func SizeDuration(d time.Duration) int {
	return sizeSecNanos(int64(d/time.Second), int32(d%time.Second))
}

// AppendDuration appends d as a length-prefixed Duration message.
func AppendDuration(b []byte, d time.Duration) []byte {
	return appendSecNanos(b, int64(d/time.Second), int32(d%time.Second))
}

// ConsumeDuration decodes a length-prefixed Duration message at the start
// of b. A duration beyond time.Duration's ±292 years is an error (ErrRange).
func ConsumeDuration(b []byte) (time.Duration, int) {
	sec, nanos, n := consumeSecNanos(b)
	if n < 0 {
		return 0, n
	}
	const maxSec = math.MaxInt64 / int64(time.Second)
	if sec > maxSec || sec < -maxSec {
		return 0, codeRange
	}
	d := time.Duration(sec) * time.Second
	sum := d + time.Duration(nanos)
	if (nanos > 0 && sum < d) || (nanos < 0 && sum > d) {
		return 0, codeRange
	}
	return sum, n
}

func sizeSecNanos(sec int64, nanos int32) int {
	n := 0
	if sec != 0 {
		n += 1 + SizeVarint(uint64(sec))
	}
	if nanos != 0 {
		n += 1 + SizeVarint(uint64(nanos))
	}
	return n
}

func appendSecNanos(b []byte, sec int64, nanos int32) []byte {
	b = append(b, byte(sizeSecNanos(sec, nanos))) // at most 22 bytes
	if sec != 0 {
		b = AppendVarint(append(b, 1<<3), uint64(sec))
	}
	if nanos != 0 {
		b = AppendVarint(append(b, 2<<3), uint64(nanos))
	}
	return b
}

func consumeSecNanos(b []byte) (sec int64, nanos int32, n int) {
	body, n := ConsumeBytes(b)
	if n < 0 {
		return 0, 0, n
	}
	for i := 0; i < len(body); {
		tag, m := ConsumeVarint(body[i:])
		if m < 0 {
			return 0, 0, m
		}
		i += m
		switch tag {
		case 1<<3 | uint64(VarintType):
			v, m := ConsumeVarint(body[i:])
			if m < 0 {
				return 0, 0, m
			}
			i += m
			sec = int64(v)
		case 2<<3 | uint64(VarintType):
			v, m := ConsumeVarint(body[i:])
			if m < 0 {
				return 0, 0, m
			}
			i += m
			nanos = int32(v)
		default:
			m = Skip(body[i:], tag)
			if m < 0 {
				return 0, 0, m
			}
			i += m
		}
	}
	return sec, nanos, n
}
