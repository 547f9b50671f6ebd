package h2

import "sync/atomic"

// Inflow is a receive window: what the peer may still send on a stream
// or on the connection, and what the receiver consumed but has not yet
// granted back. Take counts bytes that arrive; Add counts bytes consumed
// (processed, dropped or padding) and says when a WINDOW_UPDATE is due,
// batching increments: once a quarter of the window is consumed, or at
// once when the peer has less credit left than that.
//
// Take and Add may be called from different goroutines at once. The zero
// value is a window of size 0; use Init.
type Inflow struct {
	size   int64
	avail  atomic.Int64 // what the peer may still send
	unsent atomic.Int64 // consumed, not yet granted
}

// Init sets the window's size, all of it granted to the peer (a stream's:
// the SETTINGS_INITIAL_WINDOW_SIZE announced; the connection's: 65,535
// plus what the first WINDOW_UPDATE grants).
func (f *Inflow) Init(size int) {
	f.size = int64(size)
	f.avail.Store(int64(size))
	f.unsent.Store(0)
}

// Take counts n bytes received. It reports false, counting nothing, when
// the peer had less credit than that: a flow-control error.
func (f *Inflow) Take(n int) bool {
	if f.avail.Add(-int64(n)) < 0 {
		f.avail.Add(int64(n))
		return false
	}
	return true
}

// Add counts n bytes consumed and returns the increment of a
// WINDOW_UPDATE to send now, or 0 to wait for more.
func (f *Inflow) Add(n int) uint32 {
	if n <= 0 {
		return 0
	}
	u := f.unsent.Add(int64(n))
	if u < f.size/4 && u < f.avail.Load() {
		return 0
	}
	if !f.unsent.CompareAndSwap(u, 0) {
		return 0 // another Add counted more since: it sends the update
	}
	f.avail.Add(u)
	return uint32(u)
}

// Grant gives the peer n more bytes of credit at once, beyond the
// window's size (the caller sends the WINDOW_UPDATE of n after it).
func (f *Inflow) Grant(n int) {
	if n > 0 {
		f.avail.Add(int64(n))
	}
}

// Avail returns what the peer may still send.
func (f *Inflow) Avail() int64 { return f.avail.Load() }

// AddWindow adds a WINDOW_UPDATE's increment (or a change of the initial
// window size, which may be negative) to a send window, reporting false
// when the result would exceed MaxWindow: a flow-control error.
func AddWindow(w *int64, inc int64) bool {
	if *w+inc > MaxWindow {
		return false
	}
	*w += inc
	return true
}
