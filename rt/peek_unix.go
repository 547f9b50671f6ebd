//go:build unix

package rt

import (
	"net"
	"sync"
	"syscall"
)

// peeker tells whether the peer of a connection has closed it (or reset
// it), without reading anything and without waiting: a non-blocking
// MSG_PEEK. Built once per connection, it does not allocate per peek.
type peeker struct {
	rc     syscall.RawConn // nil: not a socket, never closed by this test
	fn     func(uintptr)   // p.peek, bound once
	mu     sync.Mutex      // one peek at a time; the others skip theirs
	buf    [1]byte
	closed bool
}

func newPeeker(nc net.Conn) *peeker {
	p := &peeker{}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			p.rc = rc
		}
	}
	p.fn = p.peek
	return p
}

// peerClosed reports whether the peer closed the connection. It reports
// false for connections that are not sockets, and when another goroutine
// is peeking at the same moment.
func (p *peeker) peerClosed() bool {
	if p.rc == nil || !p.mu.TryLock() {
		return false
	}
	defer p.mu.Unlock()
	p.closed = false
	// Control, not Read: Read would fail at once on a read deadline in
	// the past (an interrupt left by a caller that gave up), which says
	// nothing about the peer; MSG_DONTWAIT never blocks anyway.
	err := p.rc.Control(p.fn)
	return p.closed || err != nil // err: the connection is closed here
}

func (p *peeker) peek(fd uintptr) {
	n, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	p.closed = n == 0 && err == nil || err == syscall.ECONNRESET || err == syscall.EPIPE
}
