package rt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/internal/h2"
	"github.com/yrpc/yrpc/rt/internal/sock"
)

// HTTP/2 sizes of the server's connections.
const (
	// h2StreamWindow is the most a stream may send before the server
	// grants more: SETTINGS_INITIAL_WINDOW_SIZE when no smaller one is
	// needed (see h2Conn.streamWin), and a stream method's window.
	h2StreamWindow = 1 << 20
	// h2MinStreamWindow is the least SETTINGS_INITIAL_WINDOW_SIZE.
	h2MinStreamWindow = 1 << 10
	// h2ReadBuffer is the read buffer: a whole frame of the largest
	// size read (16 KiB) fits, so frames are read in place.
	h2ReadBuffer = 32 << 10
	// h2MinResets is the least rapid-reset budget (see h2Conn.budget).
	h2MinResets = 100
)

// h2Conn is an HTTP/2 connection of the server, which carries gRPC and
// gRPC-Web (see GRPCMode): the protocol on rt/internal/h2's frames and
// internal/hpack's header coding, calls through the same path as yrpc's.
//
// One goroutine reads the connection (readLoop). Unary calls of quick
// methods run on it once their request is in, as yrpc's do (see
// serverConn.readLoop: the same watchdog hands reading to a worker when a
// call stalls); other unary calls and streams run on pooled workers.
// Answers go through the connection's sock.Writer, so that the frames of
// many calls share a syscall. The HPACK encoder and the send windows are
// used only under the writer's lock (in the functions given to its
// Write), which orders header blocks as they go out.
//
// A unary call's request bytes count against the connection's receive
// window, which is Limits.MaxRequestBytes (at least one message of
// WithMaxFrameSize), until the call is done with them: the window bounds
// what a client makes the server hold, instead of stopping the reader.
// A stream method's bytes leave the connection's window as they arrive,
// as in HTTP/2 and grpc-go, and count against the stream's own window
// (h2StreamWindow) until its handler reads them: a handler that does not
// read holds up only its own stream, never the connection's other calls,
// and holds at most that window. The streams' pipes together hold at
// most the connection's window of such bytes: beyond it, a stream's bytes
// keep the connection's window until read, as unary requests do, so that
// a client's streams cannot make the server hold more than twice
// MaxRequestBytes per connection. So that requests still
// incomplete can never take all of it (none could then complete), a
// stream may send only streamWin bytes of its request (the initial
// window, small enough that MAX_CONCURRENT_STREAMS of them leave room for
// one message of the largest size) until the server reserves the rest of
// the window its message needs, which its prefix tells: then it may send
// the whole message. Reservations are made in the order the prefixes
// came, while they fit in resvMax; a call's reservation ends with it.
type h2Conn struct {
	c   *serverConn
	g   *grpcServer
	s   *Server
	w   *sock.Writer
	rd  *h2.Reader
	hd  *h2.HeaderDecoder
	f   h2.Frame // the frame being handled
	out h2Out    // guarded by the writer's lock

	// The reader's.
	maxStreams int        // MAX_CONCURRENT_STREAMS announced; 0: no limit
	maxID      uint32     // the highest stream the client opened
	block      *h2Stream  // the new stream whose header block is being read
	blockID    uint32     // the stream of the header block being read
	blockEnd   bool       // its HEADERS frame ended the stream
	blockBad   bool       // its stream depends on itself
	scratch    h2.Request // a trailers block's
	settled    bool       // the client's first SETTINGS came
	acked      bool       // the client acknowledged the server's SETTINGS
	started    bool       // a call came: FirstFrameTimeout is over
	newAwait   []*h2Stream
	windowSize int   // the connection's receive window
	streamWin  int   // a stream's initial receive window
	resvMax    int64 // what reservations may hold together (see h2Conn)

	inflow h2.Inflow
	// early is how many bytes the streams' pipes hold whose connection
	// window went back as they came (see onData): at most windowSize, so
	// that streams whose handlers do not read hold as much as unary
	// calls may, no more.
	early atomic.Int64
	// budget is how many streams the client may still reset before it
	// is sent GOAWAY (rapid reset, CVE-2023-44487): each reset of a
	// stream not yet answered costs one, each stream answered earns one
	// back, up to the start, twice MaxConcurrentStreams.
	maxBudget int64
	budgetN   atomic.Int64

	mu       sync.Mutex
	streams  map[uint32]*h2Stream // open: not yet answered
	goneAway bool                 // GOAWAY sent
	timer    *time.Timer          // fails unary calls whose request is late
	timerAt  time.Time            // when timer fires; zero: stopped
	resv     int64                // bytes reserved by unary requests
	resvQ    []*h2Stream          // requests waiting for a reservation, in order
}

