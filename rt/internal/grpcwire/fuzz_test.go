package grpcwire

import (
	"bytes"
	"errors"
	"io"
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
