package limiter

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// step is one decision of a step table: at t0 + at·100 ms, take n tokens,
// expecting ok.
type step struct {
	at int
	n  int
	ok bool
}

const tick = 100 * time.Millisecond

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(i int) time.Time { return t0.Add(time.Duration(i) * tick) }

func TestBucketSteps(t *testing.T) {
	tests := []struct {
		name  string
		rate  float64
		burst int
		steps []step
	}{
		{"one per tick", 10, 1, []step{
			{0, 1, true}, {0, 1, false}, {1, 1, true}, {1, 1, false}, {2, 1, true},
		}},
		{"burst then rate", 10, 3, []step{
			{0, 1, true}, {0, 1, true}, {0, 1, true}, {0, 1, false},
			{1, 1, true}, {1, 1, false}, {3, 1, true}, {3, 1, true}, {3, 1, false},
		}},
		{"fractional refill", 5, 1, []step{ // 200 ms per token
			{0, 1, true}, {1, 1, false}, {2, 1, true}, {3, 1, false}, {4, 1, true},
		}},
		{"half tokens add up", 5, 2, []step{
			{0, 2, true}, {1, 1, false}, {2, 1, true}, {3, 1, false}, {5, 1, true}, {5, 1, false},
		}},
		{"burst caps idle refill", 10, 3, []step{
			{0, 3, true}, {100, 1, true}, {100, 1, true}, {100, 1, true}, {100, 1, false},
		}},
		{"AllowN", 10, 5, []step{
			{0, 5, true}, {0, 1, false}, {3, 3, true}, {3, 1, false},
			{5, 3, false}, {5, 2, true}, {5, 0, true}, {100, 6, false}, {100, 5, true},
		}},
		{"slow rate", 0.5, 1, []step{ // one per 2 s
			{0, 1, true}, {10, 1, false}, {19, 1, false}, {20, 1, true},
		}},
		{"zero burst means one", 10, 0, []step{
			{0, 1, true}, {0, 1, false}, {1, 1, true}, {1, 2, false},
		}},
		{"zero rate admits nothing", 0, 10, []step{
			{0, 1, false}, {1000, 1, false}, {1000, 0, true},
		}},
		{"negative rate admits nothing", -1, 10, []step{{0, 1, false}}},
		{"NaN rate admits nothing", math.NaN(), 10, []step{{0, 1, false}}},
		{"Inf admits everything", Inf, 0, []step{
			{0, 1, true}, {0, 1000, true}, {0, math.MaxInt, true},
		}},
		{"+Inf admits everything", math.Inf(1), 1, []step{{0, 5, true}, {0, 5, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBucket(tt.rate, tt.burst)
			for i, s := range tt.steps {
				if got := b.AllowN(at(s.at), s.n); got != s.ok {
					t.Fatalf("step %d: AllowN(t0+%v, %d) = %v, want %v", i, time.Duration(s.at)*tick, s.n, got, s.ok)
				}
			}
		})
	}
}

func TestBucketTokensFractional(t *testing.T) {
	b := NewBucket(10, 10)
	if got := b.Tokens(t0); got != 10 {
		t.Fatalf("new bucket has %v tokens, want 10", got)
	}
	if !b.AllowN(t0, 10) {
		t.Fatal("full bucket refused its burst")
	}
	for _, c := range []struct {
		after time.Duration
		want  float64
	}{
		{0, 0}, {10 * time.Millisecond, 0.1}, {50 * time.Millisecond, 0.5},
		{250 * time.Millisecond, 2.5}, {time.Second, 10}, {time.Hour, 10},
	} {
		if got := b.Tokens(t0.Add(c.after)); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Tokens(t0+%v) = %v, want %v", c.after, got, c.want)
		}
	}
	if b.Allow(t0.Add(99 * time.Millisecond)) {
		t.Error("0.99 tokens admitted a call")
	}
	if !b.Allow(t0.Add(100 * time.Millisecond)) {
		t.Error("1 token refused a call")
	}
}

func TestBucketSetLimit(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		burst     int
		take      int // at t0, before SetLimit
		newRate   float64
		newBurst  int
		after     time.Duration
		want      float64 // tokens at t0+after
		wantRate  float64
		wantBurst int
	}{
		{"faster keeps missing tokens", 10, 10, 10, 100, 10, 50 * time.Millisecond, 5, 100, 10},
		{"slower keeps missing tokens", 10, 10, 4, 1, 10, time.Second, 7, 1, 10},
		{"smaller burst caps", 10, 10, 0, 10, 2, 0, 2, 10, 2},
		{"smaller burst caps missing", 10, 10, 9, 10, 2, 0, 0, 10, 2},
		{"full stays full", 10, 2, 0, 10, 10, 0, 10, 10, 10},
		{"to unlimited", 10, 2, 2, Inf, 2, 0, Inf, Inf, 2},
		{"from unlimited starts full", Inf, 2, 2, 10, 3, 0, 3, 10, 3},
		{"to closed", 10, 2, 0, 0, 2, time.Hour, 0, 0, 2},
		{"from closed starts full", 0, 2, 0, 10, 2, 0, 2, 10, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBucket(tt.rate, tt.burst)
			if !b.AllowN(t0, tt.take) {
				t.Fatalf("AllowN(t0, %d) refused", tt.take)
			}
			b.SetLimit(tt.newRate, tt.newBurst, t0)
			if got := b.Tokens(t0.Add(tt.after)); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Tokens(t0+%v) = %v, want %v", tt.after, got, tt.want)
			}
			if r, bu := b.Limit(); r != tt.wantRate || bu != tt.wantBurst {
				t.Errorf("Limit() = %v, %d, want %v, %d", r, bu, tt.wantRate, tt.wantBurst)
			}
		})
	}
}

