package codec

// Negative results of the Consume functions and Skip. Err maps them to the
// exported sentinel errors.
const (
	codeTruncated   = -1
	codeOverflow    = -2
	codeWireType    = -3
	codeFieldNumber = -4
	codeGroup       = -5
	codeDepth       = -6
	codeRange       = -7
	codeLength      = -8
)

// ConsumeVarint decodes a varint at the start of b. It returns the value and
// the number of bytes read, or a negative error code (truncated input, or
// more than 10 bytes / 64 bits).
//
// The first four bytes are unrolled: they hold almost every tag and
// length and most numbers. (A loop would let the compiler inline the
// function, but costs more per byte; generated decoders read one- and
// two-byte tags inline instead.)
func ConsumeVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, codeTruncated
	}
	v := uint64(b[0])
	if v < 0x80 {
		return v, 1
	}
	v &= 0x7f
	if len(b) < 2 {
		return 0, codeTruncated
	}
	c := uint64(b[1])
	v |= (c & 0x7f) << 7
	if c < 0x80 {
		return v, 2
	}
	if len(b) < 3 {
		return 0, codeTruncated
	}
	c = uint64(b[2])
	v |= (c & 0x7f) << 14
	if c < 0x80 {
		return v, 3
	}
	if len(b) < 4 {
		return 0, codeTruncated
	}
	c = uint64(b[3])
	v |= (c & 0x7f) << 21
	if c < 0x80 {
		return v, 4
	}
	for i := 4; i < len(b) && i < 10; i++ {
		c := b[i]
		v |= uint64(c&0x7f) << (7 * uint(i))
		if c < 0x80 {
			if i == 9 && c > 1 {
				return 0, codeOverflow
			}
			return v, i + 1
		}
	}
	if len(b) >= 10 {
		return 0, codeOverflow
	}
	return 0, codeTruncated
}

// ConsumeFixed32 decodes 4 little-endian bytes at the start of b; n is 4 or
// a negative error code.
func ConsumeFixed32(b []byte) (v uint32, n int) {
	if len(b) < 4 {
		return 0, codeTruncated
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24, 4
}

// ConsumeFixed64 decodes 8 little-endian bytes at the start of b; n is 8 or
// a negative error code.
func ConsumeFixed64(b []byte) (v uint64, n int) {
	if len(b) < 8 {
		return 0, codeTruncated
	}
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56, 8
}

// ConsumeBytes decodes a length-prefixed value at the start of b and returns
// it as a sub-slice of b (capacity clipped to its length) and the number of
// bytes read, prefix included, or a negative error code.
func ConsumeBytes(b []byte) ([]byte, int) {
	l, n := ConsumeVarint(b)
	if n < 0 {
		return nil, n
	}
	if l > uint64(len(b)-n) {
		return nil, codeTruncated
	}
	end := n + int(l)
	return b[n:end:end], end
}

// CountVarints returns how many varints the packed data b holds (the bytes
// below 0x80 end one each), which bounds the capacity a decoder may
// allocate for them by len(b).
func CountVarints(b []byte) int {
	n := 0
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// Skip skips the value of an unknown field whose tag (as ConsumeTag
// returned it) has been read; it returns the bytes of b that the value
// occupies, or a negative error code. Groups are skipped whole, up to
// MaxDepth levels.
func Skip(b []byte, tag uint64) int {
	return skip(b, tag, 0)
}

func skip(b []byte, tag uint64, depth int) int {
	if tag>>3 == 0 || tag>>3 > MaxFieldNumber {
		return codeFieldNumber
	}
	switch WireType(tag & 7) {
	case VarintType:
		_, n := ConsumeVarint(b)
		return n
	case Fixed64Type:
		if len(b) < 8 {
			return codeTruncated
		}
		return 8
	case Fixed32Type:
		if len(b) < 4 {
			return codeTruncated
		}
		return 4
	case BytesType:
		_, n := ConsumeBytes(b)
		return n
	case StartGroupType:
		if depth >= MaxDepth {
			return codeDepth
		}
		for i := 0; ; {
			t, n := ConsumeVarint(b[i:])
			if n < 0 {
				return n
			}
			i += n
			if WireType(t&7) == EndGroupType {
				if t>>3 != tag>>3 {
					return codeGroup
				}
				return i
			}
			n = skip(b[i:], t, depth+1)
			if n < 0 {
				return n
			}
			i += n
		}
	case EndGroupType:
		return codeGroup
	}
	return codeWireType
}
