package conn

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/wire"
)

// Reading a connection. One goroutine at a time holds the read
// role and reads frames, handing each response to its caller:
//
//   - A caller that finds the role free after sending its request takes it
//     and reads until its own response arrives (leads). A caller alone on
//     the connection thus reads its own answer, as a plain blocking
//     request-response would: no hand-off between goroutines, which on a
//     two-core machine costs tens of microseconds of futex wake-ups.
//   - When the leader is done and other calls are still waiting, it hands
//     the role to the connection's background goroutine, which reads until
//     no call is pending and then lets the role go. Under load the
//     background goroutine keeps the role and hands each response over.
//   - A connection with no call pending for idleReadAfter gets the
//     background goroutine reading again, so that GOAWAY, pongs and a
//     closed connection are noticed while it is idle.
//
// The role is guarded by mu (reading); the holder owns r and rdl.
//
// While the role is free nobody would notice the server closing the
// connection; so before a call uses a connection whose role is free,
// closedWhileUnread peeks at the socket, and a closed one is replaced
// before the request is sent (a request written into a closed connection
// could not be retried safely).

// idleReadAfter is how long a connection may go unread with no call
// pending before the background goroutine reads it again.
const idleReadAfter = 5 * time.Millisecond

// closedWhileUnread reports whether the server closed the connection, or
// told it to go away, while nobody was reading it; the connection is then
// failed or retired. When the read role is held it costs an atomic load
// (the holder notices at once); when it is free, a non-blocking peek
// syscall, and when that finds bytes waiting (a GoAway before a close, or
// TLS's close_notify, which TLS 1.3 encrypts), a read of what is there.
func (c *Conn) closedWhileUnread() bool {
	if c.readHeld.Load() {
		return false
	}
	switch closed, readable := c.peek.State(); {
	case closed:
		c.fail(io.EOF)
		return true
	case readable:
		return c.readUnread()
	}
	return false
}

// unreadWait bounds readUnread's wait for the rest of a frame whose first
// bytes are in.
const unreadWait = time.Millisecond

// readUnread takes the free read role and handles the frames the server
// sent while nobody read, before a call uses the connection. It reports
// whether the connection is no longer usable.
func (c *Conn) readUnread() bool {
	c.mu.Lock()
	if c.reading || c.err != nil {
		c.mu.Unlock()
		return c.err != nil
	}
	c.setReading(true)
	c.mu.Unlock()
	c.setReadDeadline(time.Now().Add(unreadWait))
	for {
		f, err := c.r.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break // what is in is handled; the rest of a frame can wait
		}
		if err != nil {
			c.fail(err)
			return true
		}
		if !c.handle(f) {
			return true
		}
		if _, more := c.peek.State(); c.r.Buffered() == 0 && !more {
			break
		}
	}
	c.release()
	return !c.usable()
}

// setReading records whether a goroutine holds the read role. Called with
// mu held.
func (c *Conn) setReading(v bool) {
	c.reading = v
	c.readHeld.Store(v)
}

// awaitLeading waits for the response of call id after its request was
// sent: as the leader when the read role is free, else for the role's
// holder to hand the response over. A leader whose call was alone on the
// connection polls the socket before it parks (see WithSpinWait).
func (c *Conn) awaitLeading(ctx context.Context, r *Request, id uint32, p *Pending, alone, watched bool) error {
	if c.readHeld.Load() {
		// Someone reads, and while calls are pending (this one is) the
		// role is handed on rather than let go (release): wait, without
		// the lock.
		return c.await(ctx, r, id, p, watched)
	}
	c.mu.Lock()
	lead := !c.reading && c.err == nil
	if lead {
		c.setReading(true)
		c.leads++
	}
	c.mu.Unlock()
	if !lead {
		return c.await(ctx, r, id, p, watched)
	}
	// The deadline is set before the interrupt is armed, so that an
	// interrupt (a deadline in the past) always comes after it.
	c.setReadDeadline(r.Deadline)
	var stop func() bool
	if ctx.Done() != nil {
		stop = c.armInterrupt(ctx)
	}
	err := c.lead(ctx, r, id, p, alone)
	if stop != nil {
		stop()
	}
	return err
}

