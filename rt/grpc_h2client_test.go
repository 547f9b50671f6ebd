package rt_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"

	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/internal/h2"
)

// h2Client is a raw HTTP/2 client for protocol tests: it writes frames
// as a test says and reads the server's one by one, so that a test sees
// every frame (settings, window updates, resets, GOAWAY).
type h2Client struct {
	t   testing.TB
	c   net.Conn
	rd  *h2.Reader
	enc *h2.BlockEncoder
	dec *hpack.Decoder
	f   h2.Frame
	// serverSettings are the server's first SETTINGS.
	serverSettings map[h2.SettingID]uint32
	block          []byte                 // a header block being read
	streams        map[uint32]*h2Response // what came on each stream
	credit         int                    // the server's connection window, as its updates said
}

// dialH2 connects to addr, sends the preface with settings, and reads
// the server's SETTINGS (acknowledged).
func dialH2(t testing.TB, addr string, settings ...h2.Setting) *h2Client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	hc := &h2Client{t: t, c: c, rd: dialH2Reader(c), enc: h2.NewBlockEncoder(),
		dec: hpack.NewDecoder(4096, nil), serverSettings: map[h2.SettingID]uint32{}, streams: map[uint32]*h2Response{}, credit: h2.InitialWindow}
	hc.write(h2.AppendSettings([]byte(h2.ClientPreface), settings...))
	f := hc.next()
	if f.Type != h2.FrameSettings || f.Has(h2.FlagAck) {
		t.Fatalf("the server's first frame is %s, not SETTINGS", f.Type)
	}
	_ = f.Settings(func(s h2.Setting) error {
		hc.serverSettings[s.ID] = s.Val
		return nil
	})
	hc.write(h2.AppendSettingsAck(nil))
	return hc
}

// dialH2Reader returns a frame reader of c.
func dialH2Reader(c net.Conn) *h2.Reader {
	return h2.NewReader(bufio.NewReaderSize(c, 64<<10), h2.MinMaxFrameSize)
}

func (hc *h2Client) write(b []byte) {
	hc.t.Helper()
	_ = hc.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := hc.c.Write(b); err != nil {
		hc.t.Fatalf("write: %v", err)
	}
}

// next reads the next frame (within 10 s).
func (hc *h2Client) next() *h2.Frame {
	hc.t.Helper()
	f, err := hc.tryNext()
	if err != nil {
		hc.t.Fatalf("read: %v", err)
	}
	return f
}

func (hc *h2Client) tryNext() (*h2.Frame, error) {
	_ = hc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := hc.rd.Next(&hc.f); err != nil {
		return nil, err
	}
	return &hc.f, nil
}

// headerBlock appends a HEADERS frame (and CONTINUATION frames of at
// most maxFrame bytes) with fields kv to b.
func (hc *h2Client) headerBlock(b []byte, id uint32, endStream bool, maxFrame int, kv ...string) []byte {
	hc.enc.Start(b)
	for i := 0; i+1 < len(kv); i += 2 {
		hc.enc.Field(kv[i], kv[i+1], false)
	}
	return hc.enc.End(id, endStream, maxFrame)
}

// request appends a gRPC call's HEADERS frame (with extra fields kv).
func (hc *h2Client) request(b []byte, id uint32, path string, endStream bool, kv ...string) []byte {
	fields := append([]string{":method", "POST", ":scheme", "http", ":path", path, ":authority", "test",
		"content-type", "application/grpc", "te", "trailers"}, kv...)
	return hc.headerBlock(b, id, endStream, h2.MinMaxFrameSize, fields...)
}

// message appends a DATA frame holding the gRPC message m.
func message(b []byte, id uint32, endStream bool, m string) []byte {
	return h2.AppendData(b, id, endStream, append(grpcwire.AppendHeader(nil, 0, len(m)), m...))
}

// h2Response is what came on one stream.
type h2Response struct {
	headers, trailers map[string]string
	data              []byte
	reset             h2.ErrCode // with rst
	rst               bool
	frames            []h2.FrameType
	ended             bool // END_STREAM or RST_STREAM came
	endsWithBlock     bool // the last HEADERS frame had END_STREAM
}

// status returns the response's grpc-status (from its trailers or, in a
// Trailers-Only response, its headers).
func (r *h2Response) status() string {
	if v, ok := r.trailers["grpc-status"]; ok {
		return v
	}
	return r.headers["grpc-status"]
}

