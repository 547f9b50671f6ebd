package rt_test

import (
	"net"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/internal/h2"
)

// Connection errors of RFC 9113: the server sends GOAWAY with the error's
// code and closes the connection.
func TestH2ConnectionErrors(t *testing.T) {
	e := newGRPCEnv(t)
	req := func(hc *h2Client, id uint32) []byte { return hc.request(nil, id, "/test.Echo/Echo", false) }
	bigField := strings.Repeat("v", 15000)
	for _, c := range []struct {
		name  string
		frame func(hc *h2Client) []byte
		want  h2.ErrCode
	}{
		{"DATA on an idle stream", func(*h2Client) []byte { return h2.AppendData(nil, 5, true, []byte("x")) }, h2.ErrProtocol},
		{"a stream of even number", func(hc *h2Client) []byte { return req(hc, 2) }, h2.ErrProtocol},
		{"CONTINUATION without HEADERS", func(*h2Client) []byte {
			return h2.AppendFrameHeader(nil, h2.FrameContinuation, h2.FlagEndHeaders, 1, 0)
		}, h2.ErrProtocol},
		{"another frame inside a header block", func(hc *h2Client) []byte {
			b := hc.headerBlock(nil, 1, false, 5, ":method", "POST", ":scheme", "http", ":path", "/a/b")
			return h2.AppendPing(b[:h2.FrameHeaderLen+5], false, [8]byte{})
		}, h2.ErrProtocol},
		{"a frame over the maximum frame size", func(hc *h2Client) []byte {
			return h2.AppendData(req(hc, 1), 1, true, make([]byte, h2.MinMaxFrameSize+1))
		}, h2.ErrFrameSize},
		{"WINDOW_UPDATE of 0 on the connection", func(*h2Client) []byte { return h2.AppendWindowUpdate(nil, 0, 0) }, h2.ErrProtocol},
		{"the connection's window past 2^31-1", func(*h2Client) []byte { return h2.AppendWindowUpdate(nil, 0, h2.MaxWindow) }, h2.ErrFlowControl},
		{"WINDOW_UPDATE on an idle stream", func(*h2Client) []byte { return h2.AppendWindowUpdate(nil, 7, 1) }, h2.ErrProtocol},
		{"RST_STREAM on an idle stream", func(*h2Client) []byte { return h2.AppendRSTStream(nil, 7, h2.ErrCancel) }, h2.ErrProtocol},
		{"RST_STREAM of 3 bytes", func(*h2Client) []byte {
			return append(h2.AppendFrameHeader(nil, h2.FrameRSTStream, 0, 1, 3), 0, 0, 0)
		}, h2.ErrFrameSize},
		{"PING of 7 bytes", func(*h2Client) []byte {
			return append(h2.AppendFrameHeader(nil, h2.FramePing, 0, 0, 7), make([]byte, 7)...)
		}, h2.ErrFrameSize},
		{"SETTINGS_INITIAL_WINDOW_SIZE past 2^31-1", func(*h2Client) []byte {
			return h2.AppendSettings(nil, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 1 << 31})
		}, h2.ErrFlowControl},
		{"SETTINGS_MAX_FRAME_SIZE under 16 KiB", func(*h2Client) []byte {
			return h2.AppendSettings(nil, h2.Setting{ID: h2.SettingMaxFrameSize, Val: 100})
		}, h2.ErrProtocol},
		{"SETTINGS acknowledgement with a payload", func(*h2Client) []byte {
			return append(h2.AppendFrameHeader(nil, h2.FrameSettings, h2.FlagAck, 0, 6), make([]byte, 6)...)
		}, h2.ErrFrameSize},
		{"PUSH_PROMISE", func(*h2Client) []byte {
			return append(h2.AppendFrameHeader(nil, h2.FramePushPromise, h2.FlagEndHeaders, 1, 4), 0, 0, 0, 2)
		}, h2.ErrProtocol},
		{"an HPACK index past the tables", func(*h2Client) []byte {
			return append(h2.AppendFrameHeader(nil, h2.FrameHeaders, h2.FlagEndHeaders, 1, 1), 0x80|70)
		}, h2.ErrCompression},
		{"a header block over the limit (CONTINUATION flood)", func(hc *h2Client) []byte {
			b := hc.headerBlock(nil, 1, true, h2.MinMaxFrameSize, ":method", "POST", ":scheme", "http", ":path", "/a/b")
			b[4] &^= h2.FlagEndHeaders
			for range 6 {
				start := len(b)
				hc.enc.Start(b)
				hc.enc.Field("x-flood", bigField, true)
				b = hc.enc.End(1, false, h2.MinMaxFrameSize)
				b[start+3], b[start+4] = byte(h2.FrameContinuation), 0
			}
			return b
		}, h2.ErrEnhanceYourCalm},
	} {
		t.Run(c.name, func(t *testing.T) {
			hc := dialH2(t, e.addr)
			hc.write(c.frame(hc))
			g := hc.goAway()
			if g == nil || g.ErrCode != c.want {
				t.Fatalf("GOAWAY %+v, want %s", g, c.want)
			}
			if _, err := hc.tryNext(); err == nil {
				t.Error("the connection stays open after GOAWAY")
			}
		})
	}
}

