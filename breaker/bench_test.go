package breaker

import (
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/benchcpu"
)

// BenchmarkAllowDone is one successful call through a closed breaker.
func BenchmarkAllowDone(b *testing.B) {
	br := New(Settings{})
	now := time.Now() // carries the monotonic clock, as production callers pass
	b.ReportAllocs()
	defer benchcpu.Thread(b)()
	for b.Loop() {
		now = now.Add(time.Microsecond)
		tk, ok := br.Allow(now)
		if ok {
			br.Done(now, tk, true)
		}
	}
}

// BenchmarkAllowDoneFailing reports a failure every 4th call, below the
// default error rate, so that the trip check (a sum over the window) runs.
func BenchmarkAllowDoneFailing(b *testing.B) {
	br := New(Settings{})
	now := time.Now() // carries the monotonic clock, as production callers pass
	i := 0
	b.ReportAllocs()
	defer benchcpu.Thread(b)()
	for b.Loop() {
		now = now.Add(time.Microsecond)
		tk, ok := br.Allow(now)
		if ok {
			br.Done(now, tk, i&3 != 0)
		}
		i++
	}
}

func BenchmarkAllowDoneParallel(b *testing.B) {
	br := New(Settings{})
	b.ReportAllocs()
	defer benchcpu.Process(b)()
	b.RunParallel(func(pb *testing.PB) {
		now := time.Now()
		for pb.Next() {
			now = now.Add(time.Microsecond)
			tk, ok := br.Allow(now)
			if ok {
				br.Done(now, tk, true)
			}
		}
	})
}

// BenchmarkAllowOpen is a call refused by an open breaker: the fail-fast
// path.
func BenchmarkAllowOpen(b *testing.B) {
	br := New(Settings{ConsecutiveFailures: 1, OpenFor: time.Hour})
	now := time.Now() // carries the monotonic clock, as production callers pass
	tk, _ := br.Allow(now)
	br.Done(now, tk, false)
	b.ReportAllocs()
	defer benchcpu.Thread(b)()
	for b.Loop() {
		now = now.Add(time.Microsecond)
		br.Allow(now)
	}
}

// TestNoAllocs pins the allocation-free paths, so that a regression fails
// the tests and not only shows in benchmarks.
func TestNoAllocs(t *testing.T) {
	br := New(Settings{ConsecutiveFailures: 1000})
	now := t0
	if n := testing.AllocsPerRun(1000, func() {
		now = now.Add(time.Millisecond)
		tk, _ := br.Allow(now)
		br.Done(now, tk, now.UnixMilli()%4 != 0)
	}); n != 0 {
		t.Errorf("Allow+Done allocates %v times per call", n)
	}
}
