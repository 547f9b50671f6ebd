package memnet

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// BufferSize is how many bytes each direction of a connection holds before
// a write waits for the peer to read, as a socket's buffers do (net.Pipe
// holds none: each write would wait for the peer's read).
const BufferSize = 256 << 10

// half is one direction of a connection: bytes written by one end, read by
// the other.
type half struct {
	mu      sync.Mutex
	buf     []byte
	eof     bool          // the writing end closed: the reader gets io.EOF once buf is read
	gone    bool          // the reading end closed: writes fail
	changed chan struct{} // closed and replaced on every change
}

func newHalf() *half { return &half{changed: make(chan struct{})} }

// signal wakes the waiters. Called with mu held.
func (h *half) signal() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// deadline is a connection end's read or write deadline.
type deadline struct {
	mu sync.Mutex
	t  time.Time
	ch chan struct{} // closed when t is set again, so waits recompute
}

func newDeadline() *deadline { return &deadline{ch: make(chan struct{})} }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	d.t = t
	close(d.ch)
	d.ch = make(chan struct{})
	d.mu.Unlock()
}

func (d *deadline) get() (time.Time, chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.t, d.ch
}

// wait blocks until changed is closed, the deadline passes (it returns
// os.ErrDeadlineExceeded) or is set again, or closed is closed.
func (d *deadline) wait(changed, closed <-chan struct{}) error {
	t, reset := d.get()
	var timeout <-chan time.Time
	if !t.IsZero() {
		left := time.Until(t)
		if left <= 0 {
			return os.ErrDeadlineExceeded
		}
		timer := time.NewTimer(left)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case <-changed:
	case <-reset:
	case <-closed:
	case <-timeout:
		return os.ErrDeadlineExceeded
	}
	return nil
}

// pipeConn is one end of an in-memory connection with socket-like
// buffering and deadlines.
type pipeConn struct {
	in, out       *half
	local, remote Addr
	rdl, wdl      *deadline
	once          sync.Once
	closed        chan struct{}
}

// pipe returns the two ends of a connection.
func pipe(a, b Addr) (*pipeConn, *pipeConn) {
	ab, ba := newHalf(), newHalf()
	return &pipeConn{in: ba, out: ab, local: a, remote: b, rdl: newDeadline(), wdl: newDeadline(), closed: make(chan struct{})},
		&pipeConn{in: ab, out: ba, local: b, remote: a, rdl: newDeadline(), wdl: newDeadline(), closed: make(chan struct{})}
}

func (c *pipeConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

func (c *pipeConn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "mem", Source: c.local, Addr: c.remote, Err: err}
}

func (c *pipeConn) Read(b []byte) (int, error) {
	h := c.in
	for {
		if c.isClosed() {
			return 0, c.opErr("read", net.ErrClosed)
		}
		h.mu.Lock()
		if len(h.buf) > 0 {
			n := copy(b, h.buf)
			h.buf = h.buf[n:]
			if len(h.buf) == 0 {
				h.buf = nil
			}
			h.signal()
			h.mu.Unlock()
			return n, nil
		}
		if h.eof {
			h.mu.Unlock()
			return 0, io.EOF
		}
		changed := h.changed
		h.mu.Unlock()
		if err := c.rdl.wait(changed, c.closed); err != nil {
			return 0, c.opErr("read", err)
		}
	}
}

func (c *pipeConn) Write(b []byte) (int, error) {
	h := c.out
	n := 0
	for n < len(b) {
		if c.isClosed() {
			return n, c.opErr("write", net.ErrClosed)
		}
		h.mu.Lock()
		if h.gone || h.eof {
			h.mu.Unlock()
			return n, c.opErr("write", io.ErrClosedPipe)
		}
		if room := BufferSize - len(h.buf); room > 0 {
			k := min(room, len(b)-n)
			h.buf = append(h.buf, b[n:n+k]...)
			n += k
			h.signal()
			h.mu.Unlock()
			continue
		}
		changed := h.changed
		h.mu.Unlock()
		if err := c.wdl.wait(changed, c.closed); err != nil {
			return n, c.opErr("write", err)
		}
	}
	return n, nil
}

// Close closes both directions: the peer reads what was written, then
// io.EOF, and its writes fail.
func (c *pipeConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.out.mu.Lock()
		c.out.eof = true
		c.out.signal()
		c.out.mu.Unlock()
		c.in.mu.Lock()
		c.in.gone = true
		c.in.buf = nil
		c.in.signal()
		c.in.mu.Unlock()
	})
	return nil
}

// CloseWrite closes the writing direction only, as TCP's half-close: the
// peer reads io.EOF after what was written.
func (c *pipeConn) CloseWrite() error {
	c.out.mu.Lock()
	c.out.eof = true
	c.out.signal()
	c.out.mu.Unlock()
	return nil
}

func (c *pipeConn) LocalAddr() net.Addr  { return c.local }
func (c *pipeConn) RemoteAddr() net.Addr { return c.remote }

func (c *pipeConn) SetDeadline(t time.Time) error {
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}

func (c *pipeConn) SetReadDeadline(t time.Time) error  { c.rdl.set(t); return nil }
func (c *pipeConn) SetWriteDeadline(t time.Time) error { c.wdl.set(t); return nil }