// Stream errors of RFC 9113 (malformed requests, frames a stream's state
// does not allow): the server resets the stream with the error's code,
// and the connection goes on.
func TestH2StreamErrors(t *testing.T) {
	e := newGRPCEnv(t)
	fields := func(kv ...string) []string {
		return append([]string{":method", "POST", ":scheme", "http", ":path", "/test.Echo/Echo", "content-type", "application/grpc"}, kv...)
	}
	block := func(hc *h2Client, kv ...string) []byte {
		return hc.headerBlock(nil, 1, true, h2.MinMaxFrameSize, kv...)
	}
	for _, c := range []struct {
		name  string
		frame func(hc *h2Client) []byte
		want  h2.ErrCode
	}{
		{"an uppercase field name", func(hc *h2Client) []byte { return block(hc, fields("X-Up", "1")...) }, h2.ErrProtocol},
		{"a connection-specific field", func(hc *h2Client) []byte { return block(hc, fields("connection", "keep-alive")...) }, h2.ErrProtocol},
		{"te other than trailers", func(hc *h2Client) []byte { return block(hc, fields("te", "gzip")...) }, h2.ErrProtocol},
		{"no :path", func(hc *h2Client) []byte { return block(hc, ":method", "POST", ":scheme", "http") }, h2.ErrProtocol},
		{"a pseudo-header field after a regular one", func(hc *h2Client) []byte {
			return block(hc, ":method", "POST", "content-type", "application/grpc", ":scheme", "http", ":path", "/a/b")
		}, h2.ErrProtocol},
		{"an unknown pseudo-header field", func(hc *h2Client) []byte { return block(hc, append([]string{":foo", "1"}, fields()...)...) }, h2.ErrProtocol},
		{"a value with a line feed", func(hc *h2Client) []byte { return block(hc, fields("x-a", "b\nc")...) }, h2.ErrProtocol},
		{"content-length other than the data", func(hc *h2Client) []byte {
			return message(hc.headerBlock(nil, 1, false, h2.MinMaxFrameSize, fields("content-length", "3")...), 1, true, "four")
		}, h2.ErrProtocol},
		{"a stream depending on itself (HEADERS)", func(hc *h2Client) []byte {
			b := block(hc, fields()...)
			p := append([]byte{0, 0, 0, 1, 16}, b[h2.FrameHeaderLen:]...)
			return append(h2.AppendFrameHeader(nil, h2.FrameHeaders, h2.FlagEndHeaders|h2.FlagEndStream|h2.FlagPriority, 1, len(p)), p...)
		}, h2.ErrProtocol},
		{"a stream depending on itself (PRIORITY)", func(*h2Client) []byte {
			return append(h2.AppendFrameHeader(nil, h2.FramePriority, 0, 1, 5), 0, 0, 0, 1, 16)
		}, h2.ErrProtocol},
		{"PRIORITY of 4 bytes", func(*h2Client) []byte {
			return append(h2.AppendFrameHeader(nil, h2.FramePriority, 0, 1, 4), 0, 0, 0, 0)
		}, h2.ErrFrameSize},
		{"DATA after the request ended", func(hc *h2Client) []byte {
			return h2.AppendData(message(hc.request(nil, 1, "/test.Echo/Echo", false), 1, true, "delay:10s"), 1, true, []byte{0})
		}, h2.ErrStreamClosed},
		{"trailers without END_STREAM", func(hc *h2Client) []byte {
			b := message(hc.request(nil, 1, "/test.Echo/Echo", false), 1, false, "x")
			return hc.headerBlock(b, 1, false, h2.MinMaxFrameSize, "x-t", "1")
		}, h2.ErrProtocol},
		{"WINDOW_UPDATE of 0 on a stream", func(hc *h2Client) []byte {
			return h2.AppendWindowUpdate(message(hc.request(nil, 1, "/test.Echo/Echo", false), 1, true, "delay:10s"), 1, 0)
		}, h2.ErrProtocol},
	} {
		t.Run(c.name, func(t *testing.T) {
			hc := dialH2(t, e.addr)
			hc.write(c.frame(hc))
			r := hc.read(1, nil)
			if !r.rst || r.reset != c.want {
				t.Fatalf("stream 1: %+v, want RST_STREAM %s", r, c.want)
			}
			hc.write(message(hc.request(nil, 3, "/test.Echo/Echo", false), 3, true, "after"))
			hc.echo(3, "after")
		})
	}
}

