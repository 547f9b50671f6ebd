package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// streamCase is a stream frame, how it is encoded and what decodes.
type streamCase struct {
	name string
	enc  func(dst []byte) []byte
	want decoded
	inc  uint32 // WindowUpdate increment
	hex  string // golden bytes, spaces ignored; "" for none
}

func streamCases() []streamCase {
	var comp Compressor
	md := []string{"yrpc-app", "web"}
	big := compressible(4096)
	return []streamCase{
		{
			name: "open",
			enc:  func(b []byte) []byte { return AppendStreamOpen(b, 3, 0x98f998eb, 250*time.Millisecond, md) },
			want: decoded{Header: Header{Type: TypeStreamOpen, Flags: FlagDeadline | FlagMetadata, ID: 3, Method: 0x98f998eb, Timeout: 250 * time.Millisecond}, MD: md},
			hex:  "79 01 09 06 00 03000000 eb98f998 11000000 90a10f 0d 08797270632d617070 03776562",
		},
		{
			name: "open bare",
			enc:  func(b []byte) []byte { return AppendStreamOpen(b, 5, 7, 0, nil) },
			want: decoded{Header: Header{Type: TypeStreamOpen, ID: 5, Method: 7}},
		},
		{
			name: "message",
			enc: func(b []byte) []byte {
				return AppendFrame(b, &Header{Type: TypeStreamMessage, ID: 3}, nil, []byte{0x0a, 0x03, 'A', 'd', 'a'})
			},
			want: decoded{Header: Header{Type: TypeStreamMessage, ID: 3}, Body: []byte{0x0a, 0x03, 'A', 'd', 'a'}},
			hex:  "79 01 0a 00 00 03000000 00000000 05000000 0a03416461",
		},
		{
			name: "message empty",
			enc:  func(b []byte) []byte { return AppendFrame(b, &Header{Type: TypeStreamMessage, ID: 3}, nil, nil) },
			want: decoded{Header: Header{Type: TypeStreamMessage, ID: 3}},
		},
		{
			name: "message compressed",
			enc: func(b []byte) []byte {
				return comp.AppendFrame(b, &Header{Type: TypeStreamMessage, ID: 9}, nil, big, 0)
			},
			want: decoded{Header: Header{Type: TypeStreamMessage, Flags: FlagCompressed, ID: 9}, Body: big},
		},
		{
			name: "half-close",
			enc:  func(b []byte) []byte { return AppendStreamHalfClose(b, 3) },
			want: decoded{Header: Header{Type: TypeStreamHalfClose, ID: 3}},
			hex:  "79 01 0b 00 00 03000000 00000000 00000000",
		},
		{
			name: "close ok with trailer",
			enc:  func(b []byte) []byte { return AppendStreamClose(b, 3, 0, "", []string{"n", "2"}) },
			want: decoded{Header: Header{Type: TypeStreamClose, Flags: FlagMetadata, ID: 3}, MD: []string{"n", "2"}},
			hex:  "79 01 0c 04 00 03000000 00000000 05000000 04 016e 0132",
		},
		{
			name: "close error",
			enc:  func(b []byte) []byte { return AppendStreamClose(b, 3, 14, "closing", nil) },
			want: decoded{Header: Header{Type: TypeStreamClose, Status: 14, ID: 3}, Body: []byte("closing")},
		},
		{
			name: "reset",
			enc:  func(b []byte) []byte { return AppendStreamReset(b, 3, 1, "canceled") },
			want: decoded{Header: Header{Type: TypeStreamReset, Status: 1, ID: 3}, Body: []byte("canceled")},
			hex:  "79 01 0d 00 01 03000000 00000000 08000000 63616e63656c6564",
		},
		{
			name: "reset bare",
			enc:  func(b []byte) []byte { return AppendStreamReset(b, 1<<32-1, 14, "") },
			want: decoded{Header: Header{Type: TypeStreamReset, Status: 14, ID: 1<<32 - 1}},
		},
		{
			name: "window update stream",
			enc:  func(b []byte) []byte { return AppendWindowUpdate(b, 3, 16384) },
			want: decoded{Header: Header{Type: TypeWindowUpdate, ID: 3}, Body: []byte{0x80, 0x80, 0x01}},
			inc:  16384,
			hex:  "79 01 0e 00 00 03000000 00000000 03000000 808001",
		},
		{
			name: "window update connection",
			enc:  func(b []byte) []byte { return AppendWindowUpdate(b, 0, MaxWindow) },
			want: decoded{Header: Header{Type: TypeWindowUpdate}, Body: []byte{0xff, 0xff, 0xff, 0xff, 0x07}},
			inc:  MaxWindow,
		},
	}
}

