package wire

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

var benchMD = []string{"yrpc-app", "web", "trace", "0af7651916cd43dd8448eb211c80319c"}

func BenchmarkAppendHeader(b *testing.B) {
	for _, c := range []struct {
		name string
		h    Header
		md   []string
	}{
		{"plain", Header{Type: TypeResponse, ID: 1}, nil},
		{"deadline+metadata", Header{Type: TypeRequest, ID: 1, Method: 0x98f998eb, Timeout: 250 * time.Millisecond}, benchMD},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendHeader(buf[:0], &c.h, c.md, 600)
			}
		})
	}
}

// BenchmarkReaderNext reads a stream of requests with 600-byte bodies,
// deadlines and metadata from memory; SetBytes counts frame bytes.
func BenchmarkReaderNext(b *testing.B) {
	h := Header{Type: TypeRequest, ID: 1, Method: 0x98f998eb, Timeout: 250 * time.Millisecond}
	var stream []byte
	for range 1000 {
		stream = AppendFrame(stream, &h, benchMD, incompressible(600))
		h.ID++
	}
	r := NewReader(&loopReader{data: stream}, ReaderOptions{})
	b.SetBytes(int64(len(stream) / 1000))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// records returns about n bytes of JSON-like records: compressible, but far
// less than a repeated string.
func records(n int) []byte {
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, `{"id":%d,"name":"user-%d","email":"u%d@example.com","score":%d},`, i*7919, i, i*31, i*i%1000)
	}
	return b[:n]
}

func bodies4K() []struct {
	name string
	body []byte
} {
	return []struct {
		name string
		body []byte
	}{
		{"repetitive", compressible(4096)},
		{"records", records(4096)},
		{"random", incompressible(4096)},
	}
}

// BenchmarkCompress4K writes a frame with a 4 KiB body through a
// Compressor; frame-bytes is the resulting frame size (the random body is
// sent plainly, so it measures the cost of finding out).
func BenchmarkCompress4K(b *testing.B) {
	for _, c := range bodies4K() {
		b.Run(c.name, func(b *testing.B) {
			h := Header{Type: TypeResponse, ID: 1}
			var comp Compressor
			buf := make([]byte, 0, 8192)
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				buf = comp.AppendFrame(buf[:0], &h, nil, c.body, 0)
			}
			b.ReportMetric(float64(len(buf)), "frame-bytes")
		})
	}
}

// BenchmarkDecompress4K reads frames with a compressed 4 KiB body.
func BenchmarkDecompress4K(b *testing.B) {
	for _, c := range bodies4K()[:2] {
		b.Run(c.name, func(b *testing.B) {
			h := Header{Type: TypeResponse, ID: 1}
			var comp Compressor
			var stream []byte
			for range 100 {
				stream = comp.AppendFrame(stream, &h, nil, c.body, 0)
			}
			r := NewReader(&loopReader{data: stream}, ReaderOptions{Features: FeatureLZ4})
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := r.Next()
				if err != nil || f.Flags&FlagCompressed == 0 {
					b.Fatal(err, f.Flags)
				}
			}
		})
	}
}

func BenchmarkParseMetadata(b *testing.B) {
	block := AppendMetadata(nil, benchMD)
	dst := make([]string, 0, 8)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = ParseMetadata(block, dst[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// chunkReader serves a stream forever in reads of at most chunk bytes that
// end where a chunk ends, as a socket hands out what arrived: with chunks
// that end on frame boundaries the Reader drains after each one.
type chunkReader struct {
	data  []byte
	chunk int
	off   int // in data
	left  int // bytes left in the current chunk
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.left == 0 {
		c.left = c.chunk
	}
	n := 0
	for n < len(p) && c.left > 0 {
		k := copy(p[n:min(len(p), n+c.left)], c.data[c.off:])
		n += k
		c.left -= k
		c.off = (c.off + k) % len(c.data)
	}
	return n, nil
}

// BenchmarkReaderSocket reads frames from a source that hands out batches
// of whole frames, as a loaded connection does: "batch=N" sends N requests
// of 600-byte bodies per read (the Reader drains after each batch),
// "large" sends 256 KiB responses in 64 KiB reads (",pool" with a
// BufferPool). SetBytes counts frame bytes.
func BenchmarkReaderSocket(b *testing.B) {
	small := Header{Type: TypeRequest, ID: 1, Method: 0x98f998eb, Timeout: 250 * time.Millisecond}
	one := AppendFrame(nil, &small, benchMD, incompressible(600))
	large := AppendFrame(nil, &Header{Type: TypeResponse, ID: 1}, nil, incompressible(256<<10))
	for _, c := range []struct {
		name  string
		frame []byte
		batch int // frames per chunk
		chunk int // bytes per read; 0: a batch
		pool  *BufferPool
	}{
		{"batch=1", one, 1, 0, nil},
		{"batch=8", one, 8, 0, nil},
		{"batch=64", one, 64, 0, nil},
		{"large", large, 1, 64 << 10, nil},
		{"large,pool", large, 1, 64 << 10, new(BufferPool)},
	} {
		b.Run(c.name, func(b *testing.B) {
			data := bytes.Repeat(c.frame, c.batch)
			chunk := c.chunk
			if chunk == 0 {
				chunk = len(data)
			}
			r := NewReader(&chunkReader{data: data, chunk: chunk}, ReaderOptions{Pool: c.pool})
			b.SetBytes(int64(len(c.frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
