package rt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/internal/stream"
	"github.com/yrpc/yrpc/rt/wire"
)

// serverConn is one client connection of a Server.
type serverConn struct {
	srv    *Server
	raw    net.Conn      // the socket
	nc     net.Conn      // what frames travel on: raw, or TLS over it; set by serve
	w      *sock.Writer  // set by serve under mu; see writer
	r      *wire.Reader  // used by one goroutine at a time
	ip     string        // the client's IP, for per-IP limits
	comp   bool          // lz4 negotiated
	peer   *Peer         // the client, for handlers; set by serve
	limits wire.Settings // the client's announced limits; set by serve

	mu    sync.Mutex
	calls map[uint32]*serverCall // in flight, for cancel frames

	streams map[uint32]*serverStream // open streams; guarded by mu
	sc      *stream.Conn             // the streams' shared state; nil without streams

	inflight atomic.Int64  // calls and streams in flight, oneway calls included
	held     *heldBytes    // request bytes of the calls in flight
	closed   chan struct{} // closed by close
	// admitMu orders the admission of each call or stream (its answer
	// queued, or its place in flight taken) before or after the GoAway,
	// whose id is the last one admitted (lastID): so every call up to it
	// is answered before the connection closes, and none after it runs.
	admitMu sync.Mutex
	lastID  uint32
	// writeClosed: the connection is drained and its write side closed
	// (closeWrite); what the client still sends is dropped.
	writeClosed atomic.Bool
	started     bool // the first frame was read; the reader's
	// arrived is when the frames being handled were read off the
	// connection: the clock is read once per read that waited for the
	// client, not for each of the requests it brings. The reader's.
	arrived time.Time

	dropFunc func()
	// Serving calls on the reading goroutine (see readLoop): owner is
	// the token of the call being served there, 0 between calls and once
	// the watchdog handed reading to a worker; serving is its method.
	tokens, owner atomic.Uint64
	serving       atomic.Pointer[methodEntry]
	watching      atomic.Bool  // the watchdog timer is running
	stallMu       sync.Mutex   // serializes watchdog runs
	stall         *time.Timer  // runs watchdog
	seenOwner     uint64       // owner at the watchdog's last run; guarded by stallMu
	seenTokens    uint64       // tokens at the watchdog's last run; guarded by stallMu
	lastFrame     atomic.Int64 // server epoch of the last frame read
	lastCall      atomic.Int64 // server epoch of the last call
	closeOnce     sync.Once
	peek          *sock.Peeker
	h2            *h2Conn // an HTTP/2 connection's (grpc_h2conn.go); set under mu with w
}

func newServerConn(s *Server, raw net.Conn, ip string) *serverConn {
	c := &serverConn{srv: s, raw: raw, ip: ip, calls: make(map[uint32]*serverCall), streams: make(map[uint32]*serverStream),
		held: newHeldBytes(s.o.limits.MaxRequestBytes), closed: make(chan struct{})}
	c.peek = sock.NewPeeker(raw)
	c.dropFunc = func() { c.close(errors.New("rt: connection dropped by fault injection")) }
	c.stall = time.AfterFunc(time.Hour, c.watchdog)
	c.stall.Stop()
	e := s.epoch.Load()
	c.lastFrame.Store(e)
	c.lastCall.Store(e)
	return c
}

func (c *serverConn) serve() {
	o := &c.srv.o
	_ = c.raw.SetDeadline(deadlineIn(o.limits.PrefaceTimeout))
	nc, st, err := c.accept(c.raw)
	if err != nil {
		o.logger.Info("rt: connection refused", "peer", c.raw.RemoteAddr().String(), "err", err)
		c.close(err)
		return
	}
	c.nc, c.peer = nc, newPeer(c.raw.RemoteAddr(), st)
	if c.handOff(st) {
		return // HTTP: gRPC or gRPC-Web (grpc_conn.go)
	}
	w := sock.NewWriter(nc, sock.WriterOptions{Pool: o.buffers, Timeout: o.writeTimeout})
	c.mu.Lock()
	c.w = w
	c.mu.Unlock()
	peer, err := c.handshake()
	if err != nil {
		c.close(err)
		return
	}
	c.r = wire.NewReader(c.nc, o.readerOptions(peer.Features))
	c.run()
}

