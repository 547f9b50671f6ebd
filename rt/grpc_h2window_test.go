package rt_test

import (
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/internal/h2"
)

// Concurrent unary requests that together exceed the connection's
// window all arrive, however the client interleaves their DATA frames:
// the server holds each request's bytes until its call ends, so it
// must never let incomplete requests take the whole window (none could
// then complete, and every call would wait for Limits.FirstFrameTimeout).
// The client here sends round-robin, 16 KiB per stream per turn, as
// grpc-go does, within the windows the server grants.
func TestH2ConcurrentRequestsOverTheWindow(t *testing.T) {
	const (
		maxMsg  = 256 << 10
		streams = 6
		size    = 200 << 10 // streams*size is over the 512 KiB window
	)
	e := newGRPCEnv(t, rt.WithMaxFrameSize(maxMsg), rt.WithLimits(rt.Limits{MaxRequestBytes: 512 << 10, MaxCallsPerConn: 16, FirstFrameTimeout: 5 * time.Second}))
	// The client takes all the answers, and sends what the server allows.
	hc := dialH2(t, e.addr, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 1 << 30})
	hc.write(h2.AppendWindowUpdate(nil, 0, 1<<30))
	initial := int(hc.serverSettings[h2.SettingInitialWindowSize])
	if initial == 0 {
		initial = h2.InitialWindow
	}
	type call struct {
		id   uint32
		body []byte // what is left to send
		win  int    // the stream's send window
		msg  string
	}
	calls := make([]*call, streams)
	byID := map[uint32]*call{}
	var b []byte
	for i := range calls {
		id := uint32(2*i + 1)
		m := strings.Repeat(string(rune('a'+i)), size)
		calls[i] = &call{id: id, body: append(grpcwire.AppendHeader(nil, 0, size), m...), win: initial, msg: m}
		byID[id] = calls[i]
		b = hc.request(b, id, "/test.Echo/Echo", false)
	}
	hc.write(b)
	done := map[uint32]*h2Response{}
	for len(done) < streams {
		// Send what the windows allow, round-robin.
		for sent := true; sent; {
			sent = false
			for _, c := range calls {
				n := min(len(c.body), 16<<10, c.win, hc.credit)
				if n == 0 && len(c.body) > 0 {
					continue
				}
				if c.body == nil {
					continue
				}
				end := n == len(c.body)
				hc.write(h2.AppendData(nil, c.id, end, c.body[:n]))
				c.body, c.win, hc.credit = c.body[n:], c.win-n, hc.credit-n
				if end {
					c.body = nil
				}
				sent = true
			}
		}
		// Then take what the server sends: window updates, answers.
		f := hc.next()
		switch {
		case f.Type == h2.FrameWindowUpdate && f.StreamID == 0:
			hc.credit += int(f.Increment)
		case f.Type == h2.FrameWindowUpdate:
			if c := byID[f.StreamID]; c != nil {
				c.win += int(f.Increment)
			}
		case f.Type == h2.FramePing && !f.Has(h2.FlagAck):
			hc.write(h2.AppendPing(nil, true, f.PingData))
		case f.Type == h2.FrameGoAway:
			t.Fatalf("GOAWAY %s %q", f.ErrCode, f.Data)
		case f.StreamID != 0:
			hc.take(f)
			if r := hc.streams[f.StreamID]; r != nil && r.ended && done[f.StreamID] == nil {
				done[f.StreamID] = r
				delete(hc.streams, f.StreamID)
			}
		}
	}
	for _, c := range calls {
		r := done[c.id]
		if got := r.messages(t); r.status() != "0" || len(got) != 1 || got[0] != c.msg {
			t.Errorf("stream %d: status %q (%s), %d bytes back", c.id, r.status(), r.headers["grpc-message"], len(r.data))
		}
	}
}