func TestStreamFrames(t *testing.T) {
	opts := ReaderOptions{Features: allFeatures}
	var stream []byte
	var want []decoded
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			b := c.enc([]byte("prefix"))[len("prefix"):]
			if c.hex != "" {
				if got := hex.EncodeToString(b); got != strings.ReplaceAll(c.hex, " ", "") {
					t.Errorf("bytes\n got %s\nwant %s", got, strings.ReplaceAll(c.hex, " ", ""))
				}
			}
			r := NewReader(bytes.NewReader(b), opts)
			f, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if f.Increment != c.inc {
				t.Errorf("increment %d, want %d", f.Increment, c.inc)
			}
			md, err := ParseMetadata(f.Metadata, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, decoded{Header: f.Header, MD: md, Body: f.Body}, bytesEqual); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			stream = append(stream, b...)
			want = append(want, c.want)
		})
	}
	// The same frames after one another, between unary ones, in small reads.
	stream = append(stream, AppendFrame(nil, &Header{Type: TypePing, ID: 1}, nil, nil)...)
	want = append(want, decoded{Header: Header{Type: TypePing, ID: 1}})
	src := io.LimitReader(&chunkReader{data: stream, chunk: 7}, int64(len(stream)))
	got, err := readAll(t, src, ReaderOptions{Features: allFeatures, BufferSize: 32})
	if diff := cmp.Diff(want, got, bytesEqual); err != nil || diff != "" {
		t.Errorf("stream of all frames: %v (-want +got):\n%s", err, diff)
	}
}

