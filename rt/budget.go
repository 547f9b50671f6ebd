package rt

import (
	"sync/atomic"
	"time"
)

// retryBudget caps retries so that they cannot multiply the load on a
// failing cluster (the idea of Finagle's RetryBudget): a retry is allowed
// when the ratio's credit covers it — ratio times the first attempts of
// the last budgetWindow seconds, less the retries that credit already paid
// for — or else when the floor's allowance of the current second (floor
// retries per second, which does not accumulate) has some left. So in any
// one second at most floor + ratio·(first attempts in the window) retries
// go out, and a client with no traffic gets floor per second, not a burst
// of a whole window's worth.
//
// It takes no lock: counts are per-second atomic buckets, and a bucket
// reused for a new second is reset with a compare-and-swap, so a few
// counts may be lost at a second's turn — the budget is a bound on load,
// not an exact ledger; the floor is spent with compare-and-swap and never
// exceeded.
type retryBudget struct {
	ratio, floor float64
	buckets      [budgetWindow]budgetBucket
}

const budgetWindow = 10 // seconds

type budgetBucket struct {
	sec      atomic.Int64
	requests atomic.Int64 // first attempts
	paid     atomic.Int64 // retries paid by the ratio's credit
	floor    atomic.Int64 // retries paid by the floor
}

func (b *retryBudget) init(ratio, floor float64) { b.ratio, b.floor = ratio, floor }

// bucket returns the bucket of second sec, reset if it held an older one.
func (b *retryBudget) bucket(sec int64) *budgetBucket {
	bk := &b.buckets[sec%budgetWindow]
	if old := bk.sec.Load(); old != sec && bk.sec.CompareAndSwap(old, sec) {
		bk.requests.Store(0)
		bk.paid.Store(0)
		bk.floor.Store(0)
	}
	return bk
}

// request counts a first attempt.
func (b *retryBudget) request(now time.Time) { b.bucket(now.Unix()).requests.Add(1) }

// retry reports whether one more retry fits the budget, and counts it.
func (b *retryBudget) retry(now time.Time) bool {
	sec := now.Unix()
	cur := b.bucket(sec)
	var reqs, paid int64
	for i := range b.buckets {
		if bk := &b.buckets[i]; sec-bk.sec.Load() < budgetWindow {
			reqs += bk.requests.Load()
			paid += bk.paid.Load()
		}
	}
	if float64(paid) < b.ratio*float64(reqs) {
		cur.paid.Add(1)
		return true
	}
	for {
		n := cur.floor.Load()
		if float64(n) >= b.floor {
			return false
		}
		if cur.floor.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
