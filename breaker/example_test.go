package breaker_test

import (
	"fmt"
	"time"

	"github.com/yrpc/yrpc/breaker"
)

func Example() {
	b := breaker.New(breaker.Settings{
		ConsecutiveFailures: 3,
		OpenFor:             time.Second,
		HalfOpenProbes:      1,
		OnStateChange: func(from, to breaker.State) {
			fmt.Printf("  %v -> %v\n", from, to)
		},
	})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	call := func(healthy bool) {
		tk, ok := b.Allow(now)
		if !ok {
			fmt.Println("refused: fail fast")
			return
		}
		// ... make the call; the caller decides what counts as a failure.
		b.Done(now, tk, healthy)
		fmt.Println("called, success:", healthy)
	}

	call(false)
	call(false)
	call(false) // the third failure in a row trips the breaker
	call(true)

	now = now.Add(time.Second) // OpenFor later, one probe may go
	call(true)
	call(true)
	// Output:
	// called, success: false
	// called, success: false
	//   closed -> open
	// called, success: false
	// refused: fail fast
	//   open -> half-open
	//   half-open -> closed
	// called, success: true
	// called, success: true
}
