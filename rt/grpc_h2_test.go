package rt_test

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/internal/h2"
)

// HTTP/2 protocol tests of the server's gRPC endpoint, with a raw client
// (h2Client) that sees every frame.

// The server's preface: SETTINGS (stream window, header list size,
// concurrent streams), the connection window's update, the
// acknowledgement of the client's SETTINGS; PINGs are answered with
// their data.
func TestH2SettingsAndPing(t *testing.T) {
	e := newGRPCEnv(t)
	hc := dialH2(t, e.addr)
	// The streams' initial windows leave room in the connection's for
	// one more message of the largest size (see
	// TestH2ConcurrentRequestsOverTheWindow).
	if got := hc.serverSettings; got[h2.SettingInitialWindowSize] < 1<<10 || got[h2.SettingMaxConcurrentStreams] != rt.DefaultMaxCallsPerConn ||
		got[h2.SettingMaxHeaderListSize] == 0 ||
		int(got[h2.SettingInitialWindowSize])*rt.DefaultMaxCallsPerConn+4<<20 > rt.DefaultMaxRequestBytes {
		t.Errorf("server settings %v", got)
	}
	var window uint32
	acked := false
	for !acked || window == 0 {
		switch f := hc.next(); {
		case f.Type == h2.FrameWindowUpdate && f.StreamID == 0:
			window = f.Increment
		case f.Type == h2.FrameSettings && f.Has(h2.FlagAck):
			acked = true
		default:
			t.Fatalf("unexpected %s frame", f.Type)
		}
	}
	if window+h2.InitialWindow != rt.DefaultMaxRequestBytes {
		t.Errorf("connection window %d, want Limits.MaxRequestBytes", window+h2.InitialWindow)
	}
	data := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	hc.write(h2.AppendPing(nil, false, data))
	if f := hc.next(); f.Type != h2.FramePing || !f.Has(h2.FlagAck) || f.PingData != data {
		t.Errorf("PING answered with %s %v", f.Type, f.PingData)
	}
}

// The server sends no more DATA than the client's stream and connection
// windows allow, and the rest (then the trailers) once they grow; the
// client's windows may start small.
func TestH2SendFlowControl(t *testing.T) {
	e := newGRPCEnv(t)
	hc := dialH2(t, e.addr, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 100})
	big := strings.Repeat("x", 1000)
	hc.write(message(hc.request(nil, 1, "/test.Echo/Echo", false), 1, true, big))
	var got int
	for got < 100 {
		switch f := hc.next(); {
		case f.Type == h2.FrameData && f.StreamID == 1:
			got += len(f.Data)
		case f.Type == h2.FrameHeaders && f.StreamID == 1 && !f.Has(h2.FlagEndStream):
		case f.StreamID == 0 && f.Type != h2.FramePing && f.Type != h2.FrameGoAway:
		default:
			t.Fatalf("unexpected %s frame on stream %d", f.Type, f.StreamID)
		}
	}
	// No more data before the window grows: a PING's answer comes first.
	hc.write(h2.AppendPing(nil, false, [8]byte{9}))
	if f := hc.next(); f.Type != h2.FramePing || got != 100 {
		t.Fatalf("%s frame on stream %d after %d bytes, want the PING's answer after 100", f.Type, f.StreamID, got)
	}
	hc.write(h2.AppendWindowUpdate(nil, 1, 5000))
	r := hc.read(1, nil)
	if len(r.data)+got != len(big)+grpcwire.HeaderLen || r.status() != "0" {
		t.Errorf("after the update: %d more bytes, status %q", len(r.data), r.status())
	}

	// The connection's window (65,535 until the client grows it). A
	// server without MAX_CONCURRENT_STREAMS gives each stream a window
	// of 1 MiB from the start.
	e = newGRPCEnv(t, rt.WithLimits(rt.Limits{MaxCallsPerConn: -1}))
	hc = dialH2(t, e.addr, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 1 << 20})
	huge := strings.Repeat("y", 100<<10)
	b := hc.request(nil, 1, "/test.Echo/Echo", false)
	// The request: within the server's stream window (1 MiB), in frames
	// of 16 KiB.
	body := append(grpcwire.AppendHeader(nil, 0, len(huge)), huge...)
	for len(body) > 0 {
		n := min(len(body), h2.MinMaxFrameSize)
		b = h2.AppendData(b, 1, n == len(body), body[:n])
		body = body[n:]
	}
	hc.write(b)
	got = 0
	for got < h2.InitialWindow {
		if f := hc.next(); f.Type == h2.FrameData {
			got += len(f.Data)
		}
	}
	hc.write(h2.AppendPing(nil, false, [8]byte{7}))
	for f := hc.next(); f.Type != h2.FramePing; f = hc.next() {
		if f.Type == h2.FrameData {
			t.Fatalf("DATA past the connection's window of 65,535 bytes")
		}
	}
	hc.write(h2.AppendWindowUpdate(nil, 0, 1<<20))
	r = hc.read(1, nil)
	if got+len(r.data) != len(huge)+grpcwire.HeaderLen || r.status() != "0" {
		t.Errorf("after the connection's update: %d bytes in all, status %q", got+len(r.data), r.status())
	}
}

