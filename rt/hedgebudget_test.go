package rt_test

import (
	"slices"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
)

// Hedges are retries sent early, and the retry budget bounds them: with
// every provider failing, a method hedged over three tries sends one
// attempt per call plus what the budget allows, not three per call. (The
// budget here: no ratio, a floor of 2 per second of the client's clock,
// which does not move.)
func TestHedgesSpendTheRetryBudget(t *testing.T) {
	c := newClusterWith(t, 3, func(_ int, impl *testImpl) { impl.fail = true }, rt.WithRetryBudget(0, 2))
	sd := testDesc
	sd.Methods = slices.Clone(testDesc.Methods)
	sd.Methods[3].Policy.Retry.Tries = 3
	sd.Methods[3].Policy.Hedge = time.Hour // hedged when an attempt fails, not by the timer
	const calls = 6                        // few enough for the breakers (20 results) to stay closed
	for i := range calls {
		if _, err := call(ctxT(t), c.cli, &sd, 3, "x"); rt.CodeOf(err) != rt.Unavailable {
			t.Fatalf("call %d: %v, want Unavailable", i, err)
		}
	}
	if got, want := c.obs.attempts.Load(), int64(calls+2); got != want {
		t.Fatalf("%d attempts for %d hedged calls to a failing cluster, want %d (one each and the budget's 2)", got, calls, want)
	}
}