// A response larger than the client's frame size ends with one trailers
// block, and nothing comes on its stream after END_STREAM (a HEADERS
// frame on a closed stream is a connection error to strict clients).
// Before, such answers sent their trailers twice.
func TestH2LargeAnswerEndsOnce(t *testing.T) {
	e := newGRPCEnv(t, rt.WithLimits(rt.Limits{MaxCallsPerConn: -1})) // streams' windows of 1 MiB
	hc := dialH2(t, e.addr)
	big := strings.Repeat("z", 40<<10) // over the 16 KiB frames, within the windows
	b := hc.request(nil, 1, "/test.Echo/Echo", false)
	for body := append(grpcwire.AppendHeader(nil, 0, len(big)), big...); len(body) > 0; {
		n := min(len(body), h2.MinMaxFrameSize)
		b = h2.AppendData(b, 1, n == len(body), body[:n])
		body = body[n:]
	}
	hc.write(b)
	hc.echo(1, big)
	hc.write(h2.AppendPing(nil, false, [8]byte{4, 2}))
	for {
		f := hc.next()
		if f.Type == h2.FramePing && f.Has(h2.FlagAck) {
			break
		}
		if f.StreamID == 1 {
			t.Errorf("%s frame (flags %#x) on stream 1 after its end", f.Type, f.Flags)
		}
	}
}

// holdDesc is a service whose client stream Sink reads nothing until
// release is closed (or the stream ends), then ends with an empty answer.
func holdDesc(release <-chan struct{}) *rt.ServiceDesc {
	return &rt.ServiceDesc{
		Name: "grpctest.Hold",
		Methods: []rt.MethodDesc{{
			Name: "Sink", FullName: "grpctest.Hold/Sink", ID: 0x3001, Stream: rt.ClientStreaming,
			NewRequest: func() rt.Message { return new(msg) }, NewResponse: func() rt.Message { return new(msg) },
			HandleStream: func(_ any, ss rt.ServerStreamer) error {
				select {
				case <-release:
				case <-ss.Context().Done():
				}
				return nil
			},
		}},
		MethodIndex: func(id uint32) int {
			if id == 0x3001 {
				return 0
			}
			return -1
		},
	}
}

// dialHold serves grpctest.Hold, whose handlers read nothing until the
// test ends, with a connection window of window bytes, and connects a raw
// HTTP/2 client that lets the server send all it wants; it returns the
// client and a stream's initial send window.
func dialHold(t *testing.T, window int) (*h2Client, int) {
	release := make(chan struct{})
	e := newGRPCEnvWith(t, func(s *rt.Server) { s.RegisterService(holdDesc(release), struct{}{}) },
		rt.WithMaxFrameSize(64<<10), rt.WithLimits(rt.Limits{MaxRequestBytes: window, MaxCallsPerConn: 16}))
	t.Cleanup(func() { close(release) }) // before the server closes
	hc := dialH2(t, e.addr, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 1 << 30})
	hc.write(h2.AppendWindowUpdate(nil, 0, 1<<30))
	initial := int(hc.serverSettings[h2.SettingInitialWindowSize])
	if initial == 0 {
		initial = h2.InitialWindow
	}
	return hc, initial
}

// A stream whose handler does not read holds up only itself: its bytes
// leave the connection's window as they arrive (the stream's own window,
// given back only as the handler reads, bounds what it holds), as in
// HTTP/2 and grpc-go, so that a unary call on the same connection still
// completes. The client sends the stream more than the connection's
// window (512 KiB here), then makes the call. Before, the unread bytes
// held the connection's window until the handler read them: the stream
// took all of it and every other call of the connection stalled.
func TestH2UnreadStreamDoesNotStallTheConnection(t *testing.T) {
	const (
		window = 512 << 10 // the connection's receive window
		total  = 768 << 10 // sent on the stream: over the connection's window, within the stream's
	)
	hc, granted := dialHold(t, window) // granted to stream 1, in all
	swin := granted                    // stream 1's send window
	hc.write(hc.request(nil, 1, "/grpctest.Hold/Sink", false))
	chunk := make([]byte, 16<<10)
	start := time.Now()
	for sent := 0; sent < total; {
		if n := min(len(chunk), total-sent, swin, hc.credit); n > 0 {
			hc.write(h2.AppendData(nil, 1, false, chunk[:n]))
			sent, swin, hc.credit = sent+n, swin-n, hc.credit-n
			continue
		}
		f, err := hc.tryNext()
		if err != nil || time.Since(start) > 10*time.Second {
			t.Fatalf("stalled after %d of %d bytes on the unread stream: connection window %d, stream window %d (%v)", sent, total, hc.credit, swin, err)
		}
		switch {
		case f.Type == h2.FrameWindowUpdate && f.StreamID == 0:
			hc.credit += int(f.Increment)
		case f.Type == h2.FrameWindowUpdate && f.StreamID == 1:
			swin += int(f.Increment)
			granted += int(f.Increment)
		case f.Type == h2.FramePing && !f.Has(h2.FlagAck):
			hc.write(h2.AppendPing(nil, true, f.PingData))
		case f.Type == h2.FrameGoAway || f.StreamID == 1 && f.Type == h2.FrameRSTStream:
			t.Fatalf("%s %s while sending the unread stream", f.Type, f.ErrCode)
		}
	}
	// A unary call on the same connection completes.
	m := strings.Repeat("u", 4<<10) // within a unary stream's first window
	body := append(grpcwire.AppendHeader(nil, 0, len(m)), m...)
	hc.spend(len(body))
	b := hc.request(nil, 3, "/test.Echo/Echo", false)
	for len(body) > 0 {
		n := min(len(body), h2.MinMaxFrameSize)
		b = h2.AppendData(b, 3, n == len(body), body[:n])
		body = body[n:]
	}
	hc.write(b)
	r := hc.read(3, func(f *h2.Frame) {
		if f.Type == h2.FrameWindowUpdate && f.StreamID == 1 {
			granted += int(f.Increment)
		}
	})
	if got := r.messages(t); r.status() != "0" || len(got) != 1 || got[0] != m {
		t.Errorf("the unary call: status %q (%s), reset %v (%s), %d bytes back", r.status(), r.headers["grpc-message"], r.rst, r.reset, len(r.data))
	}
	// What the unread stream may make the server hold stays bounded by
	// its own window.
	if granted > 1<<20 {
		t.Errorf("the unread stream was granted %d bytes, over its window of 1 MiB", granted)
	}
}

