package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// frame builds raw frame bytes: a fixed header with the given fields and
// length len(rest), then rest.
func rawFrame(typ Type, flags Flags, id uint32, rest ...byte) []byte {
	b := []byte{Magic, Version, byte(typ), byte(flags), 0}
	b = binary.LittleEndian.AppendUint32(b, id)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(rest)))
	return append(b, rest...)
}

func TestReaderErrors(t *testing.T) {
	ok := AppendFrame(nil, &Header{Type: TypePing, ID: 1}, nil, nil)
	big := AppendFrame(nil, &Header{Type: TypeRequest, ID: 3, Method: 1}, nil, make([]byte, 2000))
	bigMD := AppendFrame(nil, &Header{Type: TypeRequest, ID: 4}, []string{"k", strings.Repeat("v", 300)}, nil)
	var comp Compressor
	bomb := comp.AppendFrame(nil, &Header{Type: TypeResponse, ID: 5}, nil, make([]byte, 64<<10), 0)
	if bomb[3]&byte(FlagCompressed) == 0 {
		t.Fatal("zeros did not compress")
	}
	corrupt := comp.AppendFrame(nil, &Header{Type: TypeResponse, ID: 6}, nil, compressible(4096), 0)
	corrupt = append(corrupt[:len(corrupt)-20], bytes.Repeat([]byte{0xff}, 20)...)
	impossible := rawFrame(TypeResponse, FlagCompressed, 7, 0x80, 0x20, 0x11, 0x22) // claims 4096 bytes
	shortLen := comp.AppendFrame(nil, &Header{Type: TypeResponse, ID: 8}, nil, compressible(4096), 0)
	if shortLen[HeaderLen] != 0x80 || shortLen[HeaderLen+1] != 0x20 {
		t.Fatalf("compressed body does not start with uvarint 4096: % x", shortLen[HeaderLen:HeaderLen+2])
	}
	shortLen[HeaderLen] = 0x81 // claims 4097 bytes

	opts := ReaderOptions{MaxFrameSize: 1024, MaxMetadataSize: 256, Features: FeatureLZ4}
	for _, c := range []struct {
		name    string
		in      []byte
		frames  int // good frames before the error
		wantErr error
		msg     string // substring of the error message
	}{
		{"empty", nil, 0, io.EOF, "EOF"},
		{"truncated header", ok[:10], 0, io.ErrUnexpectedEOF, "10 bytes into a frame"},
		{"truncated body", append(bytes.Clone(ok), bigMD[:200]...), 1, io.ErrUnexpectedEOF, "200 bytes"},
		{"http client", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0, ErrMalformed, `bad frame magic 0x47, want 0x79 (stream at that point: "GET / HT")`},
		{"preface again", append(AppendPreface(nil, Preface{}), ok...), 0, ErrMalformed, "bad frame magic 0x59"},
		{"version", append([]byte{Magic, 2}, ok[2:]...), 0, ErrVersion, "frame of protocol version 2, this side supports 1"},
		{"type zero", rawFrame(0, 0, 1), 0, ErrMalformed, "bad frame type 0"},
		{"type unknown", rawFrame(15, 0, 1), 0, ErrMalformed, "bad frame type 15"},
		{"settings", rawFrame(TypeSettings, 0, 0), 0, ErrMalformed, "Settings frame after the handshake"},
		{"reserved flag", rawFrame(TypePing, 0x10, 1), 0, ErrMalformed, "Ping frame 1 has reserved flags set (0x10)"},
		{"too large", append(bytes.Clone(ok), big...), 1, ErrFrameTooLarge, "Request frame 3 of 2017 bytes exceeds the limit of 1024 bytes"},
		{"length field huge", rawFrame(TypeRequest, 0, 9)[:13:13], 0, nil, ""}, // patched below
		{"metadata too large", bigMD, 0, ErrMetadataTooLarge, "metadata of 304 bytes exceeds the limit of 256 bytes"},
		{"metadata overruns", rawFrame(TypeRequest, FlagMetadata, 1, 5, 1, 'k'), 0, ErrMalformed, "metadata of 5 bytes overruns the 2 bytes left"},
		{"metadata empty", rawFrame(TypeRequest, FlagMetadata, 1, 0), 0, ErrMalformed, "empty block"},
		{"metadata varint truncated", rawFrame(TypeRequest, FlagMetadata, 1, 0x80), 0, ErrMalformed, "bad metadata length varint"},
		{"deadline varint truncated", rawFrame(TypeRequest, FlagDeadline, 1, 0x80, 0x80), 0, ErrMalformed, "bad timeout varint"},
		{"deadline varint overflow", rawFrame(TypeRequest, FlagDeadline, 1, bytes.Repeat([]byte{0xff}, 11)...), 0, ErrMalformed, "bad timeout varint"},
		{"deadline zero", rawFrame(TypeRequest, FlagDeadline, 1, 0), 0, ErrMalformed, "zero timeout"},
		{"compressed empty", rawFrame(TypeRequest, FlagCompressed, 1), 0, ErrMalformed, "bad decompressed length varint"},
		{"compressed zero length", rawFrame(TypeRequest, FlagCompressed, 1, 0, 0), 0, ErrMalformed, "compressed empty body"},
		{"decompression bomb", bomb, 0, ErrFrameTooLarge, "Response frame 5: decompressed body of 65536 bytes exceeds the limit of 1024 bytes"},
		{"corrupt lz4", corrupt, 0, ErrMalformed, "corrupt lz4 body"},
		{"lz4 shorter than claimed", shortLen, 0, ErrMalformed, "corrupt lz4 body"},
		{"lz4 claim beyond any ratio", impossible, 0, ErrMalformed, "Response frame 7: 2 compressed bytes cannot decode to the 4096 bytes claimed"},
		{"compressed without lz4", bomb, 0, ErrMalformed, "Response frame 5 is compressed, but lz4 was not negotiated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, wantErr, msg := c.in, c.wantErr, c.msg
			o := opts
			if c.name == "length field huge" {
				in = binary.LittleEndian.AppendUint32(in, 1<<32-1)
				wantErr, msg = ErrFrameTooLarge, "Request frame 9 of 4294967312 bytes exceeds the limit of 1024 bytes"
			}
			switch c.name {
			case "corrupt lz4", "lz4 shorter than claimed", "lz4 claim beyond any ratio":
				o.MaxFrameSize = DefaultMaxFrameSize
			case "compressed without lz4":
				o.Features = 0
			}
			r := NewReader(bytes.NewReader(in), o)
			for i := range c.frames {
				if _, err := r.Next(); err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
			}
			_, err := r.Next()
			if !errors.Is(err, wantErr) {
				t.Fatalf("error %v, want one wrapping %v", err, wantErr)
			}
			if !strings.Contains(err.Error(), msg) {
				t.Errorf("error %q does not say %q", err, msg)
			}
			if _, err2 := r.Next(); err2 != err {
				t.Errorf("second Next returned %v, want the same error", err2)
			}
		})
	}
}

