package grpcwire

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTimeout(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1n", 1, true},
		{"100m", 100 * time.Millisecond, true},
		{"5S", 5 * time.Second, true},
		{"2M", 2 * time.Minute, true},
		{"3H", 3 * time.Hour, true},
		{"12345678u", 12345678 * time.Microsecond, true},
		{"99999999H", math.MaxInt64, true}, // beyond a Duration: the largest
		{"0n", 0, true},
		{"123456789n", 0, false}, // 9 digits
		{"1", 0, false},
		{"S", 0, false},
		{"1s", 0, false},
		{"-1S", 0, false},
		{"+1S", 0, false},
		{"1.5S", 0, false},
		{"", 0, false},
	} {
		got, err := ParseTimeout(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseTimeout(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0n"},
		{-time.Second, "0n"},
		{1, "1n"},
		{99999999, "99999999n"},
		{100000000, "100000u"},
		{100000001, "100001u"}, // rounded up
		{time.Second, "1000000u"},
		{30 * time.Second, "30000000u"},
		{300 * time.Second, "300000m"},
		{time.Duration(math.MaxInt64), "2562048H"},
	} {
		got := string(AppendTimeout(nil, c.d))
		if got != c.want {
			t.Errorf("AppendTimeout(%v) = %q, want %q", c.d, got, c.want)
		}
		if back, err := ParseTimeout(got); err != nil || back < c.d {
			t.Errorf("ParseTimeout(%q) = %v, %v: earlier than %v", got, back, err, c.d)
		}
	}
}

func TestMessageEncoding(t *testing.T) {
	for _, c := range []struct{ in, enc string }{
		{"", ""},
		{"plain text: ok", "plain text: ok"},
		{"100%", "100%25"},
		{"line\nbreak", "line%0Abreak"},
		{"caf\u00e9", "caf%C3%A9"},
		{"\x7f~", "%7F~"},
	} {
		if got := EncodeMessage(c.in); got != c.enc {
			t.Errorf("EncodeMessage(%q) = %q, want %q", c.in, got, c.enc)
		}
		if got := DecodeMessage(c.enc); got != c.in {
			t.Errorf("DecodeMessage(%q) = %q, want %q", c.enc, got, c.in)
		}
	}
	// Malformed escapes stay as they are.
	for _, s := range []string{"%", "%4", "%zz", "a%g1b"} {
		if got := DecodeMessage(s); got != s {
			t.Errorf("DecodeMessage(%q) = %q", s, got)
		}
	}
}

func TestBinary(t *testing.T) {
	v := "\x00\x01\xfe\xffbin"
	enc := EncodeBinary(v)
	if strings.HasSuffix(enc, "=") {
		t.Errorf("EncodeBinary pads: %q", enc)
	}
	for _, s := range []string{enc, base64.StdEncoding.EncodeToString([]byte(v))} {
		got, err := DecodeBinary(s)
		if err != nil || got != v {
			t.Errorf("DecodeBinary(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := DecodeBinary("!!"); err == nil {
		t.Error("DecodeBinary accepted bad base64")
	}
	if !IsBinary("trace-bin") || IsBinary("trace") {
		t.Error("IsBinary")
	}
	if !Reserved("grpc-timeout") || !Reserved(":path") || Reserved("user-agent") || Reserved("x-key") {
		t.Error("Reserved")
	}
}

func TestStatus(t *testing.T) {
	br := AppendBadRequest(nil, []FieldViolation{{Field: "name", Description: "must not be empty"}, {Field: "id"}})
	st := Status{Code: 3, Message: "bad request", Details: []Any{{TypeURL: TypeBadRequest, Value: br}, {TypeURL: "type.googleapis.com/x.Empty"}}}
	var got Status
	if err := got.Unmarshal(st.MarshalAppend(nil)); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(st, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	vs, err := ParseBadRequest(got.Details[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]FieldViolation{{"name", "must not be empty"}, {"id", ""}}, vs); d != "" {
		t.Errorf("violations (-want +got):\n%s", d)
	}
	// A known encoding (protoc --encode of code: 5 message: "x"), plus an
	// unknown field that is skipped.
	if err := got.Unmarshal([]byte{0x08, 0x05, 0x12, 0x01, 'x', 0x20, 0x01}); err != nil || got.Code != 5 || got.Message != "x" {
		t.Errorf("Unmarshal = %+v, %v", got, err)
	}
	for _, b := range [][]byte{{0x08}, {0x12, 0x05, 'x'}, {0x00}, {0x1a, 0x02, 0x0a, 0x09}} {
		if err := got.Unmarshal(b); err == nil {
			t.Errorf("Unmarshal(%x) accepted", b)
		}
	}
}

func frame(flags byte, msg string) []byte {
	return append(AppendHeader(nil, flags, len(msg)), msg...)
}

func TestReader(t *testing.T) {
	stream := append(append(append(frame(0, "hello"), frame(FlagCompressed, "")...), frame(0, strings.Repeat("x", 10000))...), frame(FlagTrailers, "k: v\r\n")...)
	for name, src := range map[string]io.Reader{
		"whole":   bytes.NewReader(stream),
		"onebyte": iotest.OneByteReader(bytes.NewReader(stream)),
		"half":    iotest.HalfReader(bytes.NewReader(stream)),
	} {
		r := NewReader(src, 1<<20, nil)
		var got []string
		var flags []byte
		for {
			f, m, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, flags = append(got, string(m)), append(flags, f)
		}
		want := []string{"hello", "", strings.Repeat("x", 10000), "k: v\r\n"}
		if d := cmp.Diff(want, got); d != "" || !bytes.Equal(flags, []byte{0, 1, 0, 0x80}) {
			t.Errorf("%s: messages (-want +got):\n%s flags %x", name, d, flags)
		}
	}
	for _, c := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, io.EOF},
		{"short header", []byte{0, 0, 0}, io.ErrUnexpectedEOF},
		{"short message", frame(0, "hello")[:7], io.ErrUnexpectedEOF},
		{"too large", AppendHeader(nil, 0, 101), &TooLargeError{Size: 101, Max: 100}},
		{"2 GiB", []byte{0, 0x80, 0, 0, 0}, &TooLargeError{Size: 1 << 31, Max: 100}},
	} {
		_, _, err := NewReader(bytes.NewReader(c.in), 100, nil).Next()
		if !errors.Is(err, c.want) && !cmp.Equal(err, c.want) {
			t.Errorf("%s: Next() = %v, want %v", c.name, err, c.want)
		}
	}
}

// TestReaderGrowsWithBytesReceived: a prefix that claims 4 MiB followed by
// a few bytes does not make the reader reserve 4 MiB.
func TestReaderGrowsWithBytesReceived(t *testing.T) {
	in := append(AppendHeader(nil, 0, 4<<20), make([]byte, 10000)...)
	r := NewReader(bytes.NewReader(in), 8<<20, nil)
	if _, _, err := r.Next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("Next() = %v", err)
	}
	if c := cap(r.Buffer()); c > 32<<10 {
		t.Errorf("buffer of %d bytes after 10 kB received", c)
	}
}

func TestCompression(t *testing.T) {
	zw, zr := gzip.NewWriter(nil), new(gzip.Reader)
	msg := bytes.Repeat([]byte("compressible "), 1000)
	z := Compress(zw, []byte("prefix"), msg)
	if !bytes.HasPrefix(z, []byte("prefix")) || len(z) > len(msg)/10 {
		t.Fatalf("Compress: %d bytes from %d", len(z), len(msg))
	}
	got, err := Decompress(zr, nil, z[6:], len(msg))
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("Decompress = %d bytes, %v", len(got), err)
	}
	// A bomb: 16 kB that inflate to 16 MB stop at the limit.
	bomb := Compress(zw, nil, make([]byte, 16<<20))
	_, err = Decompress(zr, nil, bomb, 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Max != 1<<20 {
		t.Errorf("Decompress(bomb of %d bytes) = %v", len(bomb), err)
	}
	if _, err := Decompress(zr, nil, []byte("not gzip"), 100); err == nil {
		t.Error("Decompress accepted garbage")
	}
	if _, err := Decompress(zr, nil, z[6:len(z)-4], len(msg)); err == nil {
		t.Error("Decompress accepted a truncated stream")
	}
}

func TestContentType(t *testing.T) {
	for ct, want := range map[string]Protocol{
		"application/grpc":                    GRPC,
		"application/grpc+proto":              GRPC,
		"Application/GRPC+Proto":              GRPC,
		"application/grpc; charset=utf-8":     GRPC,
		"application/grpc-web":                Web,
		"application/grpc-web+proto":          Web,
		"application/grpc+json":               Unsupported,
		"application/grpc-web-text":           Unsupported,
		"application/grpcx":                   Unsupported,
		"application/json":                    Unsupported,
		"":                                    Unsupported,
		"application/grpc-web+proto;q=1":      Web,
		"application/grpc-web-text+proto":     Unsupported,
		"application/grpc-web+thrift":         Unsupported,
		"text/plain; application/grpc":        Unsupported,
		"application/grpc-web+proto; foo=bar": Web,
	} {
		if got := ParseContentType(ct); got != want {
			t.Errorf("ParseContentType(%q) = %d, want %d", ct, got, want)
		}
	}
}

func TestWebTrailers(t *testing.T) {
	kv := []string{"grpc-status", "3", "grpc-message", "bad%20id", "x-trace-bin", "AAE"}
	b := AppendWebTrailers(nil, kv)
	if b[0] != FlagTrailers || int(b[4]) != len(b)-HeaderLen {
		t.Fatalf("frame header % x", b[:5])
	}
	if got := string(b[5:]); got != "grpc-status: 3\r\ngrpc-message: bad%20id\r\nx-trace-bin: AAE\r\n" {
		t.Errorf("frame body %q", got)
	}
	got, err := ParseWebTrailers(b[5:])
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(kv, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	got, err = ParseWebTrailers([]byte("Grpc-Status:0\n\r\nX-A:  b c \r\n"))
	if err != nil || !cmp.Equal(got, []string{"grpc-status", "0", "x-a", "b c"}) {
		t.Errorf("lenient parse = %q, %v", got, err)
	}
	for _, bad := range []string{"no colon\r\n", ": v\r\n", "bad key: v\r\n", "k\x00: v"} {
		if _, err := ParseWebTrailers([]byte(bad)); err == nil {
			t.Errorf("ParseWebTrailers(%q) accepted", bad)
		}
	}
}

// Cut takes the first message of a body's bytes so far, or says that
// they hold a part of it, nothing, or a prefix over the limit.
func TestCut(t *testing.T) {
	two := append(AppendHeader(nil, FlagCompressed, 2), "ab"...)
	two = append(AppendHeader(two, 0, 1), 'c')
	for _, c := range []struct {
		name      string
		b         []byte
		flags     byte
		msg, rest string
		err       error
		tooLarge  bool
	}{
		{"two messages", two, FlagCompressed, "ab", string(two[7:]), nil, false},
		{"empty", nil, 0, "", "", io.EOF, false},
		{"a part of the prefix", two[:3], 0, "", string(two[:3]), io.ErrUnexpectedEOF, false},
		{"a part of the message", two[:6], 0, "", string(two[:6]), io.ErrUnexpectedEOF, false},
		{"over the limit", AppendHeader(nil, 0, 11), 0, "", string(AppendHeader(nil, 0, 11)), nil, true},
	} {
		flags, msg, rest, err := Cut(c.b, 10)
		var tl *TooLargeError
		if c.tooLarge != errors.As(err, &tl) || !c.tooLarge && err != c.err || string(msg) != c.msg || string(rest) != c.rest || c.err == nil && !c.tooLarge && flags != c.flags {
			t.Errorf("%s: %x %q %q %v", c.name, flags, msg, rest, err)
		}
	}
}
