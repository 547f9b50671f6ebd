package wire

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FuzzReader decodes arbitrary streams: no panics, buffers within what
// was received, and every frame that decodes re-encodes (plainly and
// compressed) to a frame that decodes equal.
func FuzzReader(f *testing.F) {
	var comp Compressor
	var stream []byte
	for _, c := range roundTripCases() {
		b := c.encode(nil, &comp)
		f.Add(b)
		stream = append(stream, b...)
	}
	f.Add(stream)
	stream = nil
	for _, c := range streamCases() {
		b := c.enc(nil)
		f.Add(b)
		stream = append(stream, b...)
	}
	f.Add(stream)
	f.Add(AppendSettingsFrame(nil, Settings{MaxMetadataSize: 100}))
	f.Add(rawFrame(TypeRequest, FlagDeadline|FlagMetadata, 1, 0x80, 0x01, 2, 0, 0))
	f.Add(append(AppendPreface(nil, Preface{}), stream[:40]...))

	opts := ReaderOptions{MaxFrameSize: 1 << 16, MaxMetadataSize: 1 << 10, BufferSize: 64, BatchSize: 256, Features: allFeatures, Pool: new(BufferPool)}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), opts)
		for {
			fr, err := r.Next()
			// Buffers grow with the bytes received, not with the sizes
			// claimed: at most twofold (rounded up to a pool class, the
			// least 4 KiB), and a decompressed body within lz4's ratio.
			if n := len(r.buf); n > max(opts.BufferSize, 1<<minClassShift, 4*len(data)) {
				t.Fatalf("a buffer of %d bytes for %d bytes received", n, len(data))
			}
			if n := len(r.scratch); n > max(opts.BatchSize, maxLZ4Ratio*len(data)) {
				t.Fatalf("a decompression buffer of %d bytes for %d bytes received", n, len(data))
			}
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
			encs := [][]byte{AppendFrame(nil, &h, md, fr.Body)}
			if !h.Type.IsStream() || h.Type == TypeStreamMessage {
				encs = append(encs, comp.AppendFrame(nil, &h, md, fr.Body, 1))
			}
			for _, enc := range encs {
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

// FuzzPreface reads arbitrary prefaces: no panics, and a preface that
// reads re-encodes to the same 13 bytes.
func FuzzPreface(f *testing.F) {
	f.Add(AppendPreface(nil, Preface{}))
	f.Add(AppendPreface(nil, Preface{Features: FeatureLZ4 | FeatureSettings | FeatureStreams, MaxFrameSize: 1 << 30}))
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Add([]byte("YRPC\x02"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadPreface(bytes.NewReader(b))
		if err != nil {
			return
		}
		if got := AppendPreface(nil, p); !bytes.Equal(got, b[:PrefaceLen]) {
			t.Fatalf("preface % x re-encodes as % x", b[:PrefaceLen], got)
		}
	})
}

// FuzzSettings parses arbitrary Settings payloads: no panics, and what
// parses re-encodes to a frame whose payload parses equal.
func FuzzSettings(f *testing.F) {
	for _, s := range []Settings{{}, {MaxMetadataSize: 16 << 10, MaxConcurrentCalls: 100}, {1 << 20, 1, 2, 3, MaxWindow}} {
		f.Add(AppendSettingsFrame(nil, s)[HeaderLen:])
	}
	f.Add([]byte{9, 9, 3, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSettings(b)
		if err != nil {
			return
		}
		again, err := ParseSettings(AppendSettingsFrame(nil, s)[HeaderLen:])
		if err != nil || again != s {
			t.Fatalf("%+v re-encoded parses as %+v, %v", s, again, err)
		}
	})
}

// FuzzHandshake runs both sides of the handshake against arbitrary peers:
// no panics, and a handshake that succeeds reads exactly the peer's
// preface and Settings frame.
func FuzzHandshake(f *testing.F) {
	pre := AppendPreface(nil, Preface{Features: FeatureSettings | FeatureLZ4})
	f.Add(pre)
	f.Add(AppendSettingsFrame(bytes.Clone(pre), Settings{MaxMetadataSize: 99}))
	f.Add(AppendPreface(nil, Preface{Features: FeatureLZ4}))
	f.Add(append(bytes.Clone(pre), rawFrame(TypeSettings, 0, 0, 1, 2, 3)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := append(bytes.Clone(b), Magic)
		for _, side := range []func(io.ReadWriter, Features, Settings) (Peer, error){ClientHandshake, ServerHandshake} {
			src := bytes.NewReader(in)
			p, err := side(struct {
				io.Reader
				io.Writer
			}{src, io.Discard}, FeatureLZ4|FeatureStreams, Settings{})
			if err != nil {
				continue
			}
			want := PrefaceLen // what the handshake must read: the preface and the Settings frame
			if p.Features.Has(FeatureSettings) {
				want += HeaderLen + int(binary.LittleEndian.Uint32(in[PrefaceLen+13:]))
			}
			if read := len(in) - src.Len(); read != want {
				t.Fatalf("handshake read %d bytes, want %d: %+v", read, want, p)
			}
			if p.Settings.FrameLimit() > int(p.Preface.MaxFrameSize) || p.Features&^(FeatureLZ4|FeatureStreams|FeatureSettings) != 0 {
				t.Fatalf("handshake learned %+v", p)
			}
		}
	})
}

// FuzzStreamEncode encodes stream frames from arbitrary fields and decodes
// them.
func FuzzStreamEncode(f *testing.F) {
	f.Add(uint8(0), uint32(1), uint32(7), int64(0), uint8(0), "k", "v", []byte("body"))
	f.Add(uint8(1), uint32(3), uint32(0), int64(0), uint8(0), "", "", compressible(3000))
	f.Add(uint8(3), uint32(3), uint32(0), int64(0), uint8(13), "trailer", "x", []byte("internal"))
	f.Add(uint8(5), uint32(0), uint32(70000), int64(0), uint8(0), "", "", []byte(nil))
	var comp Compressor
	f.Fuzz(func(t *testing.T, kind uint8, id, n uint32, timeout int64, code uint8, k, v string, body []byte) {
		var md []string
		if k != "" || v != "" {
			md = []string{k, v}
		}
		id = max(id, 1)
		want := decoded{Header: Header{ID: id, Status: code}, MD: md, Body: body}
		var b []byte
		var inc uint32
		switch kind % 6 {
		case 0:
			b = AppendStreamOpen(nil, id, n, timeout2(timeout), md)
			want = decoded{Header: Header{Type: TypeStreamOpen, ID: id, Method: n, Timeout: timeout2(timeout)}, MD: md}
		case 1:
			b = comp.AppendFrame(nil, &Header{Type: TypeStreamMessage, ID: id}, nil, body, 1)
			want = decoded{Header: Header{Type: TypeStreamMessage, ID: id}, Body: body}
		case 2:
			b = AppendStreamHalfClose(nil, id)
			want = decoded{Header: Header{Type: TypeStreamHalfClose, ID: id}}
		case 3:
			b = AppendStreamClose(nil, id, code, string(body), md)
			want.Type = TypeStreamClose
		case 4:
			b = AppendStreamReset(nil, id, code, string(body))
			want = decoded{Header: Header{Type: TypeStreamReset, ID: id, Status: code}, Body: body}
		case 5:
			inc = max(n%MaxWindow, 1)
			b = AppendWindowUpdate(nil, id-1, inc)
			want = decoded{Header: Header{Type: TypeWindowUpdate, ID: id - 1}, Body: binary.AppendUvarint(nil, uint64(inc))}
		}
		r := NewReader(bytes.NewReader(b), ReaderOptions{Features: allFeatures, MaxFrameSize: 1 << 30, MaxMetadataSize: 1 << 30})
		fr, err := r.Next()
		if err != nil {
			t.Fatalf("%x does not decode: %v", b, err)
		}
		md2, err := ParseMetadata(fr.Metadata, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := decoded{Header: fr.Header, MD: md2, Body: fr.Body}
		got.Flags, want.Flags = 0, 0
		if len(want.MD) == 0 {
			want.MD = nil
		}
		if want.Type == TypeStreamOpen && want.Timeout != 0 {
			want.Timeout = microsTimeout(timeoutMicros(want.Timeout))
		}
		if diff := cmp.Diff(want, got, bytesEqual); diff != "" || fr.Increment != inc {
			t.Fatalf("decoded (-want +got):\n%s\nincrement %d, want %d", diff, fr.Increment, inc)
		}
	})
}

// timeout2 makes a fuzzed timeout one the format keeps: whole
// microseconds within range, or none.
func timeout2(us int64) time.Duration {
	if us <= 0 {
		return 0
	}
	return time.Duration(us%(1<<40)) * time.Microsecond
}
