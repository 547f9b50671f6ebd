package metrics

import (
	"sync"
	"sync/atomic"
)

// index maps series keys to series. It is built for a read-mostly workload
// (every Observe reads, only a series' first event writes) the way sync.Map
// is, but with a typed comparable key, so that a lookup neither locks nor
// allocates: readers load an immutable map through an atomic pointer; new
// series go to a locked dirty map (a superset of it) that replaces the read
// map once lookups have missed it as many times as it has entries, which
// keeps the copying amortized O(1) per lookup. The zero value is an empty
// index, safe for concurrent use.
type index struct {
	read atomic.Pointer[map[seriesKey]*series] // never modified once stored

	mu     sync.Mutex
	dirty  map[seriesKey]*series // nil, or read plus the newer series
	misses int
}

// get returns the series of k, or nil.
func (x *index) get(k seriesKey) *series {
	if m := x.read.Load(); m != nil {
		return (*m)[k]
	}
	return nil
}

// getOrAdd returns the series of k, adding the one newSeries returns if k
// has none and the index holds fewer than limit series (limit < 0: no
// limit); it returns nil if k has no series and the index is full.
func (x *index) getOrAdd(k seriesKey, limit int, newSeries func() *series) *series {
	x.mu.Lock()
	defer x.mu.Unlock()
	if s := x.get(k); s != nil {
		return s
	}
	if x.dirty == nil {
		x.dirty = make(map[seriesKey]*series)
		if m := x.read.Load(); m != nil {
			for k, s := range *m {
				x.dirty[k] = s
			}
		}
	}
	s := x.dirty[k]
	if s == nil && (limit < 0 || len(x.dirty) < limit) {
		s = newSeries()
		x.dirty[k] = s
	}
	if x.misses++; x.misses >= len(x.dirty) {
		m := x.dirty
		x.read.Store(&m)
		x.dirty, x.misses = nil, 0
	}
	return s
}

// all calls f for every series.
func (x *index) all(f func(seriesKey, *series)) {
	x.mu.Lock()
	m := x.dirty
	if m == nil {
		if r := x.read.Load(); r != nil {
			m = *r
		}
	}
	for k, s := range m {
		f(k, s)
	}
	x.mu.Unlock()
}
