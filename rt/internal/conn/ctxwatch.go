package conn

import "context"

// ctxWatch lets the calls of one context that many callers share wait on
// their own Pending's channel alone.
//
// A caller that waits for its answer must also wake when its context
// ends. Selecting on the context's Done channel as well costs little when
// the context is the call's own, but when many goroutines call with one
// context (a worker pool under a signal.NotifyContext, a batch job's
// context) every waiting caller queues on that one channel and takes its
// lock twice per call, so their calls contend for it (measured with 32
// callers of a shared context: about 0.4 µs more per call than with
// context.Background). So the second call in a row with the same context
// registers one context.AfterFunc for the connection, whose run answers
// every pending call of that context, as a caller giving up would
// (abandon); until then, and for calls of other contexts while it watches
// one, callers select as before. A watch is replaced, by the context of
// two calls in a row, only when no pending call relies on it; it ends
// with its context or the connection.
//
// Its fields are guarded by Conn.mu.
type ctxWatch struct {
	done  <-chan struct{} // the watched context's; nil: none
	stop  func() bool     // the AfterFunc's stop
	ended bool            // the watched context ended: its calls select again
	users int             // pending calls with Pending.watched set
	last  <-chan struct{} // Done of the last call that was not watched
}

// watchLocked reports whether the call of p, just added to pending with
// ctx, is answered when ctx ends (Pending.watched), starting a watch when
// ctx is the context of two calls in a row. Called with c.mu held.
func (c *Conn) watchLocked(ctx context.Context, p *Pending, name string) bool {
	done := ctx.Done()
	w := &c.watch
	switch {
	case done == nil:
		return false
	case done == w.done:
		if w.ended {
			return false
		}
	case done != w.last || w.users > 0 || ctx.Err() != nil:
		w.last = done
		return false
	default:
		if w.stop != nil {
			w.stop()
		}
		w.done, w.ended, w.last = done, false, nil
		w.stop = context.AfterFunc(ctx, func() { c.contextEnded(ctx, done) })
	}
	w.users++
	p.watched, p.name = true, name
	return true
}

// unwatchLocked notes that p left pending. Called with c.mu held.
func (c *Conn) unwatchLocked(p *Pending) {
	if p.watched {
		p.watched = false
		c.watch.users--
	}
}

// contextEnded answers, with ctx's error, the pending calls that wait for
// the end of the watched context ctx, and asks the server to cancel them.
func (c *Conn) contextEnded(ctx context.Context, done <-chan struct{}) {
	c.mu.Lock()
	w := &c.watch
	if w.done != done {
		c.mu.Unlock()
		return // replaced: none of its calls was pending
	}
	w.ended = true
	var ids []uint32
	for id, p := range c.pending {
		if !p.watched {
			continue
		}
		delete(c.pending, id)
		p.watched = false
		p.err = ctxError(ctx.Err(), p.name)
		p.done <- struct{}{} // capacity 1: only who takes it out of pending sends
		ids = append(ids, id)
	}
	w.users = 0
	c.mu.Unlock()
	for _, id := range ids {
		c.sendCancel(id)
	}
}

// stopWatchLocked ends the watch, for a connection that failed. Called
// with c.mu held; returns the registration's stop function to call after.
func (c *Conn) stopWatchLocked() func() bool {
	stop := c.watch.stop
	c.watch = ctxWatch{}
	return stop
}
