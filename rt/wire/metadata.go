package wire

import (
	"encoding/binary"
	"fmt"
)

// MaxMetadataPairs is the most key/value pairs ParseMetadata accepts in one
// block.
const MaxMetadataPairs = 1024

// MetadataSize returns the size of kv's metadata block as AppendMetadata
// writes it.
func MetadataSize(kv []string) int {
	n := 0
	for _, s := range kv {
		n += uvarintLen(uint64(len(s))) + len(s)
	}
	if len(kv)%2 == 1 {
		n++ // the empty value of an odd trailing key
	}
	return n
}

// AppendMetadata appends kv, flattened key/value pairs (k1, v1, k2, v2, ...),
// as a metadata block: each key and then each value as uvarint(length) and
// bytes. An odd trailing key gets an empty value, as rt.Pairs does.
func AppendMetadata(dst []byte, kv []string) []byte {
	for _, s := range kv {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	if len(kv)%2 == 1 {
		dst = append(dst, 0)
	}
	return dst
}

// ParseMetadata decodes the metadata block b and appends its flattened
// key/value pairs to dst. It makes one allocation for all the strings
// (they share one copy of b), so b may be reused afterwards. A block with
// a key and no value, a length running past the end, a truncated length or
// more than MaxMetadataPairs pairs is an error wrapping ErrMalformed; dst
// is then returned unchanged.
func ParseMetadata(b []byte, dst []string) ([]string, error) {
	if len(b) == 0 {
		return dst, nil
	}
	start := len(dst)
	s := string(b)
	for i := 0; i < len(s); {
		if len(dst)-start == 2*MaxMetadataPairs {
			return dst[:start], malformed("metadata has more than %d pairs", MaxMetadataPairs)
		}
		n, k := binary.Uvarint(b[i:])
		if k <= 0 {
			return dst[:start], malformed("metadata: bad length at offset %d of %d", i, len(b))
		}
		i += k
		if n > uint64(len(s)-i) {
			return dst[:start], malformed("metadata: string of %d bytes at offset %d runs past the end of the %d-byte block", n, i, len(b))
		}
		dst = append(dst, s[i:i+int(n)])
		i += int(n)
	}
	if (len(dst)-start)%2 == 1 {
		return dst[:start], malformed("metadata: key %q has no value", dst[len(dst)-1])
	}
	return dst, nil
}

func malformed(format string, args ...any) error {
	return &FrameError{Reason: fmt.Sprintf(format, args...), Err: ErrMalformed}
}
