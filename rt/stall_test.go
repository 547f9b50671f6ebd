package rt

import "testing"

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
