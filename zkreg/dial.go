package zkreg

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// handshakeConn caps the deadlines of a connection's connect handshake,
// until its first byte is read, at max from now.
//
// go-zk v1.0.4 gives the handshake 10 times its read timeout, 6.7 session
// timeouts, and retries only after it. A server that accepts a connection
// but never answers it holds the client that long: ZooKeeper 3.8.0, while
// starting, fails to close the connections it refuses ("ZooKeeperServer not
// running", then a NullPointerException in the close), which delayed new
// sessions after a restart by 13s with 2s sessions in the fault suite. As
// the Java client does, a connection attempt gets the session timeout
// divided by the number of server addresses (handshakeLimit), so that New
// tries every server within one session timeout however many are silent.
// Deadlines after the handshake (2/3 of the negotiated session timeout)
// are left alone.
type handshakeConn struct {
	net.Conn
	max    time.Duration
	done   atomic.Bool     // a byte was read: the handshake is answered
	failed func(err error) // if set: a read failed before the handshake's answer
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.done.Store(true)
	} else if err != nil && !c.done.Load() && c.failed != nil {
		c.failed(err)
	}
	return n, err
}

func (c *handshakeConn) SetDeadline(t time.Time) error {
	return c.Conn.SetDeadline(c.limit(t))
}

func (c *handshakeConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.limit(t))
}

func (c *handshakeConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.limit(t))
}

func (c *handshakeConn) limit(t time.Time) time.Time {
	if t.IsZero() || c.done.Load() {
		return t
	}
	if max := time.Now().Add(c.max); t.After(max) {
		return max
	}
	return t
}

// dialFailure is a failed connection attempt to one server.
type dialFailure struct {
	addr string
	err  error
}

// dialZK dials with Options.Dial, runs TLS when Options.TLS is set, caps
// the handshake's deadlines, and records failures for New's error.
func (r *Registry) dialZK(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := r.dial(network, address, timeout)
	if err == nil && r.tls != nil {
		c, err = r.handshakeTLS(c, address)
	}
	if err != nil {
		r.lastDialErr.Store(&dialFailure{addr: address, err: err})
		return nil, err
	}
	max := r.handshakeLimit()
	return &handshakeConn{Conn: c, max: max, failed: func(err error) {
		// A server that accepts connections but does not answer (not
		// ZooKeeper, or a ZooKeeper still starting): name it in New's error.
		r.lastDialErr.Store(&dialFailure{addr: address,
			err: fmt.Errorf("no answer to the ZooKeeper handshake within %v: %w", max, err)})
	}}, nil
}

// handshakeLimit is how long one connection attempt may wait for its
// handshake: the session timeout divided by the number of addresses the
// host provider resolved (ZooKeeper's Java client divides the same way).
func (r *Registry) handshakeLimit() time.Duration {
	if n := r.hosts.Load(); n > 1 {
		return r.timeout / time.Duration(n)
	}
	return r.timeout
}

// handshakeTLS runs the TLS handshake on c within handshakeLimit.
func (r *Registry) handshakeTLS(c net.Conn, address string) (net.Conn, error) {
	cfg := r.tls
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(address)
	}
	tc := tls.Client(c, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), r.handshakeLimit())
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("TLS handshake with %s: %w", address, err)
	}
	return tc, nil
}

// hostRounds is go-zk's host provider, telling the registry when every
// server has been tried without success since the last connection.
type hostRounds struct {
	zk.HostProvider
	r *Registry
}

// Init resolves the servers and records how many addresses there are,
// which bounds each attempt's handshake (Registry.handshakeLimit).
func (h *hostRounds) Init(servers []string) error {
	if err := h.HostProvider.Init(servers); err != nil {
		return err
	}
	h.r.hosts.Store(int32(h.HostProvider.Len()))
	return nil
}

func (h *hostRounds) Next() (string, bool) {
	server, retryStart := h.HostProvider.Next()
	if retryStart {
		h.r.roundFailedOnce.Do(func() { close(h.r.roundFailed) })
	}
	return server, retryStart
}
