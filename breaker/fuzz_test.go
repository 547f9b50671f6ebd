package breaker

import (
	"testing"
	"time"
)

// FuzzBreaker drives a breaker with arbitrary sequences of calls, results,
// releases and clock steps, checking that it never panics, that the
// reported state changes form a chain that agrees with State, and that
// half-open never has more than HalfOpenProbes probes out or succeeded.
func FuzzBreaker(f *testing.F) {
	f.Add(uint8(3), uint8(2), []byte{0, 0, 1, 1, 1, 1, 200, 0, 2, 0, 3})
	f.Add(uint8(1), uint8(1), []byte{0, 1, 0, 1, 255, 255, 0, 2, 0, 2, 4, 0})
	f.Add(uint8(0), uint8(0), []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 250, 0})
	f.Fuzz(func(t *testing.T, consecutive, probes uint8, ops []byte) {
		var last State
		b := New(Settings{
			Window: time.Second, MinRequests: 4, ConsecutiveFailures: int(consecutive % 8),
			OpenFor: 100 * time.Millisecond, HalfOpenProbes: int(probes % 5),
			ProbeTimeout: 300 * time.Millisecond,
			OnStateChange: func(from, to State) {
				if from != last || from == to {
					t.Fatalf("change %v>%v after %v", from, to, last)
				}
				last = to
			},
		})
		n := int(probes % 5)
		if n == 0 {
			n = 3
		}
		now := t0
		var out []Ticket
		for i, op := range ops {
			switch op % 5 {
			case 0: // a call starts
				if tk, ok := b.Allow(now); ok {
					out = append(out, tk)
				}
			case 1, 2: // the oldest call ends: success or failure
				if len(out) > 0 {
					b.Done(now, out[0], op%5 == 1)
					out = out[1:]
				}
			case 3: // the newest call is canceled
				if len(out) > 0 {
					b.Release(out[len(out)-1])
					out = out[:len(out)-1]
				}
			case 4: // time passes
				now = now.Add(time.Duration(op) * time.Millisecond)
			}
			c := b.Counts(now)
			if c.State != last {
				t.Fatalf("op %d: State %v, last change to %v", i, c.State, last)
			}
			if c.State == HalfOpen && c.Probes+c.ProbeSuccesses > n {
				t.Fatalf("op %d: %d probes out and %d succeeded, limit %d", i, c.Probes, c.ProbeSuccesses, n)
			}
		}
	})
}