func TestReaderReadErrors(t *testing.T) {
	frames := append(AppendFrame(nil, &Header{Type: TypePing, ID: 1}, nil, nil),
		AppendFrame(nil, &Header{Type: TypePong, ID: 2}, nil, nil)...)
	boom := errors.New("boom")

	// The error comes after the last bytes: both frames first, then the error.
	src := io.MultiReader(bytes.NewReader(frames), iotest.ErrReader(boom))
	r := NewReader(src, ReaderOptions{})
	for i := range 2 {
		if _, err := r.Next(); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if _, err := r.Next(); err != boom {
		t.Fatalf("got %v, want the read error", err)
	}

	// A reader that never makes progress.
	r = NewReader(emptyReader{}, ReaderOptions{})
	if _, err := r.Next(); err != io.ErrNoProgress {
		t.Fatalf("got %v, want io.ErrNoProgress", err)
	}
}

// timeoutReader hands out its bytes in pieces of at most step, failing
// with a read timeout before each piece, as a connection with a read
// deadline that keeps expiring would.
type timeoutReader struct {
	b       []byte
	step    int
	timeout bool
}

func (t *timeoutReader) Read(p []byte) (int, error) {
	if t.timeout = !t.timeout; t.timeout {
		return 0, fmt.Errorf("read tcp: %w", os.ErrDeadlineExceeded)
	}
	if len(t.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), t.step)], t.b)
	t.b = t.b[n:]
	return n, nil
}

// A read timeout, even in the middle of a frame, does not fail the Reader:
// the next Next goes on where the last one stopped.
func TestReaderSurvivesTimeouts(t *testing.T) {
	var stream []byte
	for i := range 5 {
		stream = AppendFrame(stream, &Header{Type: TypeResponse, ID: uint32(i + 1)}, []string{"k", "v"}, make([]byte, 50))
	}
	r := NewReader(&timeoutReader{b: stream, step: 7}, ReaderOptions{})
	timeouts := 0
	for id := uint32(1); id <= 5; {
		f, err := r.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			timeouts++
			continue
		}
		if err != nil {
			t.Fatalf("frame %d: %v", id, err)
		}
		if f.ID != id || len(f.Body) != 50 {
			t.Fatalf("got frame %d with %d body bytes, want frame %d with 50", f.ID, len(f.Body), id)
		}
		id++
	}
	if want := (len(stream) + 6) / 7; timeouts != want {
		t.Errorf("%d timeouts, want one per read, %d", timeouts, want)
	}
	for range 2 { // a timeout, then the end of the stream
		if _, err := r.Next(); err == io.EOF {
			return
		} else if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("after the last frame: %v, want io.EOF", err)
		}
	}
	t.Fatal("no io.EOF after the last frame")
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// countingReader counts Read calls.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) { c.reads++; return c.r.Read(p) }

