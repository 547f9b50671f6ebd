package wire

import (
	"encoding/binary"
	"slices"

	"github.com/pierrec/lz4/v4"
)

// Compressor writes frames whose bodies are lz4-compressed (block format)
// when that pays. Use it only when the peer announced FeatureLZ4. The zero
// value is ready to use; it allocates its lz4 hash table (about 136 KiB) on
// the first compression and reuses it. A Compressor is not safe for
// concurrent use. Given its size, a server with many connections should
// share a few through a sync.Pool (or one per writing goroutine) rather than
// keep one per connection.
type Compressor struct {
	lz *lz4.Compressor
}

// AppendFrame appends a frame like the package-level AppendFrame, except
// that a body of at least threshold bytes (0 means
// DefaultCompressThreshold; negative disables compression) is compressed
// straight into dst when that saves at least 1/16 of its size: the frame
// then has FlagCompressed and its body is uvarint(len(body)) followed by the
// lz4 block. Otherwise the frame is written plainly.
func (c *Compressor) AppendFrame(dst []byte, h *Header, md []string, body []byte, threshold int) []byte {
	if threshold == 0 {
		threshold = DefaultCompressThreshold
	}
	if threshold < 0 || len(body) < threshold {
		return AppendFrame(dst, h, md, body)
	}
	prefix := uvarintLen(uint64(len(body)))
	limit := len(body) - len(body)/16 - prefix // largest useful lz4 block
	if limit <= 0 {
		return AppendFrame(dst, h, md, body)
	}
	l := plan(h, md, FlagCompressed)
	start := len(dst)
	at := start + HeaderLen + l.opt + prefix // where the lz4 block goes
	dst = slices.Grow(dst, at-start+limit)
	if c.lz == nil {
		c.lz = new(lz4.Compressor)
	}
	// A block that does not fit in limit bytes fails (n == 0 or an error):
	// then it does not pay, and the compressor gave up early.
	n, err := c.lz.CompressBlock(body, dst[at:at+limit])
	if err != nil || n == 0 {
		return AppendFrame(dst, h, md, body)
	}
	// dst has room for all of it, so these appends fill the gap before the
	// block in place and never move it.
	dst = appendHeader(dst, h, md, l, prefix+n)
	dst = binary.AppendUvarint(dst, uint64(len(body)))
	return dst[:at+n]
}
