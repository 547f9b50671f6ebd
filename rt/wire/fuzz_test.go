package wire

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FuzzReader decodes arbitrary streams: no panics, and every frame that
// decodes re-encodes (plainly and compressed) to a frame that decodes equal.
func FuzzReader(f *testing.F) {
	var comp Compressor
	var stream []byte
	for _, c := range roundTripCases() {
		b := c.encode(nil, &comp)
		f.Add(b)
		stream = append(stream, b...)
	}
	f.Add(stream)
	f.Add(rawFrame(TypeRequest, FlagDeadline|FlagMetadata, 1, 0x80, 0x01, 2, 0, 0))
	f.Add(append(AppendPreface(nil, Preface{}), stream[:40]...))

	opts := ReaderOptions{MaxFrameSize: 1 << 16, MaxMetadataSize: 1 << 10, BufferSize: 64, BatchSize: 256, Features: allFeatures}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), opts)
		for {
			fr, err := r.Next()
			if err != nil {
				return
			}
			if r.Buffered() < 0 {
				t.Fatalf("Buffered() = %d", r.Buffered())
			}
			md, err := ParseMetadata(fr.Metadata, nil)
			if err != nil {
				continue
			}
			want := decoded{Header: fr.Header, MD: md, Body: bytes.Clone(fr.Body)}
			want.Flags &^= FlagCompressed
			h := fr.Header
			for _, enc := range [][]byte{
				AppendFrame(nil, &h, md, fr.Body),
				comp.AppendFrame(nil, &h, md, fr.Body, 1),
			} {
				got, err := readAll(t, bytes.NewReader(enc), ReaderOptions{MaxFrameSize: 2 << 20, Features: allFeatures})
				if err != nil {
					t.Fatalf("re-encoded frame does not decode: %v", err)
				}
				if len(got) != 1 {
					t.Fatalf("re-encoded frame decodes as %d frames", len(got))
				}
				got[0].Flags &^= FlagCompressed
				if diff := cmp.Diff(want, got[0], bytesEqual); diff != "" {
					t.Fatalf("re-encoded frame differs (-want +got):\n%s", diff)
				}
			}
		}
	})
}

// FuzzEncode encodes arbitrary headers, metadata and bodies and decodes them.
func FuzzEncode(f *testing.F) {
	f.Add(uint8(TypeRequest), uint8(0), uint32(1), uint32(7), int64(time.Second), "k", "v", []byte("body"), false)
	f.Add(uint8(TypeResponse), uint8(14), uint32(1), uint32(0), int64(0), "", "", []byte("closing"), false)
	f.Add(uint8(TypeRequest), uint8(0), uint32(9), uint32(7), int64(-1), "k", "", compressible(3000), true)
	f.Add(uint8(TypeGoAway), uint8(0), uint32(9), uint32(0), int64(1<<63-1), "a", "b", incompressible(2000), true)
	var comp Compressor
	f.Fuzz(func(t *testing.T, typ, status uint8, id, method uint32, timeout int64, k, v string, body []byte, compress bool) {
		h := Header{Type: Type(typ%uint8(lastUnaryType)) + 1, Status: status, ID: id, Method: method, Timeout: time.Duration(timeout)}
		var md []string
		if k != "" || v != "" {
			md = []string{k, v}
		}
		var b []byte
		if compress {
			b = comp.AppendFrame(nil, &h, md, body, 1)
		} else {
			b = AppendFrame(nil, &h, md, body)
			if len(b) != FrameSize(&h, md, len(body)) {
				t.Fatalf("frame is %d bytes, FrameSize says %d", len(b), FrameSize(&h, md, len(body)))
			}
		}
		got, err := readAll(t, bytes.NewReader(b), ReaderOptions{MaxFrameSize: 1 << 30, MaxMetadataSize: 1 << 30, Features: FeatureLZ4})
		if err != nil || len(got) != 1 {
			t.Fatalf("decoded %d frames, error %v", len(got), err)
		}
		g := got[0]
		wantTimeout := h.Timeout
		if h.Timeout != 0 {
			wantTimeout = microsTimeout(timeoutMicros(h.Timeout))
			if wantTimeout < h.Timeout || wantTimeout-h.Timeout >= time.Microsecond && h.Timeout > 0 && wantTimeout != 1<<63-1 {
				t.Fatalf("timeout %v sent as %v", h.Timeout, wantTimeout)
			}
		}
		if g.Type != h.Type || g.Status != h.Status || g.ID != h.ID || g.Method != h.Method || g.Timeout != wantTimeout {
			t.Fatalf("header %+v decoded as %+v", h, g.Header)
		}
		if !slices.Equal(g.MD, md) || !bytes.Equal(g.Body, body) {
			t.Fatalf("metadata/body changed: %q/%q -> %q/%q", md, body, g.MD, g.Body)
		}
	})
}

// FuzzParseMetadata parses arbitrary blocks: no panics, an even number of
// strings, and what parses re-encodes to a block that parses equal.
func FuzzParseMetadata(f *testing.F) {
	for _, kv := range [][]string{
		nil,
		{"k", "v"},
		{"yrpc-app", "web", "trace", "0af7651916cd43dd8448eb211c80319c"},
		{"", "", "k", string(make([]byte, 200))},
		{"odd"},
	} {
		f.Add(AppendMetadata(nil, kv))
	}
	f.Add([]byte{0x80})
	f.Add([]byte{0x05, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		kv, err := ParseMetadata(b, nil)
		if err != nil {
			if len(kv) != 0 {
				t.Fatalf("error %v with %d strings", err, len(kv))
			}
			return
		}
		if len(kv)%2 != 0 {
			t.Fatalf("odd number of strings: %q", kv)
		}
		again, err := ParseMetadata(AppendMetadata(nil, kv), nil)
		if err != nil || !slices.Equal(kv, again) {
			t.Fatalf("re-encoded %q parses as %q, %v", kv, again, err)
		}
	})
}