// TestReaderBatches checks that one read serves many frames and that
// Buffered tells when a frame is ready without a read.
func TestReaderBatches(t *testing.T) {
	var stream []byte
	for i := range 100 {
		stream = AppendFrame(stream, &Header{Type: TypeResponse, ID: uint32(i)}, nil, make([]byte, 100))
	}
	src := &countingReader{r: bytes.NewReader(stream)}
	r := NewReader(src, ReaderOptions{BufferSize: 16 << 10})
	for i := range 100 {
		f, err := r.Next()
		if err != nil || f.ID != uint32(i) {
			t.Fatalf("frame %d: %v, id %d", i, err, f.ID)
		}
		if want := len(stream) - (i+1)*(HeaderLen+100); r.Buffered() != want {
			t.Fatalf("after frame %d Buffered() = %d, want %d", i, r.Buffered(), want)
		}
	}
	if src.reads != 1 {
		t.Errorf("%d reads for 100 frames, want 1", src.reads)
	}
}

// TestReaderGrows reads a frame larger than the buffer, then small ones.
func TestReaderGrows(t *testing.T) {
	body := incompressible(100 << 10)
	stream := AppendFrame(nil, &Header{Type: TypePing, ID: 1}, nil, nil)
	stream = AppendFrame(stream, &Header{Type: TypeRequest, ID: 2, Method: 1}, nil, body)
	stream = AppendFrame(stream, &Header{Type: TypePing, ID: 3}, nil, nil)
	r := NewReader(iotest.HalfReader(bytes.NewReader(stream)), ReaderOptions{BufferSize: 1000})
	for _, id := range []uint32{1, 2, 3} {
		f, err := r.Next()
		if err != nil || f.ID != id {
			t.Fatalf("want frame %d: %v %+v", id, err, f)
		}
		if id == 2 && !bytes.Equal(f.Body, body) {
			t.Fatal("large body corrupted")
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("got %v, want EOF", err)
	}
}

// loopReader serves the same bytes forever.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], l.data[l.off:])
		n += c
		l.off = (l.off + c) % len(l.data)
	}
	return n, nil
}

// nextAllocs returns the allocations per Next of r after warm frames (so
// that its buffers reach their steady size), averaged over runs frames.
func nextAllocs(t *testing.T, r *Reader, warm, runs int) float64 {
	t.Helper()
	next := func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	for range warm {
		next()
	}
	return testing.AllocsPerRun(runs, next)
}

func TestAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	md := []string{"yrpc-app", "web"}
	h := Header{Type: TypeRequest, ID: 1, Method: 2, Timeout: time.Second}
	var comp Compressor
	var stream []byte
	for i := range 50 {
		stream = AppendFrame(stream, &h, md, make([]byte, 100+i*10))
		stream = comp.AppendFrame(stream, &h, nil, compressible(2000+i), 0)
	}
	r := NewReader(&loopReader{data: stream}, ReaderOptions{Features: FeatureLZ4})
	if n := nextAllocs(t, r, 200, 1000); n != 0 {
		t.Errorf("Reader.Next: %v allocs per frame, want 0", n)
	}

	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(1000, func() {
		buf = AppendHeader(buf[:0], &h, md, 600)
	}); n != 0 {
		t.Errorf("AppendHeader: %v allocs, want 0", n)
	}
	body := compressible(4096)
	if n := testing.AllocsPerRun(100, func() {
		buf = comp.AppendFrame(buf[:0], &h, md, body, 0)
	}); n != 0 {
		t.Errorf("Compressor.AppendFrame: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := ParseMetadata([]byte("\x01k\x01v"), make([]string, 0, 2)); err != nil {
			t.Fatal(err)
		}
	}); n > 2 {
		t.Errorf("ParseMetadata: %v allocs, want <= 2", n)
	}
}

type badCountReader struct{}

func (badCountReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestReaderBadSource(t *testing.T) {
	_, err := NewReader(badCountReader{}, ReaderOptions{}).Next()
	if err == nil || !strings.Contains(err.Error(), "invalid count") {
		t.Fatalf("got %v, want an invalid count error", err)
	}
}

// Ready tells a whole buffered frame from a part of one.
func TestReaderReady(t *testing.T) {
	frame := AppendFrame(nil, &Header{Type: TypeRequest, ID: 1, Method: 7}, nil, []byte("hello"))
	two := append(append([]byte(nil), frame...), frame[:HeaderLen+2]...)
	r := NewReader(bytes.NewReader(two), ReaderOptions{})
	if r.Ready() {
		t.Fatal("nothing read yet: Ready")
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if r.Buffered() == 0 || r.Ready() {
		t.Fatalf("a partial frame buffered (%d bytes): Ready = %v, want false", r.Buffered(), r.Ready())
	}
	r2 := NewReader(bytes.NewReader(append(append([]byte(nil), frame...), frame...)), ReaderOptions{})
	if _, err := r2.Next(); err != nil {
		t.Fatal(err)
	}
	if !r2.Ready() {
		t.Fatal("a whole second frame buffered: Ready = false")
	}
}