// Requests larger than the server's windows arrive (the server grants
// more as it reads), and so do answers larger than the client's
// default windows: a 3 MiB message echoed through net/http's client.
func TestH2LargeMessages(t *testing.T) {
	e := newGRPCEnv(t)
	big := strings.Repeat("0123456789abcdef", 3<<16)
	for range 3 {
		if got, err := e.g.unary(ctxT(t), "/test.Echo/Echo", big); err != nil || got != big {
			t.Fatalf("3 MiB echo: %d bytes, %v", len(got), err)
		}
	}
}

// Padding (on HEADERS and DATA), priority fields and PRIORITY frames are
// taken and ignored; a header block split over CONTINUATION frames is one
// block; a call's request may end with an empty DATA frame or trailers.
func TestH2FramingVariants(t *testing.T) {
	e := newGRPCEnv(t)
	hc := dialH2(t, e.addr)
	// HEADERS with padding and priority.
	block := hc.request(nil, 1, "/test.Echo/Echo", false)[h2.FrameHeaderLen:]
	p := append([]byte{3}, 0, 0, 0, 0, 16) // pad length, dependency 0, weight
	p = append(append(p, block...), 0, 0, 0)
	b := h2.AppendFrameHeader(nil, h2.FrameHeaders, h2.FlagEndHeaders|h2.FlagPadded|h2.FlagPriority, 1, len(p))
	b = append(b, p...)
	// PRIORITY frames, on the open stream and on an idle one.
	b = append(h2.AppendFrameHeader(b, h2.FramePriority, 0, 1, 5), 0, 0, 0, 0, 1)
	b = append(h2.AppendFrameHeader(b, h2.FramePriority, 0, 9, 5), 0x80, 0, 0, 1, 1)
	// DATA with padding.
	m := append(grpcwire.AppendHeader(nil, 0, 6), "padded"...)
	d := append(append([]byte{5}, m...), 0, 0, 0, 0, 0)
	b = append(h2.AppendFrameHeader(b, h2.FrameData, h2.FlagPadded|h2.FlagEndStream, 1, len(d)), d...)
	hc.write(b)
	hc.echo(1, "padded")

	// A block in 7-byte pieces: HEADERS and CONTINUATION frames.
	b = hc.headerBlock(nil, 3, false, 7, ":method", "POST", ":scheme", "http", ":path", "/test.Echo/Echo", ":authority", "x",
		"content-type", "application/grpc", "x-long", strings.Repeat("v", 100))
	if binary.BigEndian.Uint32(append([]byte{0}, b[:3]...)) != 7 || b[3+7+2] == byte(h2.FrameHeaders) {
		t.Fatal("the test's block is not split")
	}
	hc.write(message(b, 3, true, "split"))
	hc.echo(3, "split")

	// The message, then an empty DATA frame ending the request.
	hc.write(h2.AppendData(message(hc.request(nil, 5, "/test.Echo/Echo", false), 5, false, "then empty"), 5, true, nil))
	hc.echo(5, "then empty")

	// The message, then trailers ending the request.
	b = message(hc.request(nil, 7, "/test.Echo/Echo", false), 7, false, "then trailers")
	hc.write(hc.headerBlock(b, 7, true, h2.MinMaxFrameSize, "x-trailer", "1"))
	hc.echo(7, "then trailers")
}

// Errors answered without a message are Trailers-Only: one HEADERS frame
// with END_STREAM and the status; when the client has not ended its
// request, RST_STREAM(NO_ERROR) follows.
func TestH2TrailersOnly(t *testing.T) {
	e := newGRPCEnv(t)
	hc := dialH2(t, e.addr)
	hc.write(hc.request(nil, 1, "/test.Echo/Nope", false))
	r := hc.read(1, nil)
	if len(r.frames) != 1 || r.frames[0] != h2.FrameHeaders || r.status() != "12" || r.headers[":status"] != "200" ||
		r.headers["content-type"] != "application/grpc" || !strings.Contains(r.headers["grpc-message"], "Nope") {
		t.Errorf("unknown method: frames %v, headers %v", r.frames, r.headers)
	}
	if f := hc.next(); f.Type != h2.FrameRSTStream || f.StreamID != 1 || f.ErrCode != h2.ErrNo {
		t.Errorf("after the answer: %s %s on stream %d, want RST_STREAM NO_ERROR", f.Type, f.ErrCode, f.StreamID)
	}
	hc.write(message(hc.request(nil, 3, "/test.Echo/Echo", false), 3, true, "fail:5:gone"))
	r = hc.read(3, nil)
	if len(r.frames) != 1 || r.status() != "5" || r.headers["grpc-message"] != "gone" {
		t.Errorf("handler's error: frames %v, headers %v", r.frames, r.headers)
	}
	// A request that is not gRPC: an HTTP error with a body.
	hc.write(hc.headerBlock(nil, 5, true, h2.MinMaxFrameSize, ":method", "GET", ":scheme", "http", ":path", "/test.Echo/Echo", ":authority", "x"))
	if r = hc.read(5, nil); r.headers[":status"] != "405" || r.headers["allow"] != "POST" || !strings.Contains(string(r.data), "POST") {
		t.Errorf("GET: headers %v, body %q", r.headers, r.data)
	}
}

