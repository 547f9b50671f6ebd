package rt

import (
	"testing"
	"time"
)

func TestRetryBudget(t *testing.T) {
	var b retryBudget
	b.init(0.1, 1) // 10 % of requests + 1/s over the 10 s window
	now := time.Unix(1_700_000_000, 0)
	for range 100 {
		b.request(now)
	}
	allowed := 0
	for range 50 {
		if b.retry(now) {
			allowed++
		}
	}
	if allowed != 20 { // 0.1 × 100 + 1 × 10
		t.Fatalf("%d retries allowed, want 20", allowed)
	}
	// Ten seconds on, the window holds none of it: only the floor.
	later := now.Add(budgetWindow * time.Second)
	allowed = 0
	for range 50 {
		if b.retry(later) {
			allowed++
		}
	}
	if allowed != 10 {
		t.Fatalf("after the window: %d retries allowed, want the floor's 10", allowed)
	}
}