// armInterrupt makes sure that the end of ctx interrupts the read of the
// leader whose context it is, and returns the registration's stop
// function for the leader to call when its call ends, or nil when the
// registration is kept past the call. It is kept from the second leading
// call in a row with the same context: callers that share one context
// then cost no allocation per call, while a context made for one call
// (context.WithTimeout with a deferred cancel) is let go before it ends,
// so that its end does not interrupt the reads of later calls. A kept
// registration lasts until a leader with another context replaces it or
// the connection fails; its interrupt, should its context end while
// another call's reader holds the role, is harmless: readers take a read
// deadline that passed for a cue to look, not for an error. Only the read
// role's holder calls it.
func (c *Conn) armInterrupt(ctx context.Context) (stop func() bool) {
	done := ctx.Done()
	c.mu.Lock()
	if c.armedDone == done && ctx.Err() == nil {
		// Still armed: ctx has not ended (it would have fired after
		// the read deadline was set).
		c.mu.Unlock()
		return nil
	}
	keep := c.lastDone == done
	c.lastDone = done
	old := c.armedStop
	c.armedDone, c.armedStop = nil, nil
	c.mu.Unlock()
	if old != nil {
		old()
	}
	stop = context.AfterFunc(ctx, c.interrupt)
	if !keep {
		return stop
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return stop // fail has run and would not stop a kept one
	}
	c.armedDone, c.armedStop = done, stop
	return nil
}

// lead reads frames as the role's holder until the response of call id
// arrives, the call's deadline passes or its context ends; then it lets
// the role go. The read deadline is set already.
func (c *Conn) lead(ctx context.Context, r *Request, id uint32, p *Pending, alone bool) error {
	for {
		select {
		case <-p.done:
			c.release()
			return p.result()
		default:
		}
		if alone && c.r.Buffered() == 0 {
			c.peek.Await(c.cfg.SpinWait, c.cfg.SpinGate) // see rt.WithSpinWait
		}
		f, err := c.r.Next()
		switch {
		case err == nil:
			c.handle(f)
		case !errors.Is(err, os.ErrDeadlineExceeded):
			c.fail(err) // answers every pending call, this one too
		case ctx.Err() != nil:
			return c.giveUp(id, p, ctxError(ctx.Err(), r.Name))
		case !r.Deadline.IsZero() && !time.Now().Before(r.Deadline):
			return c.giveUp(id, p, errorf(DeadlineExceeded, "%s: deadline exceeded waiting for %s", r.Name, c.addr))
		default:
			// The interrupt of a context that ended after its call did
			// (see armInterrupt): read on. The context is looked at
			// again once the deadline is back: its interrupt may have
			// come in between.
			c.rdlSet = false
			c.setReadDeadline(r.Deadline)
			if ctx.Err() != nil {
				return c.giveUp(id, p, ctxError(ctx.Err(), r.Name))
			}
		}
	}
}

// giveUp ends a leading call that will not wait for its response: it lets
// the role go, then abandons the call as a waiting caller would.
func (c *Conn) giveUp(id uint32, p *Pending, err error) error {
	if !c.takePending(id) {
		c.release()
		<-p.done
		return p.result()
	}
	c.release()
	c.sendCancel(id)
	return err
}

// release lets the read role go: to the background goroutine when calls
// are pending, else to nobody until the idle watch hands it over.
func (c *Conn) release() {
	c.mu.Lock()
	handOff := (len(c.pending) > 0 || len(c.streams) > 0) && c.err == nil
	c.setReading(handOff)
	c.mu.Unlock()
	if handOff {
		c.wake <- struct{}{} // capacity 1: the background goroutine is not reading
		return
	}
	c.watchIdle()
}