func TestBucketSetLimitMidStream(t *testing.T) {
	b := NewBucket(10, 1)
	steps := []struct {
		at       int
		setRate  float64 // 0: no change
		setBurst int
		ok       bool
	}{
		{at: 0, ok: true},
		{at: 0, ok: false},
		{at: 0, setRate: 5, setBurst: 1}, // the missing token now takes 200 ms
		{at: 1, ok: false},
		{at: 2, ok: true},
		{at: 2, setRate: 20, setBurst: 4},
		// 1 of 4 tokens missing, then 100 ms at 20/s adds 2: full again
		{at: 3, ok: true}, {at: 3, ok: true}, {at: 3, ok: true}, {at: 3, ok: true},
		{at: 3, ok: false},
	}
	for i, s := range steps {
		if s.setRate != 0 {
			b.SetLimit(s.setRate, s.setBurst, at(s.at))
			continue
		}
		if got := b.Allow(at(s.at)); got != s.ok {
			t.Fatalf("step %d: Allow(t0+%v) = %v, want %v", i, time.Duration(s.at)*tick, got, s.ok)
		}
	}
}

func TestZeroBucket(t *testing.T) {
	var b Bucket
	if b.Allow(t0) || b.Tokens(t0) != 0 {
		t.Error("zero Bucket admitted a call or holds tokens")
	}
	if err := b.Wait(context.Background(), &fakeClock{now: t0}); !errors.Is(err, ErrClosed) {
		t.Errorf("Wait on zero Bucket = %v, want ErrClosed", err)
	}
	b.SetLimit(10, 1, t0)
	if !b.Allow(t0) || b.Allow(t0) {
		t.Error("zero Bucket after SetLimit(10, 1) is not a 10/s bucket")
	}
}

// fakeClock is a Clock whose Sleep advances its time at once.
type fakeClock struct {
	now    time.Time
	slept  []time.Duration
	cancel bool // Sleep fails with context.Canceled instead
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.slept = append(c.slept, d)
	if c.cancel {
		return context.Canceled
	}
	c.now = c.now.Add(d)
	return ctx.Err()
}

// fakeDeadline is a context with a deadline on the fake clock: it never
// expires by itself.
type fakeDeadline struct {
	context.Context
	d time.Time
}

func (c fakeDeadline) Deadline() (time.Time, bool) { return c.d, true }

func TestBucketWait(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		burst     int
		drain     int           // tokens taken first
		n         int           // tokens to wait for
		deadline  time.Duration // from now; 0 means none
		canceled  bool          // ctx canceled before the call
		sleepFail bool          // the sleep is interrupted
		wantErr   error
		wantSlept []time.Duration
		checkAt   time.Duration // after the clock's time afterwards
		tokens    float64       // left then
	}{
		{name: "available", rate: 10, burst: 1, n: 1, deadline: time.Millisecond},
		{name: "waits", rate: 10, burst: 1, drain: 1, n: 1, deadline: time.Second,
			wantSlept: []time.Duration{100 * time.Millisecond}},
		{name: "waits fractional", rate: 10, burst: 2, drain: 2, n: 2, deadline: time.Second,
			wantSlept: []time.Duration{200 * time.Millisecond}},
		{name: "no deadline waits", rate: 1, burst: 1, drain: 1, n: 1,
			wantSlept: []time.Duration{time.Second}},
		{name: "deadline too short", rate: 10, burst: 1, drain: 1, n: 1, deadline: 50 * time.Millisecond,
			wantErr: ErrDeadline, checkAt: tick, tokens: 1},
		{name: "deadline exactly then", rate: 10, burst: 1, drain: 1, n: 1, deadline: 100 * time.Millisecond,
			wantErr: ErrDeadline, checkAt: tick, tokens: 1},
		{name: "past deadline but tokens there", rate: 10, burst: 1, n: 1, deadline: -time.Second},
		{name: "more than burst", rate: 10, burst: 2, n: 3, deadline: time.Hour, wantErr: ErrBurst, tokens: 2},
		{name: "closed", rate: 0, burst: 2, n: 1, wantErr: ErrClosed},
		{name: "unlimited", rate: Inf, n: 1 << 20, tokens: Inf},
		{name: "canceled", rate: 10, burst: 1, n: 1, canceled: true, wantErr: context.Canceled, tokens: 1},
		{name: "interrupted gives back", rate: 10, burst: 2, drain: 2, n: 2, sleepFail: true,
			wantErr: context.Canceled, wantSlept: []time.Duration{200 * time.Millisecond},
			checkAt: 2 * tick, tokens: 2},
		{name: "zero n", rate: 10, burst: 1, drain: 1, n: 0, tokens: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBucket(tt.rate, tt.burst)
			clock := &fakeClock{now: t0, cancel: tt.sleepFail}
			if !b.AllowN(clock.now, tt.drain) {
				t.Fatalf("AllowN(t0, %d) refused", tt.drain)
			}
			ctx := context.Background()
			if tt.deadline != 0 {
				ctx = fakeDeadline{ctx, clock.now.Add(tt.deadline)}
			}
			if tt.canceled {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			err := b.WaitN(ctx, clock, tt.n)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("WaitN = %v, want %v", err, tt.wantErr)
			}
			if len(clock.slept) != len(tt.wantSlept) {
				t.Fatalf("slept %v, want %v", clock.slept, tt.wantSlept)
			}
			for i := range clock.slept {
				if clock.slept[i] != tt.wantSlept[i] {
					t.Fatalf("slept %v, want %v", clock.slept, tt.wantSlept)
				}
			}
			if got := b.Tokens(clock.now.Add(tt.checkAt)); math.Abs(got-tt.tokens) > 1e-9 {
				t.Errorf("Tokens after = %v, want %v", got, tt.tokens)
			}
		})
	}
}

