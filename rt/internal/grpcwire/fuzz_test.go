package grpcwire

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzReader reads arbitrary bodies: no panics, no message over the limit,
// a buffer that stays within twice the bytes given, Cut finds the same
// messages, and the messages read re-encode to a body that reads the same.
func FuzzReader(f *testing.F) {
	f.Add(frame(0, "hello"))
	f.Add(append(frame(FlagCompressed, ""), frame(0, "x")...))
	f.Add([]byte{0, 0x80, 0, 0, 0}) // a length of 2^31: over any limit
	f.Add(AppendHeader(nil, 0, 300))
	f.Add(AppendWebTrailers(frame(0, "m"), []string{"grpc-status", "0"}))
	const limit = 256
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), limit, nil)
		var flags []byte
		var msgs [][]byte
		var enc []byte
		for {
			fl, m, err := r.Next()
			if err != nil {
				var tl *TooLargeError
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.As(err, &tl) {
					t.Fatalf("Next() = %v", err)
				}
				break
			}
			if len(m) > limit {
				t.Fatalf("message of %d bytes past the limit", len(m))
			}
			flags, msgs = append(flags, fl), append(msgs, bytes.Clone(m))
			enc = append(AppendHeader(enc, fl, len(m)), m...)
		}
		// Cut, on the whole body at once, finds the same messages.
		rest := data
		for i := 0; ; i++ {
			fl, m, after, err := Cut(rest, limit)
			if err != nil {
				if i != len(msgs) {
					t.Fatalf("Cut stopped at message %d of %d: %v", i, len(msgs), err)
				}
				break
			}
			if i >= len(msgs) || fl != flags[i] || !bytes.Equal(m, msgs[i]) {
				t.Fatalf("Cut message %d = %x %q, the reader's %d messages differ", i, fl, m, len(msgs))
			}
			rest = after
		}
		if c := cap(r.Buffer()); c > max(2*len(data), minBuffer) {
			t.Fatalf("buffer of %d bytes for %d bytes of input", c, len(data))
		}
		r = NewReader(bytes.NewReader(enc), limit, nil)
		for i := range msgs {
			fl, m, err := r.Next()
			if err != nil || fl != flags[i] || !bytes.Equal(m, msgs[i]) {
				t.Fatalf("re-read message %d = %x %q %v, want %x %q", i, fl, m, err, flags[i], msgs[i])
			}
		}
		if _, _, err := r.Next(); err != io.EOF {
			t.Fatalf("re-read end = %v", err)
		}
	})
}

// FuzzWebTrailers parses arbitrary trailers frames: no panics, and what
// parses re-encodes to a frame that parses the same.
func FuzzWebTrailers(f *testing.F) {
	f.Add([]byte("grpc-status: 0\r\ngrpc-message: ok\r\n"))
	f.Add([]byte("Grpc-Status:13\n"))
	f.Add([]byte("a: b\r\n\r\nc:\r\n"))
	f.Add([]byte(":bad\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kv, err := ParseWebTrailers(data)
		if err != nil {
			return
		}
		if len(kv)%2 != 0 {
			t.Fatalf("odd pairs %q", kv)
		}
		frame := AppendWebTrailers(nil, kv)
		_, body, err := NewReader(bytes.NewReader(frame), len(frame), nil).Next()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseWebTrailers(body)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", body, err)
		}
		if d := cmp.Diff(kv, again); d != "" {
			t.Fatalf("re-parse (-first +second):\n%s", d)
		}
	})
}

// FuzzTimeout parses arbitrary grpc-timeout values: no panics, only 1 to 8
// digits and a unit parse, and AppendTimeout's value for what parses
// parses back to a deadline no earlier.
func FuzzTimeout(f *testing.F) {
	for _, s := range []string{"1n", "100m", "99999999H", "123456789n", "+1S", "-1S", "1s", "0x1S", "1_0m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTimeout(s)
		if err != nil {
			return
		}
		if d < 0 || len(s) < 2 || len(s) > 9 || strings.IndexByte("HMSmun", s[len(s)-1]) < 0 ||
			strings.Trim(s[:len(s)-1], "0123456789") != "" {
			t.Fatalf("ParseTimeout(%q) = %v, want an error", s, d)
		}
		enc := AppendTimeout(nil, d)
		back, err := ParseTimeout(string(enc))
		if err != nil || back < d {
			t.Fatalf("ParseTimeout(%q) = %v; AppendTimeout gave %q, which parses as %v, %v", s, d, enc, back, err)
		}
	})
}