// background is the connection's own reading goroutine: it waits for the
// role to be handed to it, then reads while calls are pending.
func (c *Conn) background() {
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		if !c.readPending() {
			return
		}
	}
}

// readPending reads frames while calls are pending, then lets the role go.
// It returns false once the connection failed.
func (c *Conn) readPending() bool {
	for {
		c.setReadDeadline(time.Time{})
		f, err := c.r.Next()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				c.rdlSet = false // a late interrupt: read on
				continue
			}
			c.fail(err)
			return false
		}
		if !c.handle(f) {
			return false
		}
		if c.r.Ready() {
			continue // the next frame is here already: no wait, no lock
		}
		c.mu.Lock()
		idle := len(c.pending) == 0 && len(c.streams) == 0
		if idle {
			c.setReading(false)
		}
		c.mu.Unlock()
		if idle {
			c.watchIdle()
			return true
		}
	}
}

// setReadDeadline sets the connection's read deadline to d unless it is
// set to d already. Only the role's holder calls it.
func (c *Conn) setReadDeadline(d time.Time) {
	if c.rdlSet && c.rdl.Equal(d) {
		return
	}
	_ = c.nc.SetReadDeadline(d)
	c.rdl, c.rdlSet = d, true
}

// handle acts on one frame read by the role's holder. It returns false
// when the connection has failed.
func (c *Conn) handle(f *wire.Frame) bool {
	c.frames.Add(1)
	switch f.Type {
	case wire.TypeResponse:
		c.mu.Lock()
		p := c.pending[f.ID]
		if p != nil {
			delete(c.pending, f.ID)
			c.unwatchLocked(p)
		}
		c.mu.Unlock()
		if p == nil {
			return true // canceled or timed out: the caller is gone
		}
		p.err = p.decode(f, c.addr)
		p.done <- struct{}{}
		if c.retiredIdle() {
			c.fail(c.goneErr())
			return false
		}
	case wire.TypePing:
		id := f.ID
		_ = c.w.Write(func(b []byte) []byte {
			return wire.AppendFrame(b, &wire.Header{Type: wire.TypePong, ID: id}, nil, nil)
		}, sock.Queued) // the reader must not block on a peer that does not read
	case wire.TypePong:
		c.pinged.Store(false)
	case wire.TypeGoAway:
		c.retireWith(f)
		if c.retiredIdle() {
			c.fail(c.goneErr())
			return false
		}
	case wire.TypeStreamMessage, wire.TypeStreamClose, wire.TypeStreamReset, wire.TypeWindowUpdate:
		return c.handleStream(f)
	default:
		c.fail(errorf(Unavailable, "unexpected %s frame from server %s", f.Type, c.addr))
		return false
	}
	return true
}

// watchIdle starts the idle watch unless it runs already. It keeps itself
// running while callers lead and stops once it handed the role over, so
// it costs no timer operation per call.
func (c *Conn) watchIdle() {
	if !c.watching.Load() && c.watching.CompareAndSwap(false, true) {
		c.idle.Reset(idleReadAfter)
	}
}

// idleWatch runs every idleReadAfter while the role is free: after a
// period in which no caller led, the background goroutine takes the role.
func (c *Conn) idleWatch() {
	c.mu.Lock()
	switch {
	case c.err != nil || c.reading:
		// Failed, or someone reads: the next release starts the watch
		// again (it sets reading under mu, so it comes after this).
		c.watching.Store(false)
		c.mu.Unlock()
	case c.leads != c.seenLeads:
		// Callers are reading for themselves: look again later.
		c.seenLeads = c.leads
		c.mu.Unlock()
		c.idle.Reset(idleReadAfter)
	default:
		c.setReading(true)
		c.mu.Unlock()
		c.watching.Store(false)
		c.wake <- struct{}{}
	}
}
