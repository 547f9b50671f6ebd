package grpcclient

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/yrpc/yrpc/rt/internal/conn"
)

// Config is what the gRPC connections of one client share. Dial is
// required; the other fields' zero values mean the defaults they name.
// Pools only read it.
type Config struct {
	// Dial opens a transport connection to addr ("host:port").
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// TLS configures the connections of secure pools: its roots verify
	// servers, its certificates are the client's. Nil: the system's
	// roots. Its NextProtos are replaced by "h2", and ServerName defaults
	// to the host of each pool's address.
	TLS *tls.Config
	// MaxMessage bounds each response message, decompressed (a larger one
	// fails its call with ResourceExhausted); 0: DefaultMaxMessage.
	MaxMessage int
	// MaxHeaderBytes bounds a response's headers and trailers; 0:
	// net/http's default.
	MaxHeaderBytes int
	// Heartbeat makes a connection on which nothing arrived for that long
	// send a ping, and closes it when the ping is not answered within
	// twice that; 0: no pings.
	Heartbeat time.Duration
	// WriteTimeout closes a connection whose server takes none of the
	// bytes written to it for that long; 0: never.
	WriteTimeout time.Duration
	// Compress is the size from which request messages are gzipped; 0:
	// never. Unary calls are sent gzipped (grpc-encoding gzip) until the
	// connection's server refuses gzip: it lists encodings without it
	// (grpc-accept-encoding), or answers a gzipped call Unimplemented
	// about its encoding, which is then sent again identity. Streams are
	// gzipped once the server listed gzip or answered a gzipped call.
	Compress int
	// Now is the clock of redial backoff; nil: time.Now.
	Now func() time.Time
}

// DefaultMaxMessage is the default of Config.MaxMessage: 4 MiB, gRPC's.
const DefaultMaxMessage = 4 << 20

// maxPooledBuf bounds the read buffers kept for reuse.
const maxPooledBuf = 64 << 10

// prefaceTimeout bounds a TLS handshake.
const prefaceTimeout = 10 * time.Second

// Redial backoff bounds, as package conn's.
const (
	minRedial = 50 * time.Millisecond
	maxRedial = 5 * time.Second
)

// Pool holds the HTTP/2 connection to one gRPC server address: dialed
// lazily by the first call, redialed with backoff after a failure, and
// replaced once the server sends it away (GOAWAY) or it fails. Every call
// is a stream of that connection; calls past the server's
// MaxConcurrentStreams wait for a slot. Make one with NewPool (the zero
// value is not usable); a Pool is safe for concurrent use.
type Pool struct {
	addr   string // host:port
	scheme string // "http" (h2c) or "https"
	base   string // scheme://addr, the start of request URLs
	cfg    *Config
	tls    *tls.Config // secure pools': cfg.TLS with ALPN h2 and the server name
	tr     *http.Transport
	hv     headerValues
	gzw    sync.Pool // of *gzip.Writer
	gzr    sync.Pool // of *gzip.Reader
	bufs   sync.Pool // of *[]byte, read buffers of unary answers

	live atomic.Pointer[Conn] // conn, for lock-free reads

	mu      sync.Mutex
	conn    *Conn
	conns   map[*Conn]struct{} // not closed yet, for Close
	dialing chan struct{}      // closed when the dial in progress ends
	lastErr error
	retryAt time.Time
	backoff time.Duration
	closed  error // Close's error
}

// NewPool returns the pool of the gRPC server at addr ("host:port"): over
// TLS when secure, else over HTTP/2 without TLS (h2c, prior knowledge).
// It dials nothing yet.
func NewPool(addr string, secure bool, cfg *Config) *Pool {
	p := &Pool{addr: addr, scheme: "http", cfg: cfg, conns: make(map[*Conn]struct{})}
	var protos http.Protocols
	if secure {
		p.scheme = "https"
		p.tls = clientTLS(cfg.TLS, addr)
		protos.SetHTTP2(true)
	} else {
		protos.SetUnencryptedHTTP2(true)
	}
	p.base = p.scheme + "://" + addr + "/"
	p.tr = &http.Transport{
		Protocols:              &protos,
		DialContext:            p.dial,
		DialTLSContext:         p.dialTLS,
		DisableCompression:     true, // gRPC compresses messages, not bodies
		MaxResponseHeaderBytes: int64(cfg.MaxHeaderBytes),
		HTTP2: &http.HTTP2Config{
			SendPingTimeout:  cfg.Heartbeat,
			PingTimeout:      2 * cfg.Heartbeat,
			WriteByteTimeout: cfg.WriteTimeout,
		},
	}
	p.hv.init()
	p.gzw.New = func() any { return gzip.NewWriter(nil) }
	p.gzr.New = func() any { return new(gzip.Reader) }
	p.bufs.New = func() any { return new([]byte) }
	return p
}

// clientTLS is cfg (nil: the defaults) for a connection to addr: ALPN h2,
// and the server name of addr's host unless cfg names one.
func clientTLS(cfg *tls.Config, addr string) *tls.Config {
	c := &tls.Config{}
	if cfg != nil {
		c = cfg.Clone()
	}
	c.NextProtos = []string{"h2"}
	if c.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		c.ServerName = host
	}
	return c
}

// Addr is the pool's address ("host:port").
func (p *Pool) Addr() string { return p.addr }

func (p *Pool) now() time.Time {
	if p.cfg.Now != nil {
		return p.cfg.Now()
	}
	return time.Now()
}

func (p *Pool) maxMessage() int {
	if p.cfg.MaxMessage > 0 {
		return p.cfg.MaxMessage
	}
	return DefaultMaxMessage
}

// dial is the transport's DialContext: the pool's address by cfg.Dial.
func (p *Pool) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	return p.cfg.Dial(ctx, p.addr)
}