// h2Out is a connection's send side, guarded by its writer's lock.
type h2Out struct {
	enc      *h2.BlockEncoder
	conn     int64 // the connection's send window
	init     int64 // the client's SETTINGS_INITIAL_WINDOW_SIZE
	maxFrame int   // the client's SETTINGS_MAX_FRAME_SIZE
	blocked  []*h2Stream
}

// serveH2 serves c, whose bytes travel on nc, as an HTTP/2 connection,
// on the calling goroutine.
func (g *grpcServer) serveH2(c *serverConn, nc net.Conn) {
	s := g.s
	o := &s.o
	h := &h2Conn{c: c, g: g, s: s, streams: make(map[uint32]*h2Stream)}
	h.w = sock.NewWriter(nc, sock.WriterOptions{Pool: o.buffers, Timeout: o.writeTimeout})
	h.rd = h2.NewReader(bufio.NewReaderSize(nc, h2ReadBuffer), h2.MinMaxFrameSize)
	maxList := o.maxMD + 1<<10
	h.hd = h2.NewHeaderDecoder(maxList)
	h.out = h2Out{enc: h2.NewBlockEncoder(), conn: h2.InitialWindow, init: h2.InitialWindow, maxFrame: h2.MinMaxFrameSize}
	h.maxStreams = o.limits.MaxCallsPerConn
	h.maxBudget = int64(max(h2MinResets, 2*h.maxStreams))
	h.budgetN.Store(h.maxBudget)
	h.windowSize = min(max(o.limits.MaxRequestBytes, o.maxFrame+64<<10), h2.MaxWindow)
	if o.limits.MaxRequestBytes <= 0 {
		h.windowSize = h2.MaxWindow
	}
	h.inflow.Init(h.windowSize)
	h.streamWin, h.resvMax = h2StreamWindow, int64(h.windowSize)
	if h.maxStreams > 0 && o.limits.MaxRequestBytes > 0 {
		per := (h.windowSize - o.maxFrame - grpcwire.HeaderLen) / h.maxStreams
		h.streamWin = min(h2StreamWindow, max(h2MinStreamWindow, per&^(h2MinStreamWindow-1)))
		h.resvMax = max(0, int64(h.windowSize-h.maxStreams*h.streamWin))
	}
	c.mu.Lock()
	c.w, c.h2 = h.w, h
	c.mu.Unlock()
	// The preface and the first call must come within FirstFrameTimeout
	// of the first bytes, as for yrpc.
	_ = c.raw.SetReadDeadline(deadlineIn(o.limits.FirstFrameTimeout))
	_ = c.raw.SetWriteDeadline(time.Time{})
	if err := h.preface(maxList); err != nil {
		o.logger.Info("rt: bad HTTP/2 preface", "peer", c.raw.RemoteAddr().String(), "err", err)
		c.close(err)
		return
	}
	c.run()
}

// preface reads the client's preface and sends the server's: its
// SETTINGS and the connection window's first update.
func (h *h2Conn) preface(maxList int) error {
	settings := []h2.Setting{{ID: h2.SettingInitialWindowSize, Val: uint32(h.streamWin)}, {ID: h2.SettingMaxHeaderListSize, Val: uint32(maxList)}}
	if h.maxStreams > 0 {
		settings = append(settings, h2.Setting{ID: h2.SettingMaxConcurrentStreams, Val: uint32(h.maxStreams)})
	}
	err := h.w.Write(func(b []byte) []byte {
		b = h2.AppendSettings(b, settings...)
		return h2.AppendWindowUpdate(b, 0, uint32(h.windowSize-h2.InitialWindow))
	}, sock.Direct)
	if err != nil {
		return err
	}
	if err := h.rd.Preface(); err != nil {
		return fmt.Errorf("rt: HTTP/2 client %s: %w", h.c.raw.RemoteAddr(), err)
	}
	return nil
}