// Request headers past the metadata limit fail the call with
// ResourceExhausted; the connection goes on.
func TestH2HeadersTooLarge(t *testing.T) {
	e := newGRPCEnv(t, rt.WithMaxMetadataSize(1<<10))
	hc := dialH2(t, e.addr)
	hc.write(message(hc.request(nil, 1, "/test.Echo/Echo", false, "x-big", strings.Repeat("b", 4<<10)), 1, true, "x"))
	if r := hc.read(1, nil); r.status() != "8" || !strings.Contains(r.headers["grpc-message"], "WithMaxMetadataSize") || !strings.HasPrefix(r.headers["grpc-message"], "test.Echo/Echo: ") {
		t.Errorf("headers over the limit: %v", r.headers)
	}
	hc.write(message(hc.request(nil, 3, "/test.Echo/Echo", false), 3, true, "after"))
	hc.echo(3, "after")
}

// A client that sends past the connection's window (Limits.MaxRequestBytes,
// or one message more) is sent GOAWAY(FLOW_CONTROL_ERROR).
func TestH2ConnectionWindowViolation(t *testing.T) {
	// Without MAX_CONCURRENT_STREAMS, the stream's window (1 MiB) is larger
	// than the connection's.
	e := newGRPCEnv(t, rt.WithMaxFrameSize(1<<10), rt.WithLimits(rt.Limits{MaxRequestBytes: 1, MaxCallsPerConn: -1}))
	hc := dialH2(t, e.addr)
	b := message(hc.request(nil, 1, "/test.Echo/Echo", false), 1, false, "first")
	for range 5 { // 80 KiB: past the window of 1 KiB + 64 KiB
		b = h2.AppendData(b, 1, false, make([]byte, h2.MinMaxFrameSize))
	}
	hc.write(b)
	if g := hc.goAway(); g == nil || g.ErrCode != h2.ErrFlowControl {
		t.Errorf("GOAWAY %+v, want FLOW_CONTROL_ERROR", g)
	}
}

// A connection whose first frame is not SETTINGS is sent
// GOAWAY(PROTOCOL_ERROR).
func TestH2FirstFrameNotSettings(t *testing.T) {
	e := newGRPCEnv(t)
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hc := &h2Client{t: t, c: c}
	hc.rd = dialH2Reader(c)
	hc.write(h2.AppendPing([]byte(h2.ClientPreface), false, [8]byte{}))
	if g := hc.goAway(); g == nil || g.ErrCode != h2.ErrProtocol {
		t.Errorf("GOAWAY %+v, want PROTOCOL_ERROR", g)
	}
}

// Request bytes that come after a call's answer (a unary message over
// the size limit, a stream its handler ended) are dropped and their
// credit given back: the connection's window does not shrink with them.
func TestH2WindowAfterEarlyAnswers(t *testing.T) {
	e := newGRPCEnv(t, rt.WithMaxFrameSize(1<<10), rt.WithLimits(rt.Limits{MaxRequestBytes: 1})) // a window of 65 KiB
	hc := dialH2(t, e.addr)
	junk := make([]byte, 15<<10)
	for i, id := range []uint32{1, 3, 5, 7, 9, 11} {
		var b []byte
		want := "8" // ResourceExhausted
		if i%2 == 0 {
			b = h2.AppendData(hc.request(nil, id, "/test.Echo/Echo", false), id, false, grpcwire.AppendHeader(nil, 0, 50<<10))
		} else {
			b, want = message(hc.request(nil, id, "/grpctest.Probe/Chat", false), id, false, "bye"), "0"
		}
		hc.spend(len(b) - h2.FrameHeaderLen*2) // (at most the DATA)
		hc.write(b)
		for range 4 { // a client keeps to the window: the server gives back what it drops
			hc.spend(len(junk))
			hc.write(h2.AppendData(nil, id, false, junk))
		}
		hc.write(h2.AppendData(nil, id, true, nil))
		if r := hc.read(id, func(*h2.Frame) {}); r.status() != want {
			t.Fatalf("stream %d: status %q, want %s", id, r.status(), want)
		}
	}
	hc.write(message(hc.request(nil, 13, "/test.Echo/Echo", false), 13, true, "after"))
	hc.echo(13, "after")
}

// A grpc-encoding the server does not take fails the call with
// Unimplemented, naming the method and saying what it takes.
func TestH2UnknownEncoding(t *testing.T) {
	e := newGRPCEnv(t)
	hc := dialH2(t, e.addr)
	hc.write(message(hc.request(nil, 1, "/test.Echo/Echo", false, "grpc-encoding", "br"), 1, true, "x"))
	r := hc.read(1, nil)
	if r.status() != "12" || !strings.HasPrefix(r.headers["grpc-message"], "test.Echo/Echo: ") || r.headers["grpc-accept-encoding"] == "" {
		t.Errorf("grpc-encoding br: %v", r.headers)
	}
}