// FuzzHeaderValues decodes arbitrary grpc-message and "-bin" values: no
// panics, EncodeMessage gives printable ASCII that DecodeMessage reverses,
// and a binary value that decodes re-encodes to one that decodes the same.
func FuzzHeaderValues(f *testing.F) {
	for _, s := range []string{"", "100%", "%zz", "caf%C3%A9", "AAEC", "AAE=", "AA==", "!!", "A", "AAE=AA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeMessage(s)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; c < 0x20 || c > 0x7e {
				t.Fatalf("EncodeMessage(%q) = %q: byte %#x", s, enc, c)
			}
		}
		if got := DecodeMessage(enc); got != s {
			t.Fatalf("DecodeMessage(EncodeMessage(%q)) = %q", s, got)
		}
		if len(DecodeMessage(s)) > len(s) {
			t.Fatalf("DecodeMessage(%q) grew to %q", s, DecodeMessage(s))
		}
		b, err := DecodeBinary(s)
		if err != nil {
			return
		}
		if len(b) > len(s) {
			t.Fatalf("DecodeBinary(%q) = %d bytes", s, len(b))
		}
		if again, err := DecodeBinary(EncodeBinary(b)); err != nil || again != b {
			t.Fatalf("DecodeBinary(%q) = %q, which re-encoded decodes as %q, %v", s, b, again, err)
		}
	})
}

// FuzzStatus decodes arbitrary grpc-status-details-bin bodies and the
// BadRequest details in them: no panics, and a status that decodes
// re-encodes to one that decodes equal.
func FuzzStatus(f *testing.F) {
	br := AppendBadRequest(nil, []FieldViolation{{Field: "name", Description: "must not be empty"}, {Field: "id"}})
	st := Status{Code: 3, Message: "bad", Details: []Any{{TypeURL: TypeBadRequest, Value: br}, {}}}
	f.Add(st.MarshalAppend(nil))
	f.Add(br)
	f.Add([]byte{0x08, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x1a, 0x02, 0x0a, 0x09})
	f.Fuzz(func(t *testing.T, b []byte) {
		var s, again Status
		if err := s.Unmarshal(b); err == nil {
			enc := s.MarshalAppend(nil)
			if err := again.Unmarshal(enc); err != nil {
				t.Fatalf("%+v re-encoded as %x does not decode: %v", s, enc, err)
			}
			if d := cmp.Diff(s, again); d != "" {
				t.Fatalf("round trip (-first +second):\n%s", d)
			}
		}
		vs, err := ParseBadRequest(b)
		if err != nil {
			return
		}
		again2, err := ParseBadRequest(AppendBadRequest(nil, vs))
		if err != nil {
			t.Fatalf("%q re-encoded does not decode: %v", vs, err)
		}
		if d := cmp.Diff(vs, again2); d != "" {
			t.Fatalf("round trip (-first +second):\n%s", d)
		}
	})
}

// FuzzDecompress inflates arbitrary compressed messages: no panics, no
// output past the limit however much the input inflates, dst's prefix
// kept, and the bytes of a message that fits are gzip's.
func FuzzDecompress(f *testing.F) {
	zw := gzip.NewWriter(nil)
	f.Add(Compress(zw, nil, []byte("hello, hello, hello")))
	f.Add(Compress(zw, nil, make([]byte, 1000)))
	f.Add(append(Compress(zw, nil, []byte("a")), Compress(zw, nil, []byte("b"))...))
	f.Add([]byte("not gzip"))
	const limit = 512
	zr := new(gzip.Reader)
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := Decompress(zr, []byte("dst"), src, limit)
		if string(got[:min(len(got), 3)]) != "dst" || len(got)-3 > limit {
			t.Fatalf("Decompress = %d bytes %q..., %v", len(got), got[:min(len(got), 8)], err)
		}
		if err != nil {
			if len(got) != 3 {
				t.Fatalf("error %v with %d bytes", err, len(got)-3)
			}
			return
		}
		ref, rerr := gzip.NewReader(bytes.NewReader(src))
		if rerr != nil {
			t.Fatalf("Decompress accepted what gzip refuses: %v", rerr)
		}
		ref.Multistream(false)
		want, rerr := io.ReadAll(io.LimitReader(ref, limit+1))
		if rerr != nil || !bytes.Equal(got[3:], want) {
			t.Fatalf("Decompress = %q, gzip reads %q, %v", got[3:], want, rerr)
		}
	})
}
