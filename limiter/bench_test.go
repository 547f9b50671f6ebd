package limiter

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/benchcpu"
)

// Benchmarks advance a fake time by 1 µs per call so that the bucket keeps
// refilling (rate 10⁶/s) and both outcomes occur.

func BenchmarkBucketAllow(b *testing.B) {
	bk := NewBucket(1e6, 100)
	now := time.Now() // carries the monotonic clock, as production callers pass
	b.ReportAllocs()
	defer benchcpu.Thread(b)()
	for b.Loop() {
		now = now.Add(time.Microsecond)
		bk.Allow(now)
	}
}

func BenchmarkBucketAllowParallel(b *testing.B) {
	bk := NewBucket(1e6, 100)
	b.ReportAllocs()
	defer benchcpu.Process(b)()
	b.RunParallel(func(pb *testing.PB) {
		now := time.Now()
		for pb.Next() {
			now = now.Add(time.Microsecond)
			bk.Allow(now)
		}
	})
}

func BenchmarkKeyedAllow(b *testing.B) {
	k := NewKeyed(KeyedOptions{Rate: 1e6, Burst: 100})
	key := "192.0.2.1"
	now := time.Now() // carries the monotonic clock, as production callers pass
	b.ReportAllocs()
	defer benchcpu.Thread(b)()
	for b.Loop() {
		now = now.Add(time.Microsecond)
		k.Allow(key, now)
	}
}

func BenchmarkKeyedAllowParallel(b *testing.B) {
	k := NewKeyed(KeyedOptions{Rate: 1e6, Burst: 100})
	var id atomic.Int64
	b.ReportAllocs()
	defer benchcpu.Process(b)()
	b.RunParallel(func(pb *testing.PB) {
		// 64 keys per goroutine, spread over the shards.
		base := int(id.Add(1)) * 1000
		keys := make([]string, 64)
		for i := range keys {
			keys[i] = "10.0." + strconv.Itoa(base+i)
		}
		now := time.Now()
		i := 0
		for pb.Next() {
			now = now.Add(time.Microsecond)
			k.Allow(keys[i&63], now)
			i++
		}
	})
}

// BenchmarkKeyedNewKey measures the cost of a key not in the table, with
// the table full so that every call also evicts.
func BenchmarkKeyedNewKey(b *testing.B) {
	k := NewKeyed(KeyedOptions{Rate: 1, Burst: 1, MaxKeys: 1 << 12})
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	defer benchcpu.Thread(b)()
	i := 0
	for b.Loop() {
		k.Allow(keys[i&(len(keys)-1)], t0)
		i++
	}
}

func BenchmarkConcurrency(b *testing.B) {
	c := NewConcurrency(1 << 20)
	b.ReportAllocs()
	defer benchcpu.Thread(b)()
	for b.Loop() {
		if c.Acquire() {
			c.Release()
		}
	}
}

func BenchmarkConcurrencyParallel(b *testing.B) {
	c := NewConcurrency(1 << 20)
	b.ReportAllocs()
	defer benchcpu.Process(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if c.Acquire() {
				c.Release()
			}
		}
	})
}

func BenchmarkClientIP(b *testing.B) {
	addr := "[2001:db8::1]:443"
	b.ReportAllocs()
	defer benchcpu.Thread(b)()
	for b.Loop() {
		_ = ClientIP(addr)
	}
}

// TestNoAllocs pins the allocation-free paths, so that a regression fails
// the tests and not only shows in benchmarks.
func TestNoAllocs(t *testing.T) {
	bk := NewBucket(1e6, 100)
	k := NewKeyed(KeyedOptions{Rate: 1e6, Burst: 100})
	k.Allow("192.0.2.1", t0)
	c := NewConcurrency(10)
	now := t0
	for name, f := range map[string]func(){
		"Bucket.Allow": func() { now = now.Add(time.Microsecond); bk.Allow(now) },
		"Keyed.Allow":  func() { now = now.Add(time.Microsecond); k.Allow("192.0.2.1", now) },
		"Concurrency":  func() { c.Acquire(); c.Release() },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}