// Streams whose handlers do not read give the connection's window back as
// their bytes arrive only within a budget of the connection's window: all
// of them together make the server hold at most twice MaxRequestBytes
// (the budget, then the window itself), not their streams' windows of
// 1 MiB each. The client sends four unread streams all the server lets
// it, asking with a PING after each round whether more window came (the
// server answers the PING after the updates that the data before it
// earned).
func TestH2UnreadStreamsHoldAtMostTwiceTheWindow(t *testing.T) {
	const window = 256 << 10 // the connection's receive window
	hc, initial := dialHold(t, window)
	swin := map[uint32]int{}
	for _, id := range []uint32{1, 3, 5, 7} {
		swin[id] = initial
		hc.write(hc.request(nil, id, "/grpctest.Hold/Sink", false))
	}
	chunk := make([]byte, 16<<10)
	sent := 0
	for round := 0; ; round++ {
		if round > 1000 {
			t.Fatalf("still sending after %d rounds and %d bytes", round, sent)
		}
		for id := range swin {
			for n := min(len(chunk), swin[id], hc.credit); n > 0; n = min(len(chunk), swin[id], hc.credit) {
				hc.write(h2.AppendData(nil, id, false, chunk[:n]))
				sent, swin[id], hc.credit = sent+n, swin[id]-n, hc.credit-n
			}
		}
		hc.write(h2.AppendPing(nil, false, [8]byte{byte(round)}))
		for acked := false; !acked; {
			f := hc.next()
			switch {
			case f.Type == h2.FrameWindowUpdate && f.StreamID == 0:
				hc.credit += int(f.Increment)
			case f.Type == h2.FrameWindowUpdate:
				swin[f.StreamID] += int(f.Increment)
			case f.Type == h2.FramePing && f.Has(h2.FlagAck):
				acked = true
			case f.Type == h2.FramePing:
				hc.write(h2.AppendPing(nil, true, f.PingData))
			case f.Type == h2.FrameGoAway || f.Type == h2.FrameRSTStream:
				t.Fatalf("%s %s on stream %d after %d bytes", f.Type, f.ErrCode, f.StreamID, sent)
			}
		}
		open := 0 // streams that may send more
		for _, w := range swin {
			open += min(w, 1)
		}
		if hc.credit == 0 || open == 0 {
			break // stalled: the server holds what it lets the client send
		}
	}
	t.Logf("the unread streams took %d bytes with a connection window of %d", sent, window)
	if sent > 2*window {
		t.Errorf("the unread streams made the server hold %d bytes, over twice the connection's window of %d", sent, window)
	}
	if sent <= window {
		t.Errorf("the unread streams took %d bytes: none left the connection's window of %d as they came", sent, window)
	}
}