// handshake exchanges prefaces and settings (within the deadline serve
// set, Limits.PrefaceTimeout), and leaves the read deadline of the first
// frame (Limits.FirstFrameTimeout; readLoop clears it once the frame is
// in).
func (c *serverConn) handshake() (wire.Peer, error) {
	o := &c.srv.o
	peer, err := wire.ServerHandshake(c.nc, o.features(), o.settings(uint32(o.limits.MaxCallsPerConn)))
	if err != nil {
		o.logger.Info("rt: bad connection preface", "peer", c.raw.RemoteAddr().String(), "err", err)
		return peer, err
	}
	c.comp = peer.Features.Has(wire.FeatureLZ4)
	c.limits = peer.Settings
	if peer.Features.Has(wire.FeatureStreams) {
		sc := stream.NewConn(c.w, peer.Settings, o.settings(uint32(o.limits.MaxCallsPerConn)))
		c.mu.Lock() // close reads it from another goroutine
		c.sc = sc
		c.mu.Unlock()
	}
	_ = c.raw.SetWriteDeadline(time.Time{})
	return peer, c.raw.SetReadDeadline(deadlineIn(o.limits.FirstFrameTimeout))
}

// deadlineIn is the deadline d from now; zero (none) for d <= 0.
func deadlineIn(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// run reads frames until the connection fails, then closes it. It
// implements task: the goroutine reading a connection may change (see
// request handling below), so the loop can continue on a pooled worker.
func (c *serverConn) run() {
	read := c.readLoop
	if c.h2 != nil {
		read = c.h2.readLoop
	}
	if err := read(); err != nil {
		c.close(err)
	}
}

// readLoop reads and dispatches frames. It returns nil when it handed the
// reading over to another goroutine, else the error that ended it.
//
// Calls of quick methods run on this goroutine, one after the other, with
// no hand-off: a batch of requests read with one syscall is answered with
// one write when the batch is drained. A watchdog hands the read loop to a
// pooled worker when a call holds it for more than stallAfter; a method
// whose calls stall often then runs on workers for slowFor (see
// methodEntry.stalled), so a handler that blocks holds up other calls on
// its connection only once in a while, and only for about stallAfter.
func (c *serverConn) readLoop() error {
	var p readPace
	for {
		if err := c.pace(&p); err != nil {
			return err
		}
		f, err := c.r.Next()
		if err != nil {
			return c.readFailed(err)
		}
		if p.fresh || c.arrived.IsZero() {
			c.arrived = time.Now()
		}
		if c.writeClosed.Load() {
			continue // drained and half-closed: the client is told already
		}
		if !c.started {
			c.started = true
			_ = c.raw.SetReadDeadline(time.Time{})
		}
		c.lastFrame.Store(c.srv.epoch.Load())
		if handedOff, err := c.dispatch(f, &p); handedOff || err != nil {
			return err
		}
	}
}

// readPace is readLoop's count of the requests read since it last waited
// for the client, and their running average per wait.
type readPace struct {
	batch   int
	perRead sock.LoneAvg
	fresh   bool // the next frame is read from the connection, not from what is buffered
}

// pace runs before each read. When the read would wait for the client it
// sends the answers held so far, and after lone calls spins briefly for
// the next (see WithSpinWait); it waits while a caller holds the reader;
// and it stops reading while the client leaves more than MaxBufferedBytes
// of answers untaken (until it takes them, or the write timeout closes
// the connection).
func (c *serverConn) pace(p *readPace) error {
	if p.fresh = !c.r.Ready(); p.fresh {
		if err := c.w.FlushHeld(); err != nil {
			return err
		}
		if p.perRead.Add(p.batch) {
			c.peek.Await(c.srv.o.spinWait, c.srv.o.spinGate)
		}
		p.batch = 0
	}
	if err := c.waitHeld(); err != nil {
		return err
	}
	if max := c.srv.o.limits.MaxBufferedBytes; max > 0 && c.w.Buffered() > max {
		if err := c.w.FlushHeld(); err != nil {
			return err
		}
		return c.w.WaitBelow(max)
	}
	return nil
}

// readFailed logs why the connection's reading ended, when that is worth
// an operator's attention, and returns err.
func (c *serverConn) readFailed(err error) error {
	var fe *wire.FrameError
	switch {
	case errors.As(err, &fe):
		c.srv.o.logger.Warn("rt: closing connection after bad frame", "peer", c.nc.RemoteAddr().String(), "err", err)
	case !c.started && errors.Is(err, os.ErrDeadlineExceeded):
		c.srv.o.logger.Info("rt: closing connection with no frame", "peer", c.nc.RemoteAddr().String(), "waited", c.srv.o.limits.FirstFrameTimeout)
	}
	return err
}

// dispatch acts on one frame from the client. handedOff reports that a
// call served inline outlived the watchdog's patience, so that a worker
// reads the connection now and this goroutine must stop.
func (c *serverConn) dispatch(f *wire.Frame, p *readPace) (handedOff bool, err error) {
	switch f.Type {
	case wire.TypeRequest, wire.TypeOneway:
		p.batch++
		c.lastCall.Store(c.srv.epoch.Load())
		c.admitMu.Lock()
		c.lastID = f.ID
		sc := c.request(f)
		c.admitMu.Unlock()
		switch {
		case sc == nil:
		case sc.inline:
			return c.serveInline(sc)
		default:
			c.srv.workers.run(sc)
		}
	case wire.TypeCancel:
		c.mu.Lock()
		sc := c.calls[f.ID]
		c.mu.Unlock()
		if sc != nil {
			sc.ctx.cancel(context.Canceled)
		}
	case wire.TypePing:
		id := f.ID
		_ = c.w.Write(func(b []byte) []byte {
			return wire.AppendFrame(b, &wire.Header{Type: wire.TypePong, ID: id}, nil, nil)
		}, sock.Held)
	case wire.TypeStreamOpen:
		p.batch++
		c.lastCall.Store(c.srv.epoch.Load())
		c.admitMu.Lock()
		c.lastID = f.ID
		c.openStream(f)
		c.admitMu.Unlock()
	case wire.TypeStreamMessage, wire.TypeStreamHalfClose, wire.TypeStreamReset, wire.TypeWindowUpdate:
		return false, c.streamFrame(f)
	case wire.TypePong, wire.TypeGoAway:
	default:
		return false, fmt.Errorf("rt: unexpected %s frame from client", f.Type)
	}
	return false, nil
}

// serveInline serves sc on the reading goroutine. If the watchdog hands
// the reader to a worker meanwhile, it reports handedOff after sending
// what it held.
func (c *serverConn) serveInline(sc *serverCall) (handedOff bool, err error) {
	mode := sock.Direct
	if c.r.Buffered() > 0 {
		mode = sock.Held // more requests to serve first
	}
	// From here until the CAS below, the watchdog may hand the reader to
	// a worker: this goroutine must not touch it.
	tok := c.tokens.Add(1)
	sc.me.inlined.Add(1)
	c.serving.Store(sc.me)
	c.owner.Store(tok)
	c.watch()
	sc.serve(mode)
	if !c.owner.CompareAndSwap(tok, 0) {
		return true, c.w.FlushHeld()
	}
	return false, nil
}

const (
	// stallAfter is the watchdog's period: a call served on the reading
	// goroutine that is still running at two runs in a row (after
	// stallAfter to twice that) makes a worker take the read loop over.
	stallAfter = 200 * time.Microsecond
	// slowFor is how long a method whose calls stall often runs on
	// workers before it is tried on the reading goroutine again.
	slowFor = time.Second
)

// watch starts the watchdog unless it runs already. The watchdog keeps
// itself running while calls are served on the reading goroutine and
// stops after a period without any, so arming it costs nothing per call
// under load and an idle connection has no timer.
func (c *serverConn) watch() {
	if !c.watching.Load() && c.watching.CompareAndSwap(false, true) {
		c.stall.Reset(stallAfter)
	}
}

// watchdog runs every stallAfter while calls are served on the reading
// goroutine. When the same call is running as at its last run, a worker
// goes on reading the connection, and the call's method moves to workers
// for slowFor if its calls stall often. The CAS on owner makes sure the
// reading goroutine and the worker never both read.
func (c *serverConn) watchdog() {
	c.stallMu.Lock()
	defer c.stallMu.Unlock()
	tok, n := c.owner.Load(), c.tokens.Load()
	if tok != 0 && tok == c.seenOwner && c.owner.CompareAndSwap(tok, 0) {
		c.seenOwner = 0
		c.watching.Store(false) // the new reader starts it again
		if me := c.serving.Load(); me != nil && me.stalled() {
			me.slowUntil.Store(c.srv.o.clock.Now().Add(slowFor).UnixNano())
		}
		c.srv.workers.run(c)
		// The answers the stalled batch held back go out now.
		if err := c.w.FlushHeld(); err != nil {
			go c.close(err)
		}
		return
	}
	busy := tok != 0 || n != c.seenTokens
	c.seenOwner, c.seenTokens = tok, n
	if busy {
		c.stall.Reset(stallAfter)
		return
	}
	c.watching.Store(false)
	// A call may have started after the loads above and seen the
	// watchdog still running: look again, now that watching is false.
	if c.owner.Load() != 0 {
		c.watch()
	}
}

// waitHeld stops reading while the calls in flight hold more request
// bytes than the limits allow (Limits.MaxRequestBytes on the connection,
// MaxTotalRequestBytes on the server), until calls finish or the
// connection closes.
func (c *serverConn) waitHeld() error {
	for {
		ch := c.held.over()
		if ch == nil {
			ch = c.srv.held.over()
		}
		if ch == nil {
			return nil
		}
		if err := c.w.FlushHeld(); err != nil {
			return err
		}
		select {
		case <-ch:
		case <-c.closed:
			return net.ErrClosed
		}
	}
}

// closeWrite ends a drained connection gently (see Server.closeWrites):
// its last frames go out, then a FIN, and its reader drops what still
// comes until the client closes, for at most closeLinger.
func (c *serverConn) closeWrite() {
	w := c.writer()
	if w == nil {
		return
	}
	c.writeClosed.Store(true)
	_ = w.FlushHeld()
	for i := 0; i < 100 && !w.Flushed(); i++ {
		time.Sleep(time.Millisecond) // a bounded wait for the writer loop's last write
	}
	if cw, ok := c.raw.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = c.raw.SetReadDeadline(time.Now().Add(closeLinger))
}

// writer returns the connection's writer, nil before its handshake: for
// the goroutines other than the connection's own (shutdown, the ticker).
func (c *serverConn) writer() *sock.Writer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w
}

