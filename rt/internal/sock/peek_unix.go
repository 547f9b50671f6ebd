//go:build unix

package sock

import (
	"net"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Peeker tells whether the peer of a connection has closed it (or reset
// it), without reading anything and without waiting: a non-blocking
// MSG_PEEK. Built once per connection, it does not allocate per peek.
type Peeker struct {
	rc     syscall.RawConn // nil: not a socket, never closed by this test
	fn     func(uintptr)   // p.peek, bound once
	mu     sync.Mutex      // one peek at a time; the others skip theirs
	buf    [1]byte
	closed bool

	pollFn       func(uintptr) // p.poll, bound once
	ready        bool          // the last poll found input or an error
	misses, skip int           // await's back-off; guarded by mu
}

func NewPeeker(nc net.Conn) *Peeker {
	p := &Peeker{}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			p.rc = rc
		}
	}
	p.fn = p.peek
	p.pollFn = p.poll
	return p
}

// PeerClosed reports whether the peer closed the connection. It reports
// false for connections that are not sockets, and when another goroutine
// is peeking at the same moment.
func (p *Peeker) PeerClosed() bool {
	closed, _ := p.State()
	return closed
}

// State reports, without reading or waiting, whether the peer closed the
// connection, and else whether bytes wait to be read. Both are false for
// connections that are not sockets, and when another goroutine is peeking
// at the same moment.
func (p *Peeker) State() (closed, readable bool) {
	if p.rc == nil || !p.mu.TryLock() {
		return false, false
	}
	defer p.mu.Unlock()
	p.closed, p.ready = false, false
	// Control, not Read: Read would fail at once on a read deadline in
	// the past (an interrupt left by a caller that gave up), which says
	// nothing about the peer; MSG_DONTWAIT never blocks anyway.
	err := p.rc.Control(p.fn)
	return p.closed || err != nil, p.ready // err: the connection is closed here
}

func (p *Peeker) peek(fd uintptr) {
	n, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	p.closed = n == 0 && err == nil || err == syscall.ECONNRESET || err == syscall.EPIPE
	p.ready = n > 0
}

// await polls the socket with non-blocking peeks for up to budget, until
// input (or a close) is there, before its reader parks in the netpoller.
// Parking costs a wake-up by the kernel and the Go scheduler, which on a
// VM takes longer than a quick peer takes to answer: polling trades CPU
// for that latency, yielding to the process's other goroutines between
// polls. A poll that runs out of budget makes the connection
// skip the next 1, 3, 7, ... up to maxSpinSkip chances, so a slow or idle
// peer costs little; gate bounds the pollers of one Client or Server.
func (p *Peeker) Await(budget time.Duration, gate *SpinGate) {
	if budget <= 0 || p.rc == nil || !p.mu.TryLock() {
		return
	}
	defer p.mu.Unlock()
	if p.skip > 0 {
		p.skip--
		return
	}
	if !gate.enter() {
		return
	}
	defer gate.leave()
	p.ready = false
	start := time.Now()
	for {
		if err := p.rc.Control(p.pollFn); err != nil || p.ready {
			p.misses = 0
			return
		}
		if time.Since(start) >= budget {
			break
		}
		// Let the process's other goroutines run between polls; the
		// spacing also leaves the socket to the kernel delivering to
		// it (measured at c=1: p50 25 µs with the yield, 32 without).
		runtime.Gosched()
	}
	p.misses = min(2*p.misses+1, maxSpinSkip)
	p.skip = p.misses
}

func (p *Peeker) poll(fd uintptr) {
	n, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	p.ready = n > 0 || err != syscall.EAGAIN
}