// readLoop reads and handles frames (see serverConn.readLoop, which
// serverConn.run calls for yrpc's connections). It returns nil when it
// handed the reading over to another goroutine, else the error that
// ended it.
func (h *h2Conn) readLoop() error {
	c := h.c
	for {
		if !h.rd.Ready() {
			// About to wait for the client: send what the frames read
			// so far answered.
			if err := h.w.FlushHeld(); err != nil {
				return err
			}
			h.armTimer()
		}
		if max := h.s.o.limits.MaxBufferedBytes; max > 0 && h.w.Buffered() > max {
			// The client does not take its answers: stop reading until
			// it does (or the write timeout closes it).
			if err := h.w.FlushHeld(); err != nil {
				return err
			}
			if err := h.w.WaitBelow(max); err != nil {
				return err
			}
		}
		if err := h.rd.Next(&h.f); err != nil {
			if se, ok := err.(*h2.StreamError); ok {
				h.resetStream(se.StreamID, se.Code)
				continue
			}
			return h.abort(err)
		}
		c.lastFrame.Store(h.s.epoch.Load())
		if c.writeClosed.Load() {
			continue // drained and half-closed: the client is told already
		}
		st, err := h.frame(&h.f)
		if err != nil {
			return h.abort(err)
		}
		if st != nil && h.serve(st) {
			// A worker reads now; it sends what this goroutine held.
			return h.w.FlushHeld()
		}
	}
}

// serve runs a unary call whose request is in: on this goroutine when its
// method is quick, else on a worker. It reports whether a worker took
// the reading over meanwhile (see serverConn.watchdog).
func (h *h2Conn) serve(st *h2Stream) bool {
	c, me := h.c, st.sc.me
	if !me.quick(h.s.o.clock) {
		st.mode = sock.Queued
		h.s.workers.run(st)
		return false
	}
	st.mode = sock.Direct
	if h.rd.Buffered() > 0 {
		st.mode = sock.Held // more requests to serve first
	}
	// From here until the CAS below, the watchdog may hand the reading
	// to a worker: this goroutine must not touch the reader.
	tok := c.tokens.Add(1)
	me.inlined.Add(1)
	c.serving.Store(me)
	c.owner.Store(tok)
	c.watch()
	st.serveCall()
	return !c.owner.CompareAndSwap(tok, 0)
}

// abort ends the connection after err: with a protocol error, a GOAWAY
// naming it goes out first.
func (h *h2Conn) abort(err error) error {
	var ce *h2.ConnError
	o := &h.s.o
	switch {
	case errors.As(err, &ce):
		o.logger.Debug("rt: HTTP/2 connection error", "type", ce.Code.String()+": "+ce.Reason, "peer", h.c.raw.RemoteAddr().String())
		h.sendGoAway(ce.Code, ce.Reason)
	case !h.started && errors.Is(err, os.ErrDeadlineExceeded):
		o.logger.Info("rt: closing HTTP/2 connection with no call", "peer", h.c.raw.RemoteAddr().String(), "waited", o.limits.FirstFrameTimeout)
	}
	return err
}

// frame handles one frame; it returns a unary call whose request is in,
// to serve.
func (h *h2Conn) frame(f *h2.Frame) (*h2Stream, error) {
	if !h.settled {
		if f.Type != h2.FrameSettings || f.Has(h2.FlagAck) {
			return nil, &h2.ConnError{Code: h2.ErrProtocol, Reason: "the client's first frame is " + f.Type.String() + ", not SETTINGS"}
		}
		h.settled = true
	}
	switch f.Type {
	case h2.FrameData:
		return h.onData(f)
	case h2.FrameHeaders:
		return h.onHeaders(f)
	case h2.FrameContinuation:
		if err := h.hd.Write(f.Data); err != nil {
			return nil, err
		}
		if f.Has(h2.FlagEndHeaders) {
			return h.endBlock()
		}
	case h2.FrameSettings:
		return nil, h.onSettings(f)
	case h2.FramePing:
		if !f.Has(h2.FlagAck) {
			data := f.PingData
			return nil, h.w.Write(func(b []byte) []byte { return h2.AppendPing(b, true, data) }, sock.Held)
		}
	case h2.FrameWindowUpdate:
		return nil, h.onWindowUpdate(f)
	case h2.FrameRSTStream:
		return nil, h.onReset(f)
	}
	return nil, nil // PRIORITY, GOAWAY, unknown types
}

