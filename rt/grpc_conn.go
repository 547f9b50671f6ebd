package rt

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/internal/h2"
	"github.com/yrpc/yrpc/rt/wire"
)

// ProtocolGRPC names gRPC (and gRPC-Web) in registry payloads.
const ProtocolGRPC = "grpc"

// grpcServer serves gRPC and gRPC-Web for a Server. The connections its
// listeners' first bytes or ALPN show to be HTTP/2 stay the Server's own
// (h2Conn); those of HTTP/1.1 (gRPC-Web) are handed to one http.Server
// through an in-memory listener, and the http.Server's handler runs their
// calls through the Server's call path. Either way a connection stays
// one of the Server's connections (Limits.MaxConns and MaxConnsPerIP
// count it) until it closes.
type grpcServer struct {
	s     *Server
	http  *http.Server
	lis   handoffListener
	start sync.Once

	mu    sync.Mutex
	conns map[net.Conn]*httpConn // handed over, by the conn given to http

	pools grpcPools
}

// httpConn is a connection handed to the http.Server.
type httpConn struct {
	c       *serverConn
	started atomic.Bool // a call came on it
	idle    *time.Timer // closes it unless a call comes in FirstFrameTimeout
}

// httpConnKey is the context key of the request's *httpConn.
type httpConnKey struct{}

// newGRPCServer returns s's gRPC side; nil when gRPC is off.
func newGRPCServer(s *Server) *grpcServer {
	o := &s.o
	if o.grpcMode == GRPCOff {
		return nil
	}
	g := &grpcServer{s: s, conns: make(map[net.Conn]*httpConn)}
	g.lis.init()
	g.pools.init()
	var protos http.Protocols
	protos.SetHTTP1(true) // gRPC-Web; HTTP/2 is h2Conn's
	idle := o.idleTimeout
	if idle <= 0 {
		idle = 100 * 365 * 24 * time.Hour // none (0 would mean ReadTimeout's)
	}
	g.http = &http.Server{
		Handler:           g,
		Protocols:         &protos,
		ReadHeaderTimeout: o.limits.FirstFrameTimeout, // HTTP/1.1 request headers
		ReadTimeout:       o.limits.FirstFrameTimeout, // unary requests; streams clear it
		IdleTimeout:       idle,
		MaxHeaderBytes:    o.maxMD + 1<<10,
		ErrorLog:          slog.NewLogLogger(o.logger.Handler(), slog.LevelDebug),
		ConnContext:       g.connContext,
		ConnState:         g.connState,
	}
	return g
}

// grpcListener marks the listeners of ServeGRPC: their connections speak
// HTTP only.
type grpcListener struct{ net.Listener }

func (l grpcListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return grpcOnlyConn{nc}, nil
}

// grpcOnlyConn is a connection accepted by a grpcListener.
type grpcOnlyConn struct{ net.Conn }

func isGRPCListener(lis net.Listener) bool {
	_, ok := lis.(grpcListener)
	return ok
}

// ServeGRPC serves gRPC and gRPC-Web alone on lis: what Serve does for
// yrpc (and, with GRPCSamePort, for both), as WithGRPC describes. The
// services are not registered in the registry for lis's address. It
// fails at once with WithGRPC(GRPCOff).
func (s *Server) ServeGRPC(ctx context.Context, lis net.Listener) error {
	if s.grpc == nil {
		return errors.New("rt: ServeGRPC: gRPC is off (WithGRPC(GRPCOff))")
	}
	return s.Serve(ctx, grpcListener{lis})
}

// protocols lists what the server's registered addresses answer.
func (s *Server) protocols() []string {
	if s.o.grpcMode == GRPCSamePort {
		return []string{ProtocolYRPC, ProtocolGRPC}
	}
	return []string{ProtocolYRPC}
}

// httpALPN reports whether a TLS client's protocol p is one the server
// hands to its HTTP side.
func (c *serverConn) httpALPN(p string) bool {
	return (p == alpnH2 || p == alpnHTTP1) && c.srv.grpc != nil && (c.srv.o.grpcMode == GRPCSamePort || c.grpcOnly())
}

func (c *serverConn) grpcOnly() bool {
	_, ok := c.raw.(grpcOnlyConn)
	return ok
}

