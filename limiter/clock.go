package limiter

import (
	"context"
	"time"
)

// Clock tells the time and sleeps; [Bucket.WaitN] uses one so that tests
// can run it on a fake clock. [SystemClock] is the real one.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d, or until ctx is done, in which case it returns
	// ctx.Err() (or a cause derived from it).
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the [Clock] of the time package. Its zero value is ready
// to use and it is safe for concurrent use.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits for d with a timer, stopping early when ctx is done.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