// writerH2 returns the connection's HTTP/2 side, nil if it has none.
func (c *serverConn) writerH2() *h2Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h2
}

// sendGoAway tells the client to send no more, naming the last request
// read: the server is closing, so it refuses (as not run) what it reads
// after that, and what it never reads is lost with the connection; either
// way the client knows that the requests after that id did not run.
func (c *serverConn) sendGoAway() {
	w := c.writer()
	if w == nil {
		return // not yet speaking yrpc: close will do
	}
	if c.h2 != nil {
		c.h2.sendGoAway(0, "server shutting down")
		return
	}
	c.admitMu.Lock()
	defer c.admitMu.Unlock()
	_ = w.Write(func(b []byte) []byte {
		return wire.AppendFrame(b, &wire.Header{Type: wire.TypeGoAway, ID: c.lastID, Status: uint8(Unavailable)}, nil, []byte("server shutting down"))
	}, sock.Direct)
}

// tick closes the connection when the client is silent for three heartbeat
// periods or idle (no call nor stream in flight) past the idle timeout.
func (c *serverConn) tick(epoch int64, period time.Duration) {
	if c.writer() == nil {
		return // in its handshake (bounded by PrefaceTimeout), or handed to the HTTP/1.1 side, which has its own timeouts
	}
	if c.h2 != nil {
		c.h2.tick(epoch, period)
		return
	}
	o := &c.srv.o
	silent := time.Duration(epoch-c.lastFrame.Load()) * period
	if o.heartbeat > 0 && silent > 3*o.heartbeat {
		c.close(fmt.Errorf("rt: client %s silent for %v", c.nc.RemoteAddr(), silent))
		return
	}
	// Calls and streams in flight keep the connection busy, however
	// long they last (a stream may carry a subscription that is quiet for
	// minutes); idleness counts from the last tick that saw one.
	c.mu.Lock()
	busy := len(c.calls) > 0 || len(c.streams) > 0
	c.mu.Unlock()
	if busy {
		c.lastCall.Store(epoch)
		return
	}
	idle := time.Duration(epoch-c.lastCall.Load()) * period
	if o.idleTimeout > 0 && idle > o.idleTimeout {
		c.sendGoAway()
		c.close(fmt.Errorf("rt: client %s idle for %v", c.nc.RemoteAddr(), idle))
	}
}

