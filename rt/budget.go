package rt

import (
	"sync/atomic"
	"time"
)

// retryBudget caps retries at a fraction of recent first attempts plus a
// floor per second, over a sliding window of budgetWindow seconds, so that
// retries cannot multiply the load on a failing cluster (the idea of
// Finagle's RetryBudget). It takes no lock: counts are per-second atomic
// buckets, and a bucket reused for a new second is reset with a
// compare-and-swap, so a few counts may be lost at a second's turn — the
// budget is a bound on load, not an exact ledger.
type retryBudget struct {
	ratio, floor float64
	buckets      [budgetWindow]budgetBucket
}

const budgetWindow = 10 // seconds

type budgetBucket struct {
	sec               atomic.Int64
	requests, retries atomic.Int64
}

func (b *retryBudget) init(ratio, floor float64) { b.ratio, b.floor = ratio, floor }

// bucket returns the bucket of second sec, reset if it held an older one.
func (b *retryBudget) bucket(sec int64) *budgetBucket {
	bk := &b.buckets[sec%budgetWindow]
	if old := bk.sec.Load(); old != sec && bk.sec.CompareAndSwap(old, sec) {
		bk.requests.Store(0)
		bk.retries.Store(0)
	}
	return bk
}

// request counts a first attempt.
func (b *retryBudget) request(now time.Time) { b.bucket(now.Unix()).requests.Add(1) }

// retry reports whether one more retry fits the budget, and counts it.
func (b *retryBudget) retry(now time.Time) bool {
	sec := now.Unix()
	var reqs, rets int64
	for i := range b.buckets {
		if bk := &b.buckets[i]; sec-bk.sec.Load() < budgetWindow {
			reqs += bk.requests.Load()
			rets += bk.retries.Load()
		}
	}
	if float64(rets) >= b.ratio*float64(reqs)+b.floor*budgetWindow {
		return false
	}
	b.bucket(sec).retries.Add(1)
	return true
}
