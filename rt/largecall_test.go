package rt_test

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// A large call copies its message as few times as it must. Client and
// server share this process, so the bound is on both sides' bytes
// together. What a call of this test's echo (request and response of one
// size) allocates: the client's copy of the response and the test
// message's decoded string; the server's decoded string of the request:
// 3 copies, and up to one more when a pool misses (a buffer put back on
// one processor may not be found from another; 3.0 to 3.46 in 20 runs).
// The read and write buffers come from pools; the garbage
// collector is off while the calls are counted, so that the count is of
// the copies a call makes, not of what the pools lost to a collection
// (with it on, the count moved between 5.3 and 7.0 from run to run). The
// write buffers are sized once, not grown append by append: package
// sock's TestLargeFrameSizedOnce.
func TestLargeCallCopies(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	e := newEnv(t, nil)
	for _, tc := range []struct {
		size int
		max  float64 // copies of the message per call, both sides
	}{{256 << 10, 4}} {
		size := tc.size
		big := strings.Repeat("x", size)
		for range 3 { // warm-up: connection, pools
			if _, err := call(ctxT(t), e.cli, &testDesc, 0, big); err != nil {
				t.Fatal(err)
			}
		}
		const n = 20
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			if _, err := call(ctxT(t), e.cli, &testDesc, 0, big); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		copies := float64(after.TotalAlloc-before.TotalAlloc) / n / float64(size)
		t.Logf("%d KiB: %.2f copies of the message per call, both sides", size>>10, copies)
		if copies > tc.max {
			t.Errorf("%d KiB: %.2f copies per call, want at most %g", size>>10, copies, tc.max)
		}
	}
}