// close tears the connection down and cancels its calls.
func (c *serverConn) close(err error) {
	c.closeOnce.Do(func() {
		close(c.closed)
		if err == nil || errors.Is(err, io.EOF) {
			err = io.EOF
		}
		c.stall.Stop()
		if h := c.writerH2(); h != nil {
			h.closed()
		}
		c.mu.Lock()
		streams, sc := c.streams, c.sc
		c.streams = map[uint32]*serverStream{}
		c.mu.Unlock()
		for _, ss := range streams {
			// Streams still open when the server closes end with
			// Unavailable: graceful shutdown let them finish until
			// its context ended.
			ss.reset(Errorf(Unavailable, "%s: server closing", ss.me.info.Method.FullName), true)
		}
		if sc != nil {
			sc.Fail(err)
		}
		if w := c.writer(); w != nil {
			// Let queued responses (e.g. GOAWAY) go out before closing.
			_ = w.FlushHeld()
			for i := 0; i < 100 && !w.Flushed(); i++ {
				time.Sleep(time.Millisecond)
			}
			w.Close(err)
		}
		c.raw.Close()
		c.mu.Lock()
		calls := c.calls
		c.calls = map[uint32]*serverCall{}
		c.mu.Unlock()
		for _, sc := range calls {
			sc.ctx.cancel(context.Canceled)
		}
		c.srv.removeConn(c)
		c.srv.wg.Done()
	})
}
