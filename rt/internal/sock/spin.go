package sock

import (
	"runtime"
	"sync/atomic"
)

// SpinGate bounds how many readers of one Client or Server poll their
// sockets at once (see Peeker.await): half the Ps, at least one, so that
// polling never takes the CPU the process needs for work.
type SpinGate struct {
	busy atomic.Int32
	max  int32
}

func NewSpinGate() *SpinGate {
	return &SpinGate{max: int32(max(1, runtime.GOMAXPROCS(0)/2))}
}

func (g *SpinGate) enter() bool {
	if g.busy.Add(1) > g.max {
		g.busy.Add(-1)
		return false
	}
	return true
}

func (g *SpinGate) leave() { g.busy.Add(-1) }

// maxSpinSkip caps the chances to poll that a connection skips after
// polls that ran out of budget.
const maxSpinSkip = 63

// LoneAvg tracks how many calls a connection carries at a time: an average
// over the last few samples (fixed point, 16 = one call). Its owner
// serializes updates.
type LoneAvg int32

// add takes a sample of n calls and reports whether the connection
// carries about one call at a time (under 1.5 on average), the case where
// polling for the answer pays (see WithSpinWait). A burst of load that
// leaves one call alone for a moment does not pass.
func (a *LoneAvg) Add(n int) bool {
	*a += LoneAvg((int32(min(n, 1<<20))<<4 - int32(*a)) >> 3)
	return *a < 24
}
