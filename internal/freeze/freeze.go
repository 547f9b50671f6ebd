package freeze

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Tick is the period of a Watcher's ticker: a freeze is the time beyond
// it between two ticks.
const Tick = 5 * time.Millisecond

// Freeze is one freeze: when it ended, counted from the Watcher's start,
// and how long it was.
type Freeze struct {
	At, Len time.Duration
}

// Watcher records the longest freeze of the process and the freezes of
// at least a given length. Its methods are safe for concurrent use.
type Watcher struct {
	start   time.Time
	min     time.Duration // shortest freeze listed; 0: none listed
	max     int           // most freezes listed
	longest atomic.Int64  // ns
	mu      sync.Mutex
	freezes []Freeze
}

// New returns a Watcher that lists up to max freezes of at least min
// (min 0: it lists none, and only keeps the longest). Start it with Run.
func New(min time.Duration, max int) *Watcher {
	return &Watcher{start: time.Now(), min: min, max: max}
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	tick := time.NewTicker(Tick)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			w.record(now, now.Sub(last)-Tick)
			last = now
		}
	}
}

// record takes a gap between ticks that ended at now.
func (w *Watcher) record(now time.Time, gap time.Duration) {
	if int64(gap) > w.longest.Load() {
		w.longest.Store(int64(gap))
	}
	if w.min <= 0 || gap < w.min {
		return
	}
	w.mu.Lock()
	if len(w.freezes) < w.max {
		w.freezes = append(w.freezes, Freeze{At: now.Sub(w.start), Len: gap})
	}
	w.mu.Unlock()
}

// Longest returns the longest freeze so far.
func (w *Watcher) Longest() time.Duration { return time.Duration(w.longest.Load()) }

// Freezes returns the freezes listed so far, oldest first.
func (w *Watcher) Freezes() []Freeze {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Freeze(nil), w.freezes...)
}