// onSettings applies the client's settings and acknowledges them.
func (h *h2Conn) onSettings(f *h2.Frame) error {
	if f.Has(h2.FlagAck) {
		h.acked = true
		return nil
	}
	var table, frame, window int64 = -1, -1, -1
	err := f.Settings(func(s h2.Setting) error {
		if err := s.Check(); err != nil {
			return err
		}
		switch s.ID {
		case h2.SettingHeaderTableSize:
			table = int64(s.Val)
		case h2.SettingMaxFrameSize:
			frame = int64(s.Val)
		case h2.SettingInitialWindowSize:
			window = int64(s.Val)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var werr error
	err = h.w.Write(func(b []byte) []byte {
		out := &h.out
		if table >= 0 {
			out.enc.SetMaxDynamicTableSizeLimit(uint32(min(table, 4096)))
		}
		if frame >= 0 {
			out.maxFrame = int(frame)
		}
		if window >= 0 {
			// The change applies to every stream's window (RFC 9113
			// 6.9.2), which are kept relative to it.
			h.mu.Lock()
			for _, st := range h.streams {
				if window+st.sendWin > h2.MaxWindow {
					werr = &h2.ConnError{Code: h2.ErrFlowControl, Reason: "SETTINGS_INITIAL_WINDOW_SIZE overflows a stream's window"}
				}
			}
			h.mu.Unlock()
			out.init = window
		}
		b = h2.AppendSettingsAck(b)
		return h.drain(b)
	}, sock.Held)
	if werr != nil {
		return werr
	}
	return err
}

// onWindowUpdate adds credit to the connection's or a stream's send
// window, and sends what waited for it.
func (h *h2Conn) onWindowUpdate(f *h2.Frame) error {
	id, inc := f.StreamID, int64(f.Increment)
	if id > h.maxID {
		return &h2.ConnError{Code: h2.ErrProtocol, Reason: fmt.Sprintf("WINDOW_UPDATE on idle stream %d", id)}
	}
	var cerr error
	var overflow *h2Stream
	err := h.w.Write(func(b []byte) []byte {
		out := &h.out
		if id == 0 {
			if !h2.AddWindow(&out.conn, inc) {
				cerr = &h2.ConnError{Code: h2.ErrFlowControl, Reason: "the connection's send window exceeds 2^31-1"}
				return b
			}
			return h.drain(b)
		}
		st := h.sending(id)
		if st == nil {
			return b // closed: frames in flight are fine
		}
		if st.sendWin += inc; out.init+st.sendWin > h2.MaxWindow {
			overflow = st
			return b
		}
		return h.drain(b)
	}, sock.Held)
	if overflow != nil {
		h.resetStream(id, h2.ErrFlowControl)
	}
	if cerr != nil {
		return cerr
	}
	return err
}

// sending returns stream id while it may send: open, or with data
// waiting for credit. Called with the writer's lock held.
func (h *h2Conn) sending(id uint32) *h2Stream {
	for _, st := range h.out.blocked {
		if st.id == id {
			return st
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streams[id]
}

// onReset ends a stream the client reset.
func (h *h2Conn) onReset(f *h2.Frame) error {
	id := f.StreamID
	if id > h.maxID {
		return &h2.ConnError{Code: h2.ErrProtocol, Reason: fmt.Sprintf("RST_STREAM on idle stream %d", id)}
	}
	if st := h.cancel(id); st != nil && h.budgetN.Add(-1) < 0 {
		return &h2.ConnError{Code: h2.ErrEnhanceYourCalm, Reason: "too many streams reset"}
	}
	return nil
}

// resetStream resets stream id with code and ends it if it is open.
func (h *h2Conn) resetStream(id uint32, code h2.ErrCode) {
	_ = h.w.Write(func(b []byte) []byte { return h2.AppendRSTStream(b, id, code) }, sock.Held)
	h.cancel(id)
}

// cancel ends stream id, reset by either side: nothing more is sent on
// it, its handler's context is canceled, and a unary call still waiting
// for its request is done. It returns the stream, nil if it was not open.
func (h *h2Conn) cancel(id uint32) *h2Stream {
	h.mu.Lock()
	st := h.streams[id]
	delete(h.streams, id)
	waiting := st != nil && st.waiting
	if waiting {
		st.waiting = false
	}
	h.mu.Unlock()
	if st == nil {
		return nil
	}
	st.recvEnded.Store(true)
	st.dead.Store(true)
	st.sc.ctx.cancel(context.Canceled)
	if st.pipe != nil {
		st.pipe.close(errStreamReset)
	}
	st.wakeSender()
	if waiting {
		st.sc.ctx.finish()
		st.end()
	}
	return st
}

// errStreamReset is what reading a reset stream's request returns.
var errStreamReset = errors.New("rt: HTTP/2 stream reset")

// sendGoAway sends GOAWAY with code, naming the last stream admitted.
func (h *h2Conn) sendGoAway(code h2.ErrCode, reason string) {
	c := h.c
	c.admitMu.Lock()
	defer c.admitMu.Unlock()
	h.mu.Lock()
	h.goneAway = true
	h.mu.Unlock()
	last := c.lastID
	_ = h.w.Write(func(b []byte) []byte { return h2.AppendGoAway(b, last, code, []byte(reason)) }, sock.Direct)
}

// tick closes the connection when the client is silent for three
// heartbeat periods (pinging it after one) or idle past the idle timeout.
func (h *h2Conn) tick(epoch int64, period time.Duration) {
	c, o := h.c, &h.s.o
	silent := time.Duration(epoch-c.lastFrame.Load()) * period
	if o.heartbeat > 0 {
		if silent > 3*o.heartbeat {
			c.close(fmt.Errorf("rt: HTTP/2 client %s silent for %v", c.raw.RemoteAddr(), silent))
			return
		}
		if silent >= o.heartbeat {
			_ = h.w.Write(func(b []byte) []byte { return h2.AppendPing(b, false, [8]byte{'y', 'r', 'p', 'c'}) }, sock.Direct)
		}
	}
	idle := time.Duration(epoch-c.lastCall.Load()) * period
	h.mu.Lock()
	busy := len(h.streams) > 0
	h.mu.Unlock()
	if o.idleTimeout > 0 && !busy && c.inflight.Load() == 0 && idle > o.idleTimeout {
		h.sendGoAway(h2.ErrNo, "idle")
		c.close(fmt.Errorf("rt: HTTP/2 client %s idle for %v", c.raw.RemoteAddr(), idle))
	}
}

// closed ends the streams of the closing connection.
func (h *h2Conn) closed() {
	h.mu.Lock()
	ids := make([]uint32, 0, len(h.streams))
	for id := range h.streams {
		ids = append(ids, id)
	}
	if h.timer != nil {
		h.timer.Stop()
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.cancel(id)
	}
}

// armTimer makes sure that the unary calls admitted since the last time
// fail if their request does not arrive within Limits.FirstFrameTimeout
// (or their deadline, if sooner).
func (h *h2Conn) armTimer() {
	if len(h.newAwait) == 0 {
		return
	}
	d := h.s.o.limits.FirstFrameTimeout
	now := time.Now()
	h.mu.Lock()
	for _, st := range h.newAwait {
		if !st.waiting {
			continue
		}
		by := st.sc.ctx.deadline
		if d > 0 && (by.IsZero() || now.Add(d).Before(by)) {
			by = now.Add(d)
		}
		st.requestBy = by
		if !by.IsZero() && (h.timerAt.IsZero() || by.Before(h.timerAt)) {
			h.timerAt = by
			if h.timer == nil {
				h.timer = time.AfterFunc(by.Sub(now), h.expire)
			} else {
				h.timer.Reset(by.Sub(now))
			}
		}
	}
	h.mu.Unlock()
	clear(h.newAwait)
	h.newAwait = h.newAwait[:0]
}

// expire fails the unary calls whose request is late. While bytes wait
// in the socket for a reader that has not yet run (a loaded machine), a
// late call gets one more period.
func (h *h2Conn) expire() {
	now := time.Now()
	d := h.s.o.limits.FirstFrameTimeout
	_, unread := h.c.peek.State()
	var late []*h2Stream
	h.mu.Lock()
	h.timerAt = time.Time{}
	for _, st := range h.streams {
		if !st.waiting || st.requestBy.IsZero() {
			continue
		}
		if !now.Before(st.requestBy) {
			if !unread || st.graced || d <= 0 {
				st.waiting = false
				late = append(late, st)
				continue
			}
			st.graced, st.requestBy = true, now.Add(d)
		}
		if h.timerAt.IsZero() || st.requestBy.Before(h.timerAt) {
			h.timerAt = st.requestBy
		}
	}
	if !h.timerAt.IsZero() {
		h.timer.Reset(h.timerAt.Sub(now))
	}
	h.mu.Unlock()
	for _, st := range late {
		name := st.sc.me.info.Method.FullName
		st.mode = sock.Direct
		st.fail(&Error{Code: DeadlineExceeded, Message: name + ": the request did not arrive in time (Limits.FirstFrameTimeout or the call's deadline)"}, st.sc.ctx.finish())
		st.end()
	}
}