// dialTLS is the transport's DialTLSContext: cfg.Dial, then a TLS
// handshake that must choose HTTP/2.
func (p *Pool) dialTLS(ctx context.Context, _, _ string) (net.Conn, error) {
	nc, err := p.cfg.Dial(ctx, p.addr)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, prefaceTimeout)
	defer cancel()
	tc := tls.Client(nc, p.tls)
	if err := tc.HandshakeContext(hctx); err != nil {
		nc.Close()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return nil, fmt.Errorf("TLS handshake: the server closed the connection (does it serve TLS?): %w", err)
		}
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	if proto := tc.ConnectionState().NegotiatedProtocol; proto != "h2" {
		nc.Close()
		return nil, fmt.Errorf("TLS handshake: the server chose protocol %q, not HTTP/2 (h2)", proto)
	}
	return tc, nil
}

// Get returns the pool's usable connection, dialing one if needed. While a
// redial is backing off it fails at once, so that the caller can try
// another instance. Its errors are *conn.NotSent.
func (p *Pool) Get(ctx context.Context) (*Conn, error) {
	if c := p.live.Load(); c != nil && c.usable() {
		return c, nil
	}
	for {
		p.mu.Lock()
		if err := p.closed; err != nil {
			p.mu.Unlock()
			return nil, &conn.NotSent{Err: err}
		}
		if c := p.conn; c != nil && c.usable() {
			p.mu.Unlock()
			return c, nil
		}
		if ch := p.dialing; ch != nil {
			p.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, &conn.NotSent{Err: ctxError(ctx.Err(), "connect to "+p.addr)}
			}
		}
		if now := p.now(); now.Before(p.retryAt) {
			err, wait := p.lastErr, p.retryAt.Sub(now)
			p.mu.Unlock()
			return nil, &conn.NotSent{Err: errorf(unavailable, "connect to %s: %v (next try in %v)", p.addr, err, wait.Round(time.Millisecond))}
		}
		ch := make(chan struct{})
		p.dialing = ch
		p.mu.Unlock()

		cc, err := p.tr.NewClientConn(ctx, p.scheme, p.addr)

		p.mu.Lock()
		p.dialing = nil
		close(ch)
		switch {
		case err != nil && ctx.Err() != nil:
			// The caller gave up: that says nothing about the address.
			p.mu.Unlock()
			return nil, &conn.NotSent{Err: ctxError(ctx.Err(), "connect to "+p.addr)}
		case err != nil:
			p.backoff = min(max(2*p.backoff, minRedial), maxRedial)
			p.lastErr, p.retryAt = err, p.now().Add(p.backoff)
			p.mu.Unlock()
			return nil, &conn.NotSent{Err: &conn.Error{Code: unavailable, Message: fmt.Sprintf("connect to %s: %v", p.addr, err), Cause: err}}
		case p.closed != nil:
			err := p.closed
			p.mu.Unlock()
			cc.Close()
			return nil, &conn.NotSent{Err: err}
		}
		c := &Conn{p: p, cc: cc}
		old := p.conn
		p.conn, p.backoff, p.lastErr = c, 0, nil
		p.conns[c] = struct{}{}
		p.live.Store(c)
		p.mu.Unlock()
		cc.SetStateHook(c.stateChanged)
		if old != nil {
			old.retire()
		}
		return c, nil
	}
}

// RedialNow ends the redial backoff: the next Get dials at once, as
// package conn's Pool.RedialNow.
func (p *Pool) RedialNow() {
	p.mu.Lock()
	p.retryAt, p.backoff = time.Time{}, 0
	p.mu.Unlock()
}

// Open is the number of the pool's connections not yet closed (a
// replaced one counts until its last call ends).
func (p *Pool) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// closedErr is Close's error; nil while the pool is open.
func (p *Pool) closedErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Close closes the pool's connections; calls in flight fail with err (an
// *conn.Error, e.g. "client closed"), later ones with err marked not
// sent.
func (p *Pool) Close(err error) {
	p.mu.Lock()
	if p.closed != nil {
		p.mu.Unlock()
		return
	}
	p.closed = err
	conns := make([]*Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.conns, p.conn = nil, nil
	p.live.Store(nil)
	p.mu.Unlock()
	for _, c := range conns {
		c.cc.Close()
	}
}

// Conn is one HTTP/2 connection of a Pool, as Pool.Get returns it (the
// zero value is not usable). Its methods are safe for concurrent use.
type Conn struct {
	p       *Pool
	cc      *http.ClientConn
	retired atomic.Bool  // a newer connection replaces it: no new calls
	gzip    atomic.Int32 // gzipUnknown, gzipAccepted or gzipRefused
}

// usable reports whether new calls may use the connection.
func (c *Conn) usable() bool {
	if c.retired.Load() || c.cc.Err() != nil {
		return false
	}
	// No slot with no call in flight: the server sent it away (GOAWAY).
	return c.cc.Available() > 0 || c.cc.InFlight() > 0
}

// retire stops new calls on the connection and closes it once its calls
// in flight are done.
func (c *Conn) retire() {
	c.retired.Store(true)
	if c.cc.InFlight() == 0 {
		c.close()
	}
}

// stateChanged is the connection's state hook: it forgets the connection
// once closed, and closes a retired one once idle.
func (c *Conn) stateChanged(cc *http.ClientConn) {
	if cc.Err() != nil || c.retired.Load() && cc.InFlight() == 0 {
		c.close()
	}
}

func (c *Conn) close() {
	p := c.p
	p.mu.Lock()
	if p.conns != nil {
		delete(p.conns, c)
	}
	p.mu.Unlock()
	c.cc.Close()
}
