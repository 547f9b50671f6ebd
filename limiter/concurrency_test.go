package limiter

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestConcurrencySteps(t *testing.T) {
	type op uint8
	const (
		acq op = iota
		rel
		setMax
	)
	tests := []struct {
		name string
		max  int
		ops  []op
		arg  []int // for acq: 1 if it must succeed; for setMax: the new max
		want int   // InFlight at the end
	}{
		{"up to max", 2, []op{acq, acq, acq}, []int{1, 1, 0}, 2},
		{"release frees", 1, []op{acq, acq, rel, acq}, []int{1, 0, 0, 1}, 1},
		{"unlimited", 0, []op{acq, acq, acq}, []int{1, 1, 1}, 3},
		{"negative is unlimited", -1, []op{acq, acq}, []int{1, 1}, 2},
		{"stray release ignored", 1, []op{rel, rel, acq, acq}, []int{0, 0, 1, 0}, 1},
		{"lower max", 3, []op{acq, acq, setMax, acq, rel, acq, rel, acq},
			[]int{1, 1, 1, 0, 0, 0, 0, 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewConcurrency(tt.max)
			for i, o := range tt.ops {
				switch o {
				case acq:
					if got := c.Acquire(); got != (tt.arg[i] == 1) {
						t.Fatalf("op %d: Acquire() = %v", i, got)
					}
				case rel:
					c.Release()
				case setMax:
					c.SetMax(tt.arg[i])
				}
			}
			if c.InFlight() != tt.want {
				t.Errorf("InFlight() = %d, want %d", c.InFlight(), tt.want)
			}
		})
	}
}

func TestConcurrencyZero(t *testing.T) {
	var c Concurrency
	if !c.Acquire() || c.InFlight() != 1 || c.Max() != 0 {
		t.Error("zero Concurrency is not unlimited")
	}
}

// TestConcurrencyParallel checks under the race detector that in-flight
// calls never exceed the limit and that every slot comes back.
func TestConcurrencyParallel(t *testing.T) {
	const max, workers, tries = 3, 8, 2000
	c := NewConcurrency(max)
	var inside, peak, admitted atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range tries {
				if !c.Acquire() {
					continue
				}
				admitted.Add(1)
				n := inside.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				inside.Add(-1)
				c.Release()
			}
		}()
	}
	wg.Wait()
	if peak.Load() > max {
		t.Errorf("peak in flight %d > %d", peak.Load(), max)
	}
	if c.InFlight() != 0 {
		t.Errorf("InFlight() = %d after all released", c.InFlight())
	}
	if admitted.Load() == 0 {
		t.Error("nothing admitted")
	}
}
