package limiter

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestKeyedSteps(t *testing.T) {
	type kstep struct {
		key string
		at  int
		n   int
		ok  bool
	}
	tests := []struct {
		name  string
		o     KeyedOptions
		steps []kstep
	}{
		{"keys are independent", KeyedOptions{Rate: 10, Burst: 2}, []kstep{
			{"a", 0, 2, true}, {"a", 0, 1, false}, {"b", 0, 1, true}, {"b", 0, 1, true},
			{"b", 0, 1, false}, {"a", 1, 1, true}, {"a", 1, 1, false}, {"c", 1, 2, true},
		}},
		{"fractional refill", KeyedOptions{Rate: 5, Burst: 1}, []kstep{
			{"a", 0, 1, true}, {"a", 1, 1, false}, {"a", 2, 1, true},
		}},
		{"more than burst", KeyedOptions{Rate: 5, Burst: 2}, []kstep{
			{"a", 0, 3, false}, {"a", 0, 2, true}, {"a", 0, 0, true},
		}},
		{"closed", KeyedOptions{Burst: 2}, []kstep{{"a", 0, 1, false}}},
		{"unlimited", KeyedOptions{Rate: Inf}, []kstep{{"a", 0, 1 << 30, true}, {"a", 0, 1, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := NewKeyed(tt.o)
			for i, s := range tt.steps {
				if got := k.AllowN(s.key, at(s.at), s.n); got != s.ok {
					t.Fatalf("step %d: AllowN(%q, t0+%v, %d) = %v, want %v",
						i, s.key, time.Duration(s.at)*tick, s.n, got, s.ok)
				}
			}
		})
	}
}

func TestKeyedUnlimitedStoresNothing(t *testing.T) {
	k := NewKeyed(KeyedOptions{Rate: Inf})
	for i := range 100 {
		k.Allow(strconv.Itoa(i), t0)
	}
	if k.Len() != 0 {
		t.Errorf("Len() = %d, want 0", k.Len())
	}
}

func TestKeyedBound(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	k := NewKeyed(KeyedOptions{Rate: 1, Burst: 1}) // MaxKeys 65536
	buf := make([]byte, 0, 16)
	for i := range n {
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		// Every key is new: its first call passes, a second one (checked
		// for some keys) does not.
		if !k.Allow(string(buf), t0) {
			t.Fatalf("new key %d refused", i)
		}
		if i%16 == 0 && k.Allow(string(buf), t0) {
			t.Fatalf("key %d admitted twice at one instant", i)
		}
	}
	if got := k.Len(); got > 65536 || got < 65536*9/10 {
		t.Fatalf("Len() = %d after %d keys, want at most 65536 and near it", got, n)
	}
}

func TestKeyedBoundSmall(t *testing.T) {
	for _, o := range []KeyedOptions{
		{Rate: 1, MaxKeys: 1},
		{Rate: 1, MaxKeys: 3, Shards: 16},
		{Rate: 1, MaxKeys: 100, Shards: 7},
		{Rate: 1, MaxKeys: 1000, Shards: 1},
	} {
		k := NewKeyed(o)
		for i := range 10 * o.MaxKeys {
			k.Allow(strconv.Itoa(i), t0)
			if k.Len() > o.MaxKeys {
				t.Fatalf("%+v: Len() = %d > MaxKeys", o, k.Len())
			}
		}
		if k.Len() == 0 {
			t.Fatalf("%+v: nothing stored", o)
		}
	}
}

// TestKeyedEvictsFullFirst checks that a full table drops a refilled
// bucket (losing nothing) rather than a drained one.
func TestKeyedEvictsFullFirst(t *testing.T) {
	k := NewKeyed(KeyedOptions{Rate: 10, Burst: 2, MaxKeys: 4, Shards: 1})
	for _, c := range []struct {
		key string
		n   int
	}{{"a", 2}, {"b", 2}, {"c", 1}, {"d", 2}} {
		if !k.AllowN(c.key, t0, c.n) {
			t.Fatalf("AllowN(%q, t0, %d) refused", c.key, c.n)
		}
	}
	// At t0+100ms, c is full again; a, b and d miss one token each.
	now := at(1)
	if !k.Allow("e", now) {
		t.Fatal("new key e refused")
	}
	for _, key := range []string{"a", "b", "d"} {
		if got := k.Tokens(key, now); got != 1 {
			t.Errorf("Tokens(%q) = %v, want 1: a drained bucket was evicted", key, got)
		}
	}
	if k.Len() != 4 {
		t.Errorf("Len() = %d, want 4", k.Len())
	}
}

// TestKeyedScanResistant checks that keys called again survive a flood of
// keys called once.
func TestKeyedScanResistant(t *testing.T) {
	k := NewKeyed(KeyedOptions{Rate: 1, Burst: 2, MaxKeys: 8, Shards: 1})
	hot := []string{"h0", "h1", "h2", "h3"}
	for _, h := range hot {
		k.Allow(h, t0)
		k.Allow(h, t0) // drained, and seen again
	}
	for i := range 1000 {
		k.Allow("scan"+strconv.Itoa(i), t0)
		if i%2 == 1 {
			for _, h := range hot {
				if k.Allow(h, t0) {
					t.Fatalf("after %d scan keys, hot key %q was forgotten", i+1, h)
				}
			}
		}
	}
}

func TestKeyedSetLimit(t *testing.T) {
	k := NewKeyed(KeyedOptions{Rate: 10, Burst: 10})
	k.AllowN("a", t0, 10)
	k.AllowN("b", t0, 4)
	k.SetLimit(100, 5, t0)
	for _, c := range []struct {
		key   string
		after time.Duration
		want  float64
	}{
		{"a", 0, 0}, {"a", 30 * time.Millisecond, 3}, {"b", 0, 1}, {"b", 10 * time.Millisecond, 2}, {"new", 0, 5},
	} {
		if got := k.Tokens(c.key, t0.Add(c.after)); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Tokens(%q, t0+%v) = %v, want %v", c.key, c.after, got, c.want)
		}
	}
	if r, b := k.Limit(); r != 100 || b != 5 {
		t.Errorf("Limit() = %v, %d, want 100, 5", r, b)
	}
}

func TestKeyedParallel(t *testing.T) {
	const burst, keys, workers = 100, 50, 8
	k := NewKeyed(KeyedOptions{Rate: 1, Burst: burst, Shards: 4})
	var admitted [keys]atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range keys * burst {
				j := (i + w) % keys
				if k.Allow("k"+strconv.Itoa(j), t0) {
					admitted[j].Add(1)
				}
			}
		}()
	}
	wg.Wait()
	for j := range admitted {
		if got := admitted[j].Load(); got != burst {
			t.Errorf("key %d: admitted %d, want %d", j, got, burst)
		}
	}
}
