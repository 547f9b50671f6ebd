package limiter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Errors returned by [Bucket.WaitN]; test with errors.Is.
var (
	// ErrDeadline means the tokens would come after the context's deadline.
	ErrDeadline = errors.New("limiter: wait would exceed the context deadline")
	// ErrBurst means more tokens were asked for than the bucket can hold.
	ErrBurst = errors.New("limiter: request exceeds the burst")
	// ErrClosed means the rate is zero (or negative): nothing is admitted.
	ErrClosed = errors.New("limiter: rate is zero")
)

// frozen is a tat value that never occurs in practice (the year 2262); a
// SetLimit in progress stores it to stop deciders from using a state whose
// limit is being replaced.
const frozen = math.MaxInt64

// bucketState is a limit with the bucket's theoretical arrival time under
// it. SetLimit replaces the whole state, so a decision always pairs a tat
// with the limit it was computed under.
type bucketState struct {
	lim limit
	tat atomic.Int64 // Unix nanoseconds; math.MinInt64 means full
}

// Bucket is a token bucket of rate tokens per second holding at most burst
// tokens, refilled lazily and fractionally (see the package doc). It starts
// full.
//
// Deciding is lock-free: one atomic load and one compare-and-swap, no
// allocation. A Bucket is safe for concurrent use. The zero Bucket admits
// nothing; make one with [NewBucket]. A Bucket must not be copied after
// first use.
type Bucket struct {
	st atomic.Pointer[bucketState]
	mu sync.Mutex // serializes SetLimit
}

// NewBucket returns a full bucket of rate tokens per second and burst
// tokens. See the package doc for rate ≤ 0, rate ≥ [Inf] and burst < 1.
func NewBucket(rate float64, burst int) *Bucket {
	b := new(Bucket)
	st := &bucketState{lim: newLimit(rate, burst)}
	st.tat.Store(math.MinInt64)
	b.st.Store(st)
	return b
}

// Allow reports whether one token can be taken at now, and takes it if so.
func (b *Bucket) Allow(now time.Time) bool { return b.AllowN(now, 1) }

// AllowN reports whether n tokens can be taken at now, and takes them if
// so. n ≤ 0 is always allowed and takes nothing.
func (b *Bucket) AllowN(now time.Time, n int) bool {
	if n <= 0 {
		return true
	}
	_, _, _, err := b.reserve(now, n, 0)
	return err == nil
}

// ReserveN takes n tokens at now, going into debt if the bucket lacks them,
// provided the caller may act within maxWait. It returns how long the
// caller must wait before acting (0 if the tokens are there), or ok false,
// taking nothing, if that wait would exceed maxWait or n exceeds the burst
// or the bucket is closed. A caller that reserves and then gives up
// should not act: the tokens stay taken.
func (b *Bucket) ReserveN(now time.Time, n int, maxWait time.Duration) (wait time.Duration, ok bool) {
	if n <= 0 {
		return 0, true
	}
	_, _, w, err := b.reserve(now, n, int64(max(maxWait, 0)))
	return time.Duration(w), err == nil
}

// Wait is WaitN(ctx, clock, 1).
func (b *Bucket) Wait(ctx context.Context, clock Clock) error { return b.WaitN(ctx, clock, 1) }

// WaitN takes n tokens, sleeping on clock (nil means [SystemClock]) until
// they are there. It fails at once, without sleeping and taking nothing,
// when ctx is done, when the tokens would come at or after ctx's deadline
// ([ErrDeadline]), when n exceeds the burst ([ErrBurst]) or when the rate
// is zero ([ErrClosed]). If ctx is done during the sleep, WaitN gives the
// tokens back and returns ctx's error.
func (b *Bucket) WaitN(ctx context.Context, clock Clock, n int) error {
	if clock == nil {
		clock = SystemClock{}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	now := clock.Now()
	maxWait := int64(math.MaxInt64)
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		// Tokens that come exactly at the deadline are of no use: the
		// caller's context expires at the same instant.
		maxWait = 0
		if d := deadline.Sub(now); d > 0 {
			maxWait = int64(d) - 1
		}
	}
	st, cost, wait, err := b.reserve(now, n, maxWait)
	if err != nil {
		if errors.Is(err, ErrDeadline) {
			return fmt.Errorf("%w: %d tokens need a wait of %v, deadline in %v",
				ErrDeadline, n, time.Duration(wait), deadline.Sub(now))
		}
		return err
	}
	if wait == 0 {
		return nil
	}
	if err := clock.Sleep(ctx, time.Duration(wait)); err != nil {
		b.giveBack(st, cost)
		return err
	}
	return nil
}

// reserve is the decision of AllowN, ReserveN and WaitN. On success it
// returns the state it took from and the cost taken, for giveBack.
func (b *Bucket) reserve(now time.Time, n int, maxWait int64) (st *bucketState, cost, wait int64, err error) {
	t := nanos(now)
	for st = b.st.Load(); ; {
		if st == nil {
			return nil, 0, 0, ErrClosed
		}
		l := &st.lim
		switch l.mode {
		case modeUnlimited:
			return st, 0, 0, nil
		case modeClosed:
			return st, 0, 0, ErrClosed
		}
		if int64(n) > l.n {
			return st, 0, 0, ErrBurst
		}
		tat := st.tat.Load()
		if tat == frozen { // a SetLimit is swapping the state: let it finish
			runtime.Gosched()
			st = b.st.Load()
			continue
		}
		next, w, ok := l.take(tat, t, int64(n), maxWait)
		if !ok {
			return st, 0, w, ErrDeadline
		}
		if st.tat.CompareAndSwap(tat, next) {
			return st, int64(n) * l.unit, w, nil
		}
	}
}

// giveBack returns cost nanoseconds worth of tokens taken from st, unless
// a SetLimit has replaced st since.
func (b *Bucket) giveBack(st *bucketState, cost int64) {
	if cost == 0 {
		return
	}
	for {
		tat := st.tat.Load()
		if tat == frozen || b.st.Load() != st {
			return
		}
		if st.tat.CompareAndSwap(tat, tat-cost) {
			return
		}
	}
}

// SetLimit changes the rate and burst from now on, keeping the number of
// tokens the bucket is missing (capped by the new burst). Calls that race
// with SetLimit are decided entirely under the old limit or entirely under
// the new one.
func (b *Bucket) SetLimit(rate float64, burst int, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := &bucketState{lim: newLimit(rate, burst)}
	next.tat.Store(frozen)
	old := b.st.Swap(next)
	tat := int64(math.MinInt64)
	if old != nil {
		tat = next.lim.convert(&old.lim, old.tat.Swap(frozen), nanos(now))
	}
	next.tat.Store(tat)
}

// Limit returns the rate and burst as last given to NewBucket or SetLimit.
func (b *Bucket) Limit() (rate float64, burst int) {
	st := b.st.Load()
	if st == nil {
		return 0, 0
	}
	return st.lim.rate, st.lim.burst
}

// Tokens returns how many tokens the bucket holds at now (fractional;
// [Inf] when unlimited).
func (b *Bucket) Tokens(now time.Time) float64 {
	for {
		st := b.st.Load()
		if st == nil {
			return 0
		}
		tat := st.tat.Load()
		if tat == frozen {
			runtime.Gosched()
			continue
		}
		return st.lim.tokens(tat, nanos(now))
	}
}