// Stream frames are refused unless negotiated, and each type carries only
// what the format allows.
func TestStreamFrameErrors(t *testing.T) {
	withStatus := func(b []byte, status byte) []byte { b[4] = status; return b }
	withMethod := func(b []byte) []byte { b[9] = 1; return b }
	for _, c := range []struct {
		name string
		in   []byte
		feat Features
		msg  string
	}{
		{"not negotiated", AppendStreamOpen(nil, 1, 2, 0, nil), FeatureLZ4, "StreamOpen frame 1, but streams were not negotiated"},
		{"window update not negotiated", AppendWindowUpdate(nil, 0, 1), 0, "WindowUpdate frame 0, but streams were not negotiated"},
		{"open id 0", AppendStreamOpen(nil, 0, 2, 0, nil), allFeatures, "StreamOpen frame with id 0"},
		{"open with body", rawFrame(TypeStreamOpen, 0, 1, 'x'), allFeatures, "StreamOpen frame 1 has a body of 1 bytes, want none"},
		{"open with metadata and body", rawFrame(TypeStreamOpen, FlagMetadata, 1, 2, 0, 0, 'x'), allFeatures, "StreamOpen frame 1 has a body of 1 bytes, want none"},
		{"open compressed", rawFrame(TypeStreamOpen, FlagCompressed, 1), allFeatures, "StreamOpen frame 1 may not have flags compressed"},
		{"open status", withStatus(AppendStreamOpen(nil, 1, 2, 0, nil), 3), allFeatures, "StreamOpen frame 1 has status 3, want 0"},
		{"message deadline", rawFrame(TypeStreamMessage, FlagDeadline, 1, 1), allFeatures, "StreamMessage frame 1 may not have flags deadline"},
		{"message metadata", rawFrame(TypeStreamMessage, FlagMetadata, 1, 2, 0, 0), allFeatures, "may not have flags metadata"},
		{"message method", withMethod(AppendFrame(nil, &Header{Type: TypeStreamMessage, ID: 1}, nil, nil)), allFeatures, "StreamMessage frame 1 has method 0x1, want 0"},
		{"message compressed without lz4", rawFrame(TypeStreamMessage, FlagCompressed, 1, 1, 0), FeatureStreams, "StreamMessage frame 1 is compressed, but lz4 was not negotiated"},
		{"half-close body", rawFrame(TypeStreamHalfClose, 0, 1, 0), allFeatures, "StreamHalfClose frame 1 has a body of 1 bytes, want none"},
		{"half-close id 0", rawFrame(TypeStreamHalfClose, 0, 0), allFeatures, "StreamHalfClose frame with id 0"},
		{"close deadline", rawFrame(TypeStreamClose, FlagDeadline, 1, 1), allFeatures, "may not have flags deadline"},
		{"reset metadata", rawFrame(TypeStreamReset, FlagMetadata, 1, 2, 0, 0), allFeatures, "StreamReset frame 1 may not have flags metadata"},
		{"window update empty", rawFrame(TypeWindowUpdate, 0, 1), allFeatures, "WindowUpdate frame 1: body  is not one uvarint"},
		{"window update two varints", rawFrame(TypeWindowUpdate, 0, 1, 1, 1), allFeatures, "WindowUpdate frame 1: body 01 01 is not one uvarint"},
		{"window update zero", rawFrame(TypeWindowUpdate, 0, 1, 0), allFeatures, "increment 0 out of range 1-2147483647"},
		{"window update too large", rawFrame(TypeWindowUpdate, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x08), allFeatures, "increment 2147483648 out of range"},
		{"window update status", withStatus(AppendWindowUpdate(nil, 1, 1), 1), allFeatures, "WindowUpdate frame 1 has status 1, want 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(c.in), ReaderOptions{Features: c.feat}).Next()
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want ErrMalformed saying %q", err, c.msg)
			}
		})
	}
	// A trailer above the metadata limit.
	big := AppendStreamClose(nil, 1, 0, "", []string{"k", strings.Repeat("v", 300)})
	if _, err := NewReader(bytes.NewReader(big), ReaderOptions{Features: FeatureStreams, MaxMetadataSize: 256}).Next(); !errors.Is(err, ErrMetadataTooLarge) {
		t.Errorf("large trailer: %v", err)
	}
}

func TestStreamAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	buf := make([]byte, 0, 1024)
	md := []string{"yrpc-app", "web"}
	body := make([]byte, 100)
	var stream []byte
	for _, enc := range []struct {
		name string
		f    func()
	}{
		{"open", func() { buf = AppendStreamOpen(buf[:0], 1, 2, time.Second, md) }},
		{"message", func() { buf = AppendFrame(buf[:0], &Header{Type: TypeStreamMessage, ID: 1}, nil, body) }},
		{"half-close", func() { buf = AppendStreamHalfClose(buf[:0], 1) }},
		{"close", func() { buf = AppendStreamClose(buf[:0], 1, 13, "internal error", md) }},
		{"reset", func() { buf = AppendStreamReset(buf[:0], 1, 1, "canceled") }},
		{"window update", func() { buf = AppendWindowUpdate(buf[:0], 1, 1<<20) }},
	} {
		if n := testing.AllocsPerRun(100, enc.f); n != 0 {
			t.Errorf("%s encoder: %v allocs, want 0", enc.name, n)
		}
		stream = append(stream, buf...)
	}
	r := NewReader(&loopReader{data: stream}, ReaderOptions{Features: allFeatures})
	if n := nextAllocs(t, r, 20, 600); n != 0 {
		t.Errorf("Reader.Next of stream frames: %v allocs, want 0", n)
	}
}