// handOff gives the connection to the server's HTTP side when it speaks
// HTTP: by ALPN with TLS (st not nil), else by its first bytes. It
// reports whether the connection is no longer yrpc's to serve (handed
// over, or closed). A yrpc connection whose first bytes it read goes on
// with c.nc giving them back.
func (c *serverConn) handOff(st *tls.ConnectionState) bool {
	g, only := c.srv.grpc, c.grpcOnly()
	if g == nil || !only && c.srv.o.grpcMode != GRPCSamePort {
		return false
	}
	if st != nil {
		switch {
		case st.NegotiatedProtocol == alpnH2 && c.httpALPN(alpnH2):
			g.serveH2(c, c.nc)
			return true
		case c.httpALPN(st.NegotiatedProtocol):
			g.serve(c, c.nc)
			return true
		}
		if only {
			c.close(fmt.Errorf("rt: gRPC listener: TLS client %s negotiated protocol %q, not HTTP", c.raw.RemoteAddr(), st.NegotiatedProtocol))
			return true
		}
		return false
	}
	var b [4]byte
	if _, err := io.ReadFull(c.nc, b[:]); err != nil {
		c.srv.o.logger.Info("rt: connection closed before its preface", "peer", c.raw.RemoteAddr().String(), "err", err)
		c.close(err)
		return true
	}
	nc := &prefixConn{Conn: c.nc, prefix: b[:]}
	switch {
	case string(b[:]) == h2.ClientPreface[:4]:
		g.serveH2(c, nc)
		return true
	case looksHTTP(b):
		g.serve(c, nc)
		return true
	case only:
		c.close(fmt.Errorf("rt: gRPC listener: %s sent %q, not HTTP", c.raw.RemoteAddr(), b[:]))
		return true
	}
	c.nc = nc // yrpc's preface, or garbage the handshake refuses
	return false
}

// looksHTTP reports whether a connection's first bytes are HTTP's: the
// HTTP/2 preface "PRI " or an HTTP/1.1 method (capital letters), and not
// yrpc's preface.
func looksHTTP(b [4]byte) bool {
	if string(b[:]) == wire.PrefaceMagic {
		return false
	}
	for i, c := range b {
		if !('A' <= c && c <= 'Z' || i == 3 && c == ' ') {
			return false
		}
	}
	return true
}

// serve hands c, whose bytes travel on nc, to the http.Server (HTTP/1.1).
func (g *grpcServer) serve(c *serverConn, nc net.Conn) {
	s := g.s
	g.start.Do(func() {
		s.wg.Add(1) // c's count keeps the group above 0 here
		go func() {
			defer s.wg.Done()
			_ = g.http.Serve(&g.lis)
		}()
	})
	_ = c.raw.SetDeadline(time.Time{}) // the http.Server sets its own
	hc := &httpConn{c: c}
	if d := s.o.limits.FirstFrameTimeout; d > 0 {
		hc.idle = time.AfterFunc(d, func() {
			if !hc.started.Load() {
				s.o.logger.Info("rt: closing HTTP connection with no call", "peer", c.raw.RemoteAddr().String(), "waited", d)
				c.close(errors.New("rt: no call on the HTTP connection in Limits.FirstFrameTimeout"))
			}
		})
	}
	g.mu.Lock()
	g.conns[nc] = hc
	g.mu.Unlock()
	s.wg.Add(1) // done by connState once the http.Server is done with nc
	if !g.lis.push(nc) {
		g.forget(nc)
		c.close(ErrServerClosed)
	}
}

// connContext gives the http.Server's contexts of nc its *httpConn.
func (g *grpcServer) connContext(ctx context.Context, nc net.Conn) context.Context {
	g.mu.Lock()
	hc := g.conns[nc]
	g.mu.Unlock()
	return context.WithValue(ctx, httpConnKey{}, hc)
}

// connState lets a connection go once the http.Server is done with it.
func (g *grpcServer) connState(nc net.Conn, st http.ConnState) {
	if st == http.StateClosed || st == http.StateHijacked {
		g.forget(nc)
	}
}

// forget removes nc, closes its yrpc connection and ends its count in
// the server's wait group.
func (g *grpcServer) forget(nc net.Conn) {
	g.mu.Lock()
	hc := g.conns[nc]
	delete(g.conns, nc)
	g.mu.Unlock()
	if hc == nil {
		return
	}
	if hc.idle != nil {
		hc.idle.Stop()
	}
	hc.c.close(nil)
	g.s.wg.Done()
}

// goAway starts the graceful shutdown of the HTTP/1.1 side: idle
// connections closed, busy ones closed after their call. It does not
// wait. (HTTP/2 connections are the Server's: see serverConn.sendGoAway.)
func (g *grpcServer) goAway() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Shutdown does its work, then returns at its first wait
	_ = g.http.Shutdown(ctx)
}

// close closes the HTTP/1.1 side and its connections at once.
func (g *grpcServer) close() {
	g.lis.Close()
	_ = g.http.Close()
}

// handoffListener is the in-memory listener through which connections
// reach the http.Server.
type handoffListener struct {
	ch        chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func (l *handoffListener) init() {
	l.ch, l.done = make(chan net.Conn), make(chan struct{})
}

// push hands nc to Accept; false once the listener is closed.
func (l *handoffListener) push(nc net.Conn) bool {
	select {
	case <-l.done:
		return false
	default:
	}
	select {
	case l.ch <- nc:
		return true
	case <-l.done:
		return false
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case nc := <-l.ch:
		return nc, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return handoffAddr{} }

type handoffAddr struct{}

func (handoffAddr) Network() string { return "yrpc-handoff" }
func (handoffAddr) String() string  { return "yrpc-handoff" }
