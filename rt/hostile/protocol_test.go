//go:build linux

package hostile

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/wire"
)

// closeBound is how long a server may take to close a connection that
// broke the protocol (it should be at once).
const closeBound = 5 * time.Second

// header encodes a frame's fixed header claiming length bytes after it.
func header(t wire.Type, flags wire.Flags, id uint32, length uint32) []byte {
	b := []byte{wire.Magic, wire.Version, byte(t), byte(flags), 0}
	b = binary.LittleEndian.AppendUint32(b, id)
	b = binary.LittleEndian.AppendUint32(b, sayHello)
	return binary.LittleEndian.AppendUint32(b, length)
}

// attackBytes sends each case's bytes on its own connections (several per
// case, from several IPs) and checks that the server closes every one of
// them.
func attackBytes(t *testing.T, tg *target, cases []struct {
	name string
	b    []byte
}) {
	const each = 20
	start := time.Now()
	var conns []net.Conn
	for i, c := range cases {
		for j := range each {
			nc, err := tg.dial(attackerIP(i*each + j))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := nc.Write(c.b); err != nil && !closed(err) {
				t.Fatalf("%s: write: %v", c.name, err)
			}
			conns = append(conns, nc)
		}
	}
	for i, c := range cases {
		n, last := awaitCloseAll(conns[i*each:(i+1)*each], closeBound)
		t.Logf("%s: %d of %d connections closed by the server, the last %v after the attack started", c.name, n, each, last.Sub(start).Round(time.Millisecond))
		if n != each {
			t.Errorf("%s: the server closed %d of %d connections within %v", c.name, n, each, closeBound)
		}
	}
}

// Garbage instead of a preface, or after one, is refused by closing the
// connection.
func TestGarbage(t *testing.T) {
	tg := newTarget(t, heapLimit)
	rng := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	frame := hello(1, "x")
	attackBytes(t, tg, []struct {
		name string
		b    []byte
	}{
		{"64 KiB of random bytes", garbage},
		{"preface, then random bytes", append(bytes.Clone(prefaceV1), garbage...)},
		{"preface, frame with a bad magic", append(bytes.Clone(prefaceV1), append([]byte{'z'}, frame[1:]...)...)},
		{"preface, frame of an unknown type", append(bytes.Clone(prefaceV1), append(bytes.Clone(frame[:2]), append([]byte{99}, frame[3:]...)...)...)},
		{"preface, frame with reserved flags", append(bytes.Clone(prefaceV1), append(bytes.Clone(frame[:3]), append([]byte{0xf8}, frame[4:]...)...)...)},
		{"preface, response frame from a client", append(bytes.Clone(prefaceV1), wire.AppendFrame(nil, &wire.Header{Type: wire.TypeResponse, ID: 1}, nil, nil)...)},
		{"preface, deadline flag with no timeout", append(bytes.Clone(prefaceV1), append(header(wire.TypeRequest, wire.FlagDeadline, 1, 1), 0)...)},
		{"preface, metadata running past the frame", append(bytes.Clone(prefaceV1), append(header(wire.TypeRequest, wire.FlagMetadata, 1, 2), 0x7f, 1)...)},
	})
	tg.check()
}

