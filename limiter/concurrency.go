package limiter

import "sync/atomic"

// Concurrency limits how many calls are in flight at once. Acquire admits
// a call if fewer than Max are in flight; every admitted call must Release
// exactly once when it ends.
//
// Max ≤ 0 means no limit: Acquire always succeeds and InFlight still
// counts. The zero Concurrency is unlimited and ready to use. It is safe
// for concurrent use, lock-free and allocation-free. It must not be copied
// after first use.
type Concurrency struct {
	max      atomic.Int64
	inFlight atomic.Int64
}

// NewConcurrency returns a limiter admitting at most max calls at once
// (max ≤ 0: no limit).
func NewConcurrency(max int) *Concurrency {
	c := new(Concurrency)
	c.max.Store(int64(max))
	return c
}

// Acquire admits one call and reports true, or reports false, admitting
// nothing, if Max calls are already in flight.
func (c *Concurrency) Acquire() bool {
	for {
		n, m := c.inFlight.Load(), c.max.Load()
		if m > 0 && n >= m {
			return false
		}
		if c.inFlight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release ends one admitted call. A Release without a matching Acquire is
// a bug; it is ignored when nothing is in flight.
func (c *Concurrency) Release() {
	for {
		n := c.inFlight.Load()
		if n <= 0 || c.inFlight.CompareAndSwap(n, n-1) {
			return
		}
	}
}

// InFlight returns how many admitted calls have not been released.
func (c *Concurrency) InFlight() int { return int(c.inFlight.Load()) }

// Max returns the limit (≤ 0: none).
func (c *Concurrency) Max() int { return int(c.max.Load()) }

// SetMax changes the limit. Lowering it below InFlight refuses new calls
// until enough have been released; none is interrupted.
func (c *Concurrency) SetMax(max int) { c.max.Store(int64(max)) }
