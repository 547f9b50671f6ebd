package rt

import (
	"testing"
	"time"
)

// A method whose calls stall the read loop most of the time moves to
// workers; one whose calls stall once in a while (the OS or the GC held
// the reading goroutine up) stays on the reading goroutine.
func TestMethodStalls(t *testing.T) {
	t.Run("blocking handler", func(t *testing.T) {
		var me methodEntry
		for i := 1; i <= 3; i++ {
			me.inlined.Add(1)
			got := me.stalled()
			if want := i == 3; got != want {
				t.Fatalf("stall %d of %d calls: stalled() = %v, want %v", i, i, got, want)
			}
		}
		if me.stalls.Load() != 0 || me.inlined.Load() != 0 {
			t.Fatalf("counters not reset after the decision: stalls %d, inlined %d", me.stalls.Load(), me.inlined.Load())
		}
	})
	t.Run("one call in eight stalls", func(t *testing.T) {
		var me methodEntry
		demoted := false
		for i := 1; i <= 24 && !demoted; i++ {
			me.inlined.Add(1)
			if i%8 == 0 {
				demoted = me.stalled()
			}
		}
		if !demoted {
			t.Fatal("3 stalls in 24 calls: not moved to workers")
		}
	})
	t.Run("rare stalls", func(t *testing.T) {
		var me methodEntry
		for i := 1; i <= 100_000; i++ {
			me.inlined.Add(1)
			if i%100 == 0 && me.stalled() {
				t.Fatalf("1 stall in 100 calls: moved to workers after %d calls", i)
			}
		}
	})
}

// countingClock is a Clock at a fixed time that counts its reads.
type countingClock struct {
	now   time.Time
	reads int
}

func (c *countingClock) Now() time.Time                       { c.reads++; return c.now }
func (c *countingClock) After(time.Duration) <-chan time.Time { return nil }

// TestMethodQuick: a method runs on the reading goroutine unless it is in
// a slow period; deciding so reads the clock only while a slow period is
// set, which ends (and is cleared) once its time has passed.
func TestMethodQuick(t *testing.T) {
	clock := &countingClock{now: time.Unix(1_700_000_000, 0)}
	var me methodEntry
	if !me.quick(clock) || clock.reads != 0 {
		t.Fatalf("never slow: quick %v after %d clock reads, want true after none", me.quick(clock), clock.reads)
	}
	me.slowUntil.Store(clock.now.Add(slowFor).UnixNano())
	if me.quick(clock) {
		t.Fatal("in its slow period: quick")
	}
	clock.now = clock.now.Add(slowFor)
	if !me.quick(clock) || me.slowUntil.Load() != 0 {
		t.Fatalf("after its slow period: quick %v, slowUntil %d; want true, 0", me.quick(clock), me.slowUntil.Load())
	}
	reads := clock.reads
	me.quick(clock)
	if clock.reads != reads {
		t.Fatal("the clock is still read after the slow period ended")
	}
}
