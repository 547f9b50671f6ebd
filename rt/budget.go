package rt

import (
	"sync"
	"time"
)

// retryBudget caps retries at a fraction of recent first attempts plus a
// floor per second, over a sliding window of budgetWindow seconds, so that
// retries cannot multiply the load on a failing cluster (the idea of
// Finagle's RetryBudget).
type retryBudget struct {
	ratio, floor float64

	mu      sync.Mutex
	buckets [budgetWindow]budgetBucket
}

const budgetWindow = 10 // seconds

type budgetBucket struct {
	sec               int64
	requests, retries int64
}

func (b *retryBudget) init(ratio, floor float64) { b.ratio, b.floor = ratio, floor }

func (b *retryBudget) bucket(now time.Time) *budgetBucket {
	sec := now.Unix()
	bk := &b.buckets[sec%budgetWindow]
	if bk.sec != sec {
		*bk = budgetBucket{sec: sec}
	}
	return bk
}

// request counts a first attempt.
func (b *retryBudget) request(now time.Time) {
	b.mu.Lock()
	b.bucket(now).requests++
	b.mu.Unlock()
}

// retry reports whether one more retry fits the budget, and counts it.
func (b *retryBudget) retry(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	sec := now.Unix()
	var reqs, rets int64
	for i := range b.buckets {
		if bk := &b.buckets[i]; sec-bk.sec < budgetWindow {
			reqs += bk.requests
			rets += bk.retries
		}
	}
	if float64(rets) >= b.ratio*float64(reqs)+b.floor*budgetWindow {
		return false
	}
	b.bucket(now).retries++
	return true
}
