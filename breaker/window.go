package breaker

import (
	"math"
	"sync/atomic"
)

// window is the closed state's sliding window of results: a ring of time
// buckets. Successes are counted without the breaker's lock, by a
// compare-and-swap on their bucket; failures, starting a bucket, reading
// the totals and resetting happen under the lock.
type window struct {
	width   int64        // of a bucket, in nanoseconds
	origin  atomic.Int64 // where bucket 0 starts: the first result's time
	started atomic.Bool  // origin is set
	cur     atomic.Int64 // index of the bucket started last: a hint
	ring    []slot
}

// slot is one bucket of the ring. Each word holds a stamp in its high half
// — the bucket's index plus one, in 32 bits; 0 means empty — and a count
// in its low half, so that a count can never land in a bucket that has
// been reused for a later time.
type slot struct {
	total    atomic.Uint64
	failures atomic.Uint64 // written only under the breaker's lock
}

const countMask = math.MaxUint32

// stamp returns the stamp of bucket idx, shifted into place.
func stamp(idx int64) uint64 { return uint64(uint32(idx+1)) << 32 }

// index returns the index of the bucket that holds time t. started must
// be true.
func (w *window) index(t int64) int64 {
	o, c := w.origin.Load(), w.cur.Load()
	if from := o + c*w.width; t >= from && t-from < w.width {
		return c // the usual case, without dividing
	}
	return floorDiv(t-o, w.width)
}

func (w *window) at(idx int64) *slot {
	n := int64(len(w.ring))
	return &w.ring[(idx%n+n)%n]
}

// addSuccess counts a success at t if its bucket is already started and
// reports whether it did; if not, the caller must take the lock and call
// add. It is safe to call without the breaker's lock.
func (w *window) addSuccess(t int64) bool {
	if !w.started.Load() {
		return false
	}
	idx := w.index(t)
	return inc(&w.at(idx).total, stamp(idx))
}

// add counts a result at t, starting its bucket if needed, and returns
// the bucket's index. The breaker's lock must be held.
func (w *window) add(t int64, failed bool) int64 {
	if !w.started.Load() {
		w.origin.Store(t)
		w.started.Store(true)
	}
	idx := w.index(t)
	s, st := w.at(idx), stamp(idx)
	if s.total.Load()&^countMask != st {
		// Reuse the slot of an expired bucket. A success counted into the
		// old bucket at the same moment is lost with it.
		s.total.Store(st)
		s.failures.Store(st)
		w.cur.Store(idx)
	}
	inc(&s.total, st)
	if failed {
		inc(&s.failures, st)
	}
	return idx
}

// sums returns the results and failures of the window ending with bucket
// idx.
func (w *window) sums(idx int64) (total, failures int) {
	if !w.started.Load() {
		return 0, 0
	}
	last := uint32(idx + 1)
	for i := range w.ring {
		s := &w.ring[i]
		tw := s.total.Load()
		st := uint32(tw >> 32)
		if st == 0 || last-st >= uint32(len(w.ring)) { // empty, too old or ahead
			continue
		}
		total += int(tw & countMask)
		if fw := s.failures.Load(); uint32(fw>>32) == st {
			failures += int(fw & countMask)
		}
	}
	return total, failures
}

// reset empties the window; the origin stays. The breaker's lock must be
// held.
func (w *window) reset() {
	for i := range w.ring {
		w.ring[i].total.Store(0)
		w.ring[i].failures.Store(0)
	}
}

// inc adds one to the count in a, unless a's stamp is not st; it reports
// whether the stamp matched. A full count stays full.
func inc(a *atomic.Uint64, st uint64) bool {
	for {
		v := a.Load()
		if v&^countMask != st {
			return false
		}
		if v&countMask == countMask || a.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

// floorDiv is a/b rounded down, for times before the origin.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
