package rt_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/balance"
)

// cancelOnRetry is a Builder whose picker picks the first node not tried,
// and first calls the function in cancel when the pick is not the call's
// first (a retry, a hedge): the caller's context ends between attempts.
type cancelOnRetry struct{ cancel *atomic.Pointer[func()] }

func (cancelOnRetry) Name() string { return "cancel-on-retry" }
func (b cancelOnRetry) Build(nodes []balance.Node, _ time.Time) balance.Picker {
	return cancelPicker{n: len(nodes), cancel: b.cancel}
}

type cancelPicker struct {
	n      int
	cancel *atomic.Pointer[func()]
}

func (p cancelPicker) Pick(info *balance.Info) int {
	if f := p.cancel.Load(); f != nil && info != nil && len(info.Tried) > 0 {
		(*f)()
	}
	for i := range p.n {
		if info == nil || !slices.Contains(info.Tried, i) {
			return i
		}
	}
	return -1
}

// No attempt leaves after the caller's context ended: a call whose first
// attempt failed, and whose context was canceled before the next one,
// stops instead of sending that attempt to another provider (it would run
// there for a caller that is gone). Both the failover path and the hedged
// path (a hedge sent at once because the first attempt failed) are
// checked; provider 0 fails every call, provider 1 answers.
func TestNoAttemptAfterTheContextEnded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method int
	}{
		{"failover", 2}, // Retry: idempotent, 3 tries
		{"hedge", 3},    // Hedge: idempotent, 2 tries, hedged after 20ms
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cancel atomic.Pointer[func()]
			c := newClusterWith(t, 2, func(i int, impl *testImpl) { impl.fail = i == 0 }, rt.WithBalancer(cancelOnRetry{&cancel}))
			// Warm: the retry reaches provider 1, so its connection is up
			// and a late attempt would find it ready.
			if _, err := call(ctxT(t), c.cli, &testDesc, tc.method, "warm"); err != nil {
				t.Fatalf("warm call: %v", err)
			}
			c.obs.mu.Lock()
			warm := c.obs.byInstance[c.addr(1)]
			c.obs.mu.Unlock()
			// Fewer calls than the breaker's minimum volume (20), so
			// provider 0's breaker stays closed and every call tries it
			// first.
			for i := range 10 {
				ctx, cancelCtx := context.WithCancel(ctxT(t))
				f := func() { cancelCtx() }
				cancel.Store(&f)
				_, err := call(ctx, c.cli, &testDesc, tc.method, "x")
				cancelCtx()
				if err == nil {
					t.Fatalf("call %d succeeded on another provider after its context was canceled", i)
				}
			}
			c.obs.mu.Lock()
			late := c.obs.byInstance[c.addr(1)] - warm
			c.obs.mu.Unlock()
			if late != 0 {
				t.Fatalf("%d attempts sent to provider 1 after their call's context was canceled", late)
			}
		})
	}
}
