package wire

import (
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
			r := NewReader(&loopReader{data: stream}, ReaderOptions{})
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
