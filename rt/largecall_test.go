package rt_test

import (
	"runtime"
	"strings"
	"testing"
)

// A large call's frames are encoded into buffers sized once, not grown
// append by append. Client and server share this process, so the bound is
// on both sides' bytes together. What a call of this test's echo (request
// and response of one size) allocates: the client's write buffer, its
// copy of the response and the test message's decoded string; the
// server's decoded request and its write buffer (the read buffers come
// from the pool below its 1 MiB cap): about 5.5 copies. Grown by appends,
// the two write buffers made it 7.6.
func TestLargeCallCopies(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	e := newEnv(t, nil)
	for _, tc := range []struct {
		size int
		max  float64 // copies of the message per call, both sides
	}{{256 << 10, 6.5}} {
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