// A preface of another protocol, version or size is refused by closing
// the connection, and so is a connection that sends none in time.
//
// The server here speaks yrpc only (gRPC off): with gRPC on, HTTP/1.1 and
// HTTP/2 prefaces are served by the gRPC endpoint, whose attacks rt's
// grpc tests run.
func TestWrongPreface(t *testing.T) {
	tg := newTarget(t, heapLimit, rt.WithLimits(rt.Limits{PrefaceTimeout: time.Second}), rt.WithGRPC(rt.GRPCOff))
	bad := func(edit func(b []byte)) []byte {
		b := bytes.Clone(prefaceV1)
		edit(b)
		return b
	}
	attackBytes(t, tg, []struct {
		name string
		b    []byte
	}{
		{"HTTP/1.1", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
		{"HTTP/2", []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")},
		{"TLS client hello", []byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03}},
		{"a frame and no preface", hello(1, "x")},
		{"version 0", bad(func(b []byte) { b[4] = 0 })},
		{"version 255", bad(func(b []byte) { b[4] = 255 })},
		{"max frame size 0", bad(func(b []byte) { copy(b[9:], []byte{0, 0, 0, 0}) })},
		{"max frame size 1023", bad(func(b []byte) { binary.LittleEndian.PutUint32(b[9:], 1023) })},
		{"half a preface, then silence", prefaceV1[:6]},
		{"nothing at all", nil},
	})
	tg.check()
}

// A frame claiming 2 GiB (or 4 GiB) is refused from its header: the
// connection is closed and nothing is reserved for it.
func TestHugeLengthPrefix(t *testing.T) {
	tg := newTarget(t, heapLimit)
	attackBytes(t, tg, []struct {
		name string
		b    []byte
	}{
		{"2 GiB request", append(bytes.Clone(prefaceV1), header(wire.TypeRequest, 0, 1, 2<<30-wire.HeaderLen)...)},
		{"4 GiB request", append(bytes.Clone(prefaceV1), header(wire.TypeRequest, 0, 1, 1<<32-1)...)},
		{"2 GiB ping after a request", append(append(bytes.Clone(prefaceV1), hello(1, "x")...), header(wire.TypePing, 0, 1, 2<<30)...)},
		{"max frame size + 1", append(bytes.Clone(prefaceV1), header(wire.TypeRequest, 0, 1, wire.DefaultMaxFrameSize-wire.HeaderLen+1)...)},
	})
	tg.check()
}

// lz4 that was never negotiated is refused: 16 KB on the wire must not
// make the server inflate 4 MB (issue 11, item 6). The server announces
// no lz4 (no WithCompression), the attackers do not either, and each
// sends one compressed request and keeps its connection open.
func TestLZ4NotNegotiated(t *testing.T) {
	tg := newTarget(t, heapLimit)
	const inflated = wire.DefaultMaxFrameSize - 64
	frame := func() []byte { // the 4 MB body is garbage once compressed
		body := make([]byte, inflated) // zeros: field number 0, a decode error once inflated
		var cz wire.Compressor
		return cz.AppendFrame(nil, &wire.Header{Type: wire.TypeRequest, ID: 1, Method: sayHello}, nil, body, 1)
	}()
	if frame[3]&byte(wire.FlagCompressed) == 0 {
		t.Fatal("the attack frame is not compressed")
	}
	const n = 30
	var conns []net.Conn
	for i := range n {
		c, err := tg.open(attackerIP(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(frame); err != nil && !closed(err) {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if tg.heap.over() {
			break
		}
	}
	tg.awaitRead(closeBound)
	live := tg.heap.live()
	answered := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(closeBound))
		r := wire.NewReader(c, wire.ReaderOptions{})
		if f, err := r.Next(); err == nil {
			answered++
			if answered == 1 {
				t.Logf("first answer: status %d, %q", f.Status, f.Body)
			}
		}
	}
	t.Logf("%d connections each sent %d bytes inflating to %d; heap in use after a GC, connections open: %.1f MiB; %d answered (inflated) instead of closed",
		len(conns), len(frame), inflated, mibs(live), answered)
	if answered > 0 {
		t.Errorf("the server inflated lz4 it never negotiated and answered %d of %d such requests; want the connections closed", answered, len(conns))
	}
	tg.check()
}

// manyKeys returns n metadata pairs: one-letter keys after "k", empty
// values.
func manyKeys(n int) []string {
	md := make([]string, 0, 2*n)
	for i := range n {
		md = append(md, "k"+string(rune('a'+i%26)), "")
	}
	return md
}

// 100,000 metadata keys: over the metadata size limit the connection is
// closed; under it (a server whose limit fits them) the call is refused
// with InvalidArgument past wire.MaxMetadataPairs and the connection
// serves on.
func TestMetadataKeys(t *testing.T) {
	t.Run("over the size limit", func(t *testing.T) {
		tg := newTarget(t, heapLimit)
		frame := request(1, sayHello, manyKeys(100_000), nil)
		var conns []net.Conn
		for i := range 20 {
			c, err := tg.open(attackerIP(i))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(frame); err != nil && !closed(err) {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		n, last := awaitCloseAll(conns, closeBound)
		t.Logf("%d connections each sent 100,000 keys (a %d-byte frame): %d closed, the last %v after the attack started", len(conns), len(frame), n, last.Sub(tg.start).Round(time.Millisecond))
		if n != len(conns) {
			t.Errorf("%d of %d connections closed", n, len(conns))
		}
		tg.check()
	})
	t.Run("within a raised size limit", func(t *testing.T) {
		tg := newTarget(t, heapLimit, rt.WithMaxMetadataSize(1<<20))
		frame := request(1, sayHello, manyKeys(100_000), nil)
		c, err := tg.open(attackerIP(0))
		if err != nil {
			t.Fatal(err)
		}
		const rounds = 50
		start := time.Now()
		go func() {
			for range rounds {
				if _, err := c.Write(frame); err != nil {
					return
				}
			}
			_, _ = c.Write(hello(2, "after"))
		}()
		r := wire.NewReader(c, wire.ReaderOptions{})
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		for i := 0; i <= rounds; i++ {
			f, err := r.Next()
			if err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
			switch {
			case i < rounds && rt.Code(f.Status) != rt.InvalidArgument:
				t.Fatalf("answer %d to 100,000 keys: status %v (%q), want InvalidArgument", i, rt.Code(f.Status), f.Body)
			case i == rounds && f.Status != 0:
				t.Fatalf("the call after them: status %v (%q), want OK", rt.Code(f.Status), f.Body)
			}
		}
		t.Logf("%d frames of 100,000 keys (%d bytes each) refused with InvalidArgument in %v; the connection served the next call",
			rounds, len(frame), time.Since(start).Round(time.Millisecond))
		tg.check()
	})
}

// Request ids reused while in flight: every request is answered, and
// closing the connection cancels every call it started (issue 11's
// "reused request ids").
func TestReusedRequestIDs(t *testing.T) {
	t.Run("answered", func(t *testing.T) {
		tg := newTarget(t, heapLimit)
		c, err := tg.open(attackerIP(0))
		if err != nil {
			t.Fatal(err)
		}
		const n = 10_000
		frame := hello(7, "again")
		batch := bytes.Repeat(frame, n)
		go func() { _, _ = c.Write(batch) }()
		r := wire.NewReader(c, wire.ReaderOptions{})
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		refusedN := 0
		for i := range n {
			f, err := r.Next()
			if err != nil {
				t.Fatalf("answer %d of %d: %v", i, n, err)
			}
			switch {
			case f.ID != 7:
				t.Fatalf("answer %d: id %d, want 7", i, f.ID)
			case rt.Code(f.Status) == rt.InvalidArgument:
				refusedN++ // the id was in use by a call still in flight
			case f.Status != 0:
				t.Fatalf("answer %d: status %v, want OK or InvalidArgument", i, rt.Code(f.Status))
			}
		}
		t.Logf("%d requests with id 7 on one connection: all answered (%d refused while the id was in use)", n, refusedN)
		tg.check()
	})
	t.Run("canceled when the connection closes", func(t *testing.T) {
		tg := newTarget(t, heapLimit)
		c, err := tg.open(attackerIP(0))
		if err != nil {
			t.Fatal(err)
		}
		// Three calls that run until canceled, two of them with id 5:
		// the second is refused while the first holds the id.
		if _, err := c.Write(append(append(hello(5, nameWait), hello(5, nameWait)...), hello(6, nameWait)...)); err != nil {
			t.Fatal(err)
		}
		r := wire.NewReader(c, wire.ReaderOptions{})
		_ = c.SetReadDeadline(time.Now().Add(closeBound))
		f, err := r.Next()
		if err != nil || f.ID != 5 || rt.Code(f.Status) != rt.InvalidArgument {
			t.Fatalf("answer to the second call with id 5: %+v, %v; want InvalidArgument", f, err)
		}
		if !poll(closeBound, func() bool { return tg.held.running.Load() == 2 }) {
			t.Fatalf("%d of 2 calls started", tg.held.running.Load())
		}
		c.Close()
		const bound = 2 * time.Second
		ended := poll(bound, func() bool { return tg.held.running.Load() == 0 })
		t.Logf("2 calls (ids 5, 6) running, a third with id 5 refused, connection closed: %d still running after %v", tg.held.running.Load(), bound)
		if !ended {
			t.Errorf("%d calls still running %v after their connection closed", tg.held.running.Load(), bound)
		}
		tg.check()
	})
}

// mdRefused is the response metadata key that marks a call the server
// refused before running it, so that the client may retry it elsewhere.
const mdRefused = "yrpc-refused"

// refused reports whether frame f is a refusal: a call that did not run.
func refused(f *wire.Frame) bool {
	kv, err := wire.ParseMetadata(f.Metadata, nil)
	if err != nil {
		return false
	}
	return rt.MD(kv).Get(mdRefused) != ""
}