// messages returns the gRPC messages of the response's data.
func (r *h2Response) messages(t testing.TB) []string {
	var out []string
	for b := r.data; len(b) > 0; {
		_, m, rest, err := grpcwire.Cut(b, 1<<30)
		if err != nil {
			t.Fatalf("response data: %v", err)
		}
		out = append(out, string(m))
		b = rest
	}
	return out
}

// read reads frames until stream id ends (END_STREAM or RST_STREAM),
// answering the server's PINGs and collecting what comes on each stream;
// frames of other streams and of the connection are passed to other,
// if not nil (a GOAWAY fails the test without it).
func (hc *h2Client) read(id uint32, other func(*h2.Frame)) *h2Response {
	hc.t.Helper()
	for {
		if r := hc.streams[id]; r != nil && r.ended {
			delete(hc.streams, id)
			return r
		}
		f := hc.next()
		if f.StreamID != 0 {
			hc.take(f)
		}
		if f.Type == h2.FrameWindowUpdate && f.StreamID == 0 {
			hc.credit += int(f.Increment)
		}
		switch {
		case f.StreamID == id:
		case f.Type == h2.FramePing && !f.Has(h2.FlagAck):
			hc.write(h2.AppendPing(nil, true, f.PingData))
		case other != nil:
			other(f)
		case f.Type == h2.FrameGoAway:
			hc.t.Fatalf("GOAWAY %s %q while reading stream %d", f.ErrCode, f.Data, id)
		}
	}
}

// spend waits until the server's connection window lets n bytes of DATA
// go, and counts them.
func (hc *h2Client) spend(n int) {
	hc.t.Helper()
	for hc.credit < n {
		f := hc.next()
		switch {
		case f.StreamID != 0:
			hc.take(f)
		case f.Type == h2.FrameWindowUpdate:
			hc.credit += int(f.Increment)
		case f.Type == h2.FramePing && !f.Has(h2.FlagAck):
			hc.write(h2.AppendPing(nil, true, f.PingData))
		}
	}
	hc.credit -= n
}

// take adds a frame of a stream to the stream's response.
func (hc *h2Client) take(f *h2.Frame) {
	r := hc.streams[f.StreamID]
	if r == nil {
		r = &h2Response{}
		hc.streams[f.StreamID] = r
	}
	r.frames = append(r.frames, f.Type)
	switch f.Type {
	case h2.FrameData:
		r.data = append(r.data, f.Data...)
		r.ended = f.Has(h2.FlagEndStream)
	case h2.FrameHeaders, h2.FrameContinuation:
		if f.Type == h2.FrameHeaders {
			r.endsWithBlock = f.Has(h2.FlagEndStream)
		}
		hc.block = append(hc.block, f.Data...)
		if !f.Has(h2.FlagEndHeaders) {
			return
		}
		fields, err := hc.dec.DecodeFull(hc.block)
		if err != nil {
			hc.t.Fatalf("decoding the server's header block: %v", err)
		}
		hc.block = hc.block[:0]
		m := map[string]string{}
		for _, hf := range fields {
			m[hf.Name] = hf.Value
		}
		if r.headers == nil {
			r.headers = m
		} else {
			r.trailers = m
		}
		r.ended = r.endsWithBlock
	case h2.FrameRSTStream:
		r.rst, r.reset, r.ended = true, f.ErrCode, true
	}
}

// goAway reads frames until GOAWAY (or the connection's end, then nil).
func (hc *h2Client) goAway() *h2.Frame {
	hc.t.Helper()
	for {
		f, err := hc.tryNext()
		if err != nil {
			return nil
		}
		if f.Type == h2.FrameGoAway {
			g := *f
			g.Data = append([]byte(nil), f.Data...)
			return &g
		}
	}
}

// echo checks that stream id, just sent, echoes m.
func (hc *h2Client) echo(id uint32, m string) {
	hc.t.Helper()
	r := hc.read(id, nil)
	if got := r.messages(hc.t); r.status() != "0" || len(got) != 1 || got[0] != m {
		hc.t.Fatalf("stream %d: status %q, %d messages of %d bytes, want %q", id, r.status(), len(got), len(r.data), m)
	}
}