func TestBucketReserveN(t *testing.T) {
	b := NewBucket(10, 2)
	steps := []struct {
		n       int
		maxWait time.Duration
		wait    time.Duration
		ok      bool
	}{
		{2, 0, 0, true},
		{1, 0, 100 * time.Millisecond, false},
		{1, 99 * time.Millisecond, 100 * time.Millisecond, false},
		{1, 100 * time.Millisecond, 100 * time.Millisecond, true},
		{1, time.Second, 200 * time.Millisecond, true},
		{3, time.Hour, 0, false},
		{0, 0, 0, true},
	}
	for i, s := range steps {
		wait, ok := b.ReserveN(t0, s.n, s.maxWait)
		if ok != s.ok || (ok && wait != s.wait) {
			t.Fatalf("step %d: ReserveN(t0, %d, %v) = %v, %v, want %v, %v", i, s.n, s.maxWait, wait, ok, s.wait, s.ok)
		}
	}
}

func TestSystemClockSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Neither call may block: the context is done and the duration is 0.
	if err := (SystemClock{}).Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a canceled context = %v", err)
	}
	if err := (SystemClock{}).Sleep(context.Background(), 0); err != nil {
		t.Errorf("Sleep(0) = %v", err)
	}
	// A nil clock is the system clock; a token is there, so no sleep.
	if err := NewBucket(1, 1).Wait(context.Background(), nil); err != nil {
		t.Errorf("Wait with nil clock = %v", err)
	}
}

// TestBucketParallel checks under the race detector that parallel callers
// at one instant take exactly burst tokens in total, while SetLimit swaps
// between equivalent limits.
func TestBucketParallel(t *testing.T) {
	const burst, workers, tries = 1000, 8, 500
	b := NewBucket(1, burst)
	var got atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range tries {
				if b.Allow(t0) {
					got.Add(1)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 200 {
			b.SetLimit(1, burst, t0)
		}
	}()
	wg.Wait()
	if got.Load() != burst {
		t.Fatalf("admitted %d, want %d", got.Load(), burst)
	}
}

// FuzzBucket checks, for any sequence of calls, that AllowN admits exactly
// when Tokens says the tokens are there, and that the total admitted never
// exceeds the burst plus what the rate refilled.
func FuzzBucket(f *testing.F) {
	f.Add(uint16(10), uint8(3), []byte{0, 1, 0, 1, 0, 1, 0, 1, 100, 1, 50, 2})
	f.Add(uint16(1), uint8(0), []byte{0, 1, 255, 1, 255, 1})
	f.Add(uint16(1000), uint8(255), []byte{0, 255, 1, 1, 1, 200})
	f.Fuzz(func(t *testing.T, rate uint16, burst uint8, ops []byte) {
		if rate == 0 {
			return
		}
		b := NewBucket(float64(rate), int(burst))
		unit := time.Second / time.Duration(rate) // exact for these rates up to rounding
		now, admitted := t0, 0
		for i := 0; i+1 < len(ops); i += 2 {
			now = now.Add(time.Duration(ops[i]) * time.Millisecond)
			n := int(ops[i+1])
			have := b.Tokens(now)
			ok := b.AllowN(now, n)
			if n > 0 && ok != (have >= float64(n)) {
				t.Fatalf("op %d: AllowN(%d) = %v with %v tokens", i/2, n, ok, have)
			}
			if ok {
				admitted += n
			}
			elapsed := now.Sub(t0)
			if limit := float64(max(int(burst), 1)) + float64(elapsed)/float64(unit) + 1; float64(admitted) > limit {
				t.Fatalf("admitted %d in %v at %d/s, burst %d", admitted, elapsed, rate, burst)
			}
		}
	})
}
