package wire

import (
	"bytes"
	"encoding/hex"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// decoded is a frame copied out of a Reader, for comparisons.
type decoded struct {
	Header
	MD   []string
	Body []byte
}

// allFeatures are the features the tests' Readers accept.
const allFeatures = FeatureLZ4 | FeatureStreams

// bytesEqual makes cmp compare byte slices in one step (and nil equal to
// empty), which is much faster on large bodies.
var bytesEqual = cmp.Comparer(bytes.Equal)

// readAll decodes every frame of src, copying them out.
func readAll(t testing.TB, src io.Reader, opts ReaderOptions) ([]decoded, error) {
	t.Helper()
	r := NewReader(src, opts)
	var out []decoded
	for {
		f, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, err
		}
		md, err := ParseMetadata(f.Metadata, nil)
		if err != nil {
			t.Fatalf("ParseMetadata: %v", err)
		}
		out = append(out, decoded{Header: f.Header, MD: md, Body: bytes.Clone(f.Body)})
	}
}

// compressible returns n bytes that lz4 shrinks well.
func compressible(n int) []byte {
	return []byte(strings.Repeat("yrpc frames are small and many; ", n/32+1))[:n]
}

// incompressible returns n pseudo-random bytes.
func incompressible(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

type roundTrip struct {
	name     string
	h        Header
	md       []string
	body     []byte
	compress bool // use a Compressor with the default threshold
	wantComp bool // expect FlagCompressed on the wire
}

func roundTripCases() []roundTrip {
	md := []string{"yrpc-app", "web", "trace", "0af7651916cd43dd8448eb211c80319c"}
	return []roundTrip{
		{name: "request", h: Header{Type: TypeRequest, ID: 1, Method: 0x98f998eb}, body: []byte{0x0a, 0x03, 'A', 'd', 'a'}},
		{name: "request deadline", h: Header{Type: TypeRequest, ID: 2, Method: 7, Timeout: 250 * time.Millisecond}, body: []byte("x")},
		{name: "request metadata", h: Header{Type: TypeRequest, ID: 3, Method: 7}, md: md, body: []byte("x")},
		{name: "request deadline metadata", h: Header{Type: TypeRequest, ID: 4, Method: 7, Timeout: time.Hour}, md: md, body: []byte("hello")},
		{name: "request empty body", h: Header{Type: TypeRequest, ID: 5, Method: 1}},
		{name: "request max ids", h: Header{Type: TypeRequest, ID: 1<<32 - 1, Method: 1<<32 - 1}, body: []byte("x")},
		{name: "request compressed", h: Header{Type: TypeRequest, ID: 6, Method: 9, Timeout: time.Second}, md: md, body: compressible(4096), compress: true, wantComp: true},
		{name: "request incompressible", h: Header{Type: TypeRequest, ID: 7, Method: 9}, body: incompressible(4096), compress: true},
		{name: "request below threshold", h: Header{Type: TypeRequest, ID: 8, Method: 9}, body: compressible(DefaultCompressThreshold - 1), compress: true},
		{name: "request at threshold", h: Header{Type: TypeRequest, ID: 9, Method: 9}, body: compressible(DefaultCompressThreshold), compress: true, wantComp: true},
		{name: "response", h: Header{Type: TypeResponse, ID: 1}, body: []byte{0x08, 0x01}},
		{name: "response error", h: Header{Type: TypeResponse, ID: 1, Status: 14}, body: []byte("server is closing")},
		{name: "response compressed", h: Header{Type: TypeResponse, ID: 10}, md: md[:2], body: compressible(64 << 10), compress: true, wantComp: true},
		{name: "oneway", h: Header{Type: TypeOneway, ID: 11, Method: 3}, md: md[:2], body: []byte("event")},
		{name: "oneway deadline", h: Header{Type: TypeOneway, ID: 12, Method: 3, Timeout: 1500 * time.Microsecond}},
		{name: "ping", h: Header{Type: TypePing, ID: 0xdeadbeef}},
		{name: "pong", h: Header{Type: TypePong, ID: 0xdeadbeef}},
		{name: "cancel", h: Header{Type: TypeCancel, ID: 42}},
		{name: "goaway", h: Header{Type: TypeGoAway, ID: 41, Status: 14}, body: []byte("shutting down")},
		{name: "odd metadata", h: Header{Type: TypeRequest, ID: 13, Method: 1}, md: []string{"k", "v", "lonely"}},
		{name: "empty metadata strings", h: Header{Type: TypeRequest, ID: 14, Method: 1}, md: []string{"", ""}},
	}
}

// want returns what a reader should decode from c's frame.
func (c roundTrip) want() decoded {
	w := decoded{Header: c.h, MD: c.md, Body: c.body}
	if len(w.MD)%2 == 1 {
		w.MD = append(append([]string(nil), w.MD...), "")
	}
	if len(w.MD) == 0 {
		w.MD = nil
	}
	if c.h.Timeout != 0 {
		w.Flags |= FlagDeadline
	}
	if len(c.md) > 0 {
		w.Flags |= FlagMetadata
	}
	if c.wantComp {
		w.Flags |= FlagCompressed
	}
	return w
}

func (c roundTrip) encode(dst []byte, comp *Compressor) []byte {
	if c.compress {
		return comp.AppendFrame(dst, &c.h, c.md, c.body, 0)
	}
	return AppendFrame(dst, &c.h, c.md, c.body)
}

func TestRoundTrip(t *testing.T) {
	var comp Compressor
	for _, c := range roundTripCases() {
		t.Run(c.name, func(t *testing.T) {
			b := c.encode([]byte("prefix"), &comp)
			if !bytes.HasPrefix(b, []byte("prefix")) {
				t.Fatalf("encoder clobbered dst's prefix")
			}
			b = b[len("prefix"):]
			if !c.compress {
				if got, want := len(b), FrameSize(&c.h, c.md, len(c.body)); got != want {
					t.Errorf("frame is %d bytes, FrameSize says %d", got, want)
				}
			}
			got, err := readAll(t, bytes.NewReader(b), ReaderOptions{Features: allFeatures})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]decoded{c.want()}, got, bytesEqual); diff != "" {
				t.Errorf("decoded frame (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAppendHeader checks the zero-copy path: header, then the caller's body.
func TestAppendHeader(t *testing.T) {
	for _, c := range roundTripCases() {
		if c.compress {
			continue
		}
		b := AppendHeader(nil, &c.h, c.md, len(c.body))
		b = append(b, c.body...)
		if want := AppendFrame(nil, &c.h, c.md, c.body); !bytes.Equal(b, want) {
			t.Errorf("%s: AppendHeader+body = %x, AppendFrame = %x", c.name, b, want)
		}
	}
}

func TestEncoderIgnoresFlags(t *testing.T) {
	h := Header{Type: TypeResponse, ID: 1, Flags: 0xff}
	b := AppendFrame(nil, &h, nil, []byte("plain"))
	if b[3] != 0 {
		t.Fatalf("flags byte = %#x, want 0", b[3])
	}
}

// TestGolden pins the format: the worked example in doc.go.
func TestGolden(t *testing.T) {
	const want = "79 01 01 06 00 01000000 eb98f998 16000000" + // fixed header
		"90a10f" + // timeout 250ms
		"0d 08 797270632d617070 03 776562" + // metadata yrpc-app=web
		"0a03416461" // body
	h := Header{Type: TypeRequest, ID: 1, Method: 0x98f998eb, Timeout: 250 * time.Millisecond}
	got := AppendFrame(nil, &h, []string{"yrpc-app", "web"}, []byte{0x0a, 0x03, 'A', 'd', 'a'})
	if g, w := hex.EncodeToString(got), strings.ReplaceAll(want, " ", ""); g != w {
		t.Fatalf("frame bytes\n got %s\nwant %s", g, w)
	}
}

func TestTimeoutEncoding(t *testing.T) {
	for _, c := range []struct {
		in, want time.Duration
	}{
		{time.Nanosecond, time.Microsecond},
		{999 * time.Nanosecond, time.Microsecond},
		{time.Microsecond, time.Microsecond},
		{time.Microsecond + 1, 2 * time.Microsecond},
		{-time.Second, time.Microsecond}, // expired: kept as a tiny deadline
		{90 * time.Minute, 90 * time.Minute},
		{1<<63 - 1, 1<<63 - 1}, // rounds up past the max, saturates back
	} {
		h := Header{Type: TypeRequest, Timeout: c.in}
		got, err := readAll(t, bytes.NewReader(AppendFrame(nil, &h, nil, nil)), ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Timeout != c.want {
			t.Errorf("timeout %v decoded as %v, want %v", c.in, got[0].Timeout, c.want)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{TypeRequest.String(), "Request"},
		{TypeGoAway.String(), "GoAway"},
		{Type(0).String(), "Type(0)"},
		{Type(8).String(), "Settings"},
		{TypeWindowUpdate.String(), "WindowUpdate"},
		{Type(15).String(), "Type(15)"},
		{Flags(0).String(), "0"},
		{(FlagDeadline | FlagMetadata).String(), "deadline|metadata"},
		{(FlagCompressed | 0x80).String(), "compressed|0x80"},
		{Features(0).String(), "0"},
		{FeatureLZ4.String(), "lz4"},
		{(FeatureLZ4 | FeatureSettings | FeatureStreams).String(), "lz4|settings|streams"},
		{(FeatureLZ4 | 8).String(), "lz4|0x8"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestReaderChunking feeds the same stream whole, one byte at a time, and in
// odd-sized pieces, through buffers smaller than the frames.
func TestReaderChunking(t *testing.T) {
	var stream []byte
	var want []decoded
	var comp Compressor
	for _, c := range roundTripCases() {
		stream = c.encode(stream, &comp)
		want = append(want, c.want())
	}
	for _, c := range []struct {
		name string
		src  func() io.Reader
		opts ReaderOptions
	}{
		{"all at once", func() io.Reader { return bytes.NewReader(stream) }, ReaderOptions{}},
		{"all at once, EOF with data", func() io.Reader { return iotest.DataErrReader(bytes.NewReader(stream)) }, ReaderOptions{}},
		{"one byte", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) }, ReaderOptions{}},
		{"half reads", func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) }, ReaderOptions{}},
		{"tiny buffer", func() io.Reader { return bytes.NewReader(stream) }, ReaderOptions{BufferSize: 1}},
		{"small buffer, one byte", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) }, ReaderOptions{BufferSize: 100}},
		{"small buffer, half reads", func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) }, ReaderOptions{BufferSize: 333}},
		{"tiny batches, pooled", func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) }, ReaderOptions{BufferSize: 64, BatchSize: 128, Pool: new(BufferPool)}},
		{"tiny batches, heap", func() io.Reader { return bytes.NewReader(stream) }, ReaderOptions{BufferSize: 64, BatchSize: 128}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Features = allFeatures
			got, err := readAll(t, c.src(), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, bytesEqual); diff != "" {
				t.Errorf("decoded frames (-want +got):\n%s", diff)
			}
		})
	}
}
