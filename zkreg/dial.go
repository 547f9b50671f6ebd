package zkreg

import (
	"net"
	"sync/atomic"
	"time"
)

// handshakeConn caps the deadlines of a connection's connect handshake,
// until its first byte is read, at max from now.
//
// go-zk v1.0.4 gives the handshake 10 times its read timeout, 6.7 session
// timeouts, and retries only after it. A server that accepts a connection
// but never answers it holds the client that long: ZooKeeper 3.8.0, while
// starting, fails to close the connections it refuses ("ZooKeeperServer not
// running", then a NullPointerException in the close), which delayed new
// sessions after a restart by 13s with 2s sessions in the fault suite. The
// Java client gives a connection attempt the session timeout divided by the
// number of servers; max is the session timeout. Deadlines after the
// handshake (2/3 of the negotiated session timeout) are left alone.
type handshakeConn struct {
	net.Conn
	max  time.Duration
	done atomic.Bool // a byte was read: the handshake is answered
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.done.Store(true)
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

// dialZK dials with Options.Dial and caps the handshake's deadlines.
func (r *Registry) dialZK(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := r.dial(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &handshakeConn{Conn: c, max: r.timeout}, nil
}