// A client's RST_STREAM cancels the call's context; nothing more is sent
// on the stream, and the connection goes on.
func TestH2ClientReset(t *testing.T) {
	e := newGRPCEnv(t)
	hc := dialH2(t, e.addr)
	hc.write(message(hc.request(nil, 1, "/test.Echo/Echo", false), 1, true, "sleep"))
	<-e.impl.started
	hc.write(h2.AppendRSTStream(nil, 1, h2.ErrCancel))
	if err := <-e.impl.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("handler ended with %v", err)
	}
	hc.write(message(hc.request(nil, 3, "/test.Echo/Echo", false), 3, true, "after"))
	r := hc.read(3, func(f *h2.Frame) {
		if f.StreamID == 1 {
			t.Errorf("%s frame on the reset stream", f.Type)
		}
	})
	if m := r.messages(t); len(m) != 1 || m[0] != "after" {
		t.Errorf("after the reset: %q", m)
	}
}

// Shutdown sends GOAWAY naming the last stream admitted; that stream's
// call still completes, and a stream opened after it is refused
// (REFUSED_STREAM: the client may retry it elsewhere).
func TestH2GoAwayOnShutdown(t *testing.T) {
	checkLeaks(t)
	srv := rt.NewServer()
	impl := newTestImpl()
	srv.RegisterService(&testDesc, impl)
	addr := serve(t, srv)
	hc := dialH2(t, addr)
	hc.write(message(hc.request(nil, 1, "/test.Echo/Echo", false), 1, true, "delay:300ms"))
	hc.write(message(hc.request(nil, 3, "/test.Echo/Echo", false), 3, true, "sleep"))
	<-impl.started
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	var gone *h2.Frame
	for gone == nil {
		if f := hc.next(); f.Type == h2.FrameGoAway {
			gone = f
		} else if f.StreamID != 0 {
			hc.take(f)
		}
	}
	if gone.LastStreamID != 3 || gone.ErrCode != h2.ErrNo {
		t.Errorf("GOAWAY last stream %d, %s", gone.LastStreamID, gone.ErrCode)
	}
	hc.write(message(hc.request(nil, 5, "/test.Echo/Echo", false), 5, true, "late"))
	if r5 := hc.read(5, func(*h2.Frame) {}); !r5.rst || r5.reset != h2.ErrRefusedStream {
		t.Errorf("stream after GOAWAY: %+v", r5)
	}
	hc.echo(1, "delay:300ms")
	hc.write(h2.AppendRSTStream(nil, 3, h2.ErrCancel))
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// Beyond MAX_CONCURRENT_STREAMS (Limits.MaxCallsPerConn), a stream is
// refused with REFUSED_STREAM.
func TestH2MaxConcurrentStreams(t *testing.T) {
	e := newGRPCEnv(t, rt.WithLimits(rt.Limits{MaxCallsPerConn: 2}))
	hc := dialH2(t, e.addr)
	for _, id := range []uint32{1, 3} {
		hc.write(message(hc.request(nil, id, "/test.Echo/Echo", false), id, true, "sleep"))
		<-e.impl.started
	}
	hc.write(message(hc.request(nil, 5, "/test.Echo/Echo", false), 5, true, "x"))
	if r := hc.read(5, nil); !r.rst || r.reset != h2.ErrRefusedStream {
		t.Errorf("third stream: %+v", r)
	}
	hc.write(h2.AppendRSTStream(h2.AppendRSTStream(nil, 1, h2.ErrCancel), 3, h2.ErrCancel))
	for range 2 {
		<-e.impl.ended
	}
}

// A unary call whose request does not arrive within its deadline (or
// Limits.FirstFrameTimeout) fails with DeadlineExceeded.
func TestH2RequestLate(t *testing.T) {
	e := newGRPCEnv(t)
	hc := dialH2(t, e.addr)
	start := time.Now()
	hc.write(hc.request(nil, 1, "/test.Echo/Echo", false, "grpc-timeout", "100m"))
	if r := hc.read(1, nil); r.status() != "4" {
		t.Errorf("late request: %v", r.headers)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("answered after %v", d)
	}
}

// A client silent past WithHeartbeat is pinged, and closed once silent
// for three periods.
func TestH2Heartbeat(t *testing.T) {
	e := newGRPCEnv(t, rt.WithHeartbeat(50*time.Millisecond))
	hc := dialH2(t, e.addr)
	hc.write(message(hc.request(nil, 1, "/test.Echo/Echo", false), 1, true, "hb"))
	hc.echo(1, "hb")
	pinged := false
	for {
		f, err := hc.tryNext()
		if err != nil {
			break // closed
		}
		pinged = pinged || f.Type == h2.FramePing && !f.Has(h2.FlagAck)
	}
	if !pinged {
		t.Error("closed without a PING")
	}
}
