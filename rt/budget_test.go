package rt

import (
	"testing"
	"time"
)

// retries counts the retries the budget allows at now, trying up to n.
func (b *retryBudget) retries(now time.Time, n int) int {
	allowed := 0
	for range n {
		if b.retry(now) {
			allowed++
		}
	}
	return allowed
}

// In any one second, at most floor + ratio·(first attempts in the window)
// retries: a client with no calls gets the floor each second, not a
// window's worth at once.
func TestRetryBudget(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	t.Run("no calls: the floor per second", func(t *testing.T) {
		var b retryBudget
		b.init(0.1, 10)
		for s := range 15 {
			now := start.Add(time.Duration(s)*time.Second + 300*time.Millisecond)
			if got := b.retries(now, 100); got != 10 {
				t.Fatalf("second %d: %d retries allowed, want the floor's 10", s, got)
			}
		}
	})
	t.Run("the floor does not accumulate", func(t *testing.T) {
		var b retryBudget
		b.init(0.1, 10)
		if got := b.retries(start.Add(30*time.Second), 100); got != 10 {
			t.Fatalf("after 30 idle seconds: %d retries, want 10", got)
		}
	})
	t.Run("ratio of the window's calls plus the floor", func(t *testing.T) {
		var b retryBudget
		b.init(0.1, 10)
		for s := range 10 { // 100 calls a second for 10 s
			for range 100 {
				b.request(start.Add(time.Duration(s) * time.Second))
			}
		}
		now := start.Add(9*time.Second + 500*time.Millisecond)
		if got := b.retries(now, 1000); got != 0.1*1000+10 {
			t.Fatalf("%d retries allowed, want 0.1 × 1000 + 10", got)
		}
		// The next second: the ratio's credit is spent, the floor renews.
		if got := b.retries(now.Add(time.Second), 1000); got != 10 {
			t.Fatalf("the next second: %d retries, want 10 (the floor; the credit is spent)", got)
		}
		// Once the window has moved past the calls, only the floor.
		later := start.Add(25 * time.Second)
		if got := b.retries(later, 1000); got != 10 {
			t.Fatalf("after the window: %d retries allowed, want the floor's 10", got)
		}
	})
}
