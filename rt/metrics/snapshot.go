package metrics

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Snapshot is a point-in-time copy of a Recorder's metrics: plain data,
// sorted deterministically, JSON-marshalable, owned by the caller.
//
// The counters are read one by one without a global lock, so a Snapshot
// taken during traffic may count an in-flight event in one field and not yet
// in another; each series' Count and Codes agree with each other, as do its
// histogram's Counts and Count.
//
// Snapshot, Series and Histogram are plain data: their zero values are
// empty, they are safe for concurrent reads, and methods do not modify them.
type Snapshot struct {
	// Series are sorted by side, service, method, whole calls before
	// attempts, then instance.
	Series []Series `json:"series"`
	// Dropped counts the events not recorded because the Recorder had
	// reached RecorderOptions.MaxSeries.
	Dropped uint64 `json:"dropped,omitempty"`
}

// Series is one series' metrics.
type Series struct {
	Side     string `json:"side"` // "client" or "server"
	Service  string `json:"service"`
	Method   string `json:"method"`
	Instance string `json:"instance,omitempty"`
	// Attempt is true for a series of single client attempts
	// (Event.Attempt > 0) and false for whole calls.
	Attempt bool `json:"attempt,omitempty"`

	// Count, Errors and every count in Codes only grow from one snapshot
	// of a Recorder to the next, as counters do.
	Count  uint64            `json:"count"`  // events
	Errors uint64            `json:"errors"` // events whose code is not "OK"
	Codes  map[string]uint64 `json:"codes"`  // events by code name; no zero entries
	// Retries counts attempts after the first (Event.Attempt > 1).
	Retries uint64 `json:"retries,omitempty"`
	// Mocked counts events answered by a mock, by kind ("forced",
	// "fallback"); nil when there were none.
	Mocked map[string]uint64 `json:"mocked,omitempty"`

	// Latency holds the events' latencies. Taken while events are being
	// recorded, it may trail Count by a few errors: an event counts in
	// Codes before its latency lands.
	Latency Histogram `json:"latency"`
	// P50 and P99 are Latency.Quantile(0.5) and Latency.Quantile(0.99),
	// computed when the snapshot was taken, for readers of the JSON.
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
}

// Histogram is a latency histogram with cumulative buckets, as Prometheus
// exposes them. The zero value is an empty histogram.
type Histogram struct {
	// Bounds are the buckets' inclusive upper bounds, ascending; the last
	// bucket, +Inf, has no bound.
	Bounds []time.Duration `json:"bounds_ns"`
	// Counts[i] is the number of events with latency <= Bounds[i];
	// Counts[len(Bounds)] is the +Inf bucket and equals Count.
	Counts []uint64      `json:"counts"`
	Count  uint64        `json:"count"`
	Sum    time.Duration `json:"sum_ns"`
}

// Quantile estimates the q-quantile (0 <= q <= 1; clamped) of the latencies
// the way Prometheus' histogram_quantile does: it finds the bucket holding
// the rank q*Count and interpolates linearly inside it, taking 0 as the first
// bucket's lower bound. A quantile that falls in the +Inf bucket reports the
// highest finite bound. It returns 0 for an empty histogram or a NaN q.
// Below the +Inf bucket, the estimate's error is at most the width of the
// bucket it falls in.
func (h Histogram) Quantile(q float64) time.Duration {
	if h.Count == 0 || len(h.Counts) != len(h.Bounds)+1 {
		return 0
	}
	if math.IsNaN(q) {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := q * float64(h.Count)
	// The first bucket that reaches the rank and is not empty (so that q=0
	// lands on the lowest event's bucket).
	i, _ := slices.BinarySearchFunc(h.Counts, rank, func(c uint64, r float64) int {
		if c == 0 {
			return -1
		}
		return cmp.Compare(float64(c), r)
	})
	if i >= len(h.Bounds) {
		if len(h.Bounds) == 0 {
			return 0
		}
		return h.Bounds[len(h.Bounds)-1]
	}
	var lower time.Duration
	var below uint64
	if i > 0 {
		lower, below = h.Bounds[i-1], h.Counts[i-1]
	}
	in := h.Counts[i] - below
	if in == 0 {
		return h.Bounds[i]
	}
	// Clamped, in case Counts is not cumulative.
	frac := min(max((rank-float64(below))/float64(in), 0), 1)
	return lower + time.Duration(frac*float64(h.Bounds[i]-lower))
}

// Mean returns Sum/Count, or 0 for an empty histogram.
func (h Histogram) Mean() time.Duration {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / time.Duration(h.Count)
}

// Snapshot returns a copy of the metrics recorded so far.
func (r *Recorder) Snapshot() Snapshot {
	bounds := slices.Clone(r.bounds) // shared by this snapshot's series
	out := Snapshot{Series: []Series{}, Dropped: r.dropped.Load()}
	r.series.all(func(k seriesKey, s *series) {
		out.Series = append(out.Series, s.snapshot(k, bounds))
	})
	slices.SortFunc(out.Series, compareSeries)
	return out
}

func compareSeries(a, b Series) int {
	return cmp.Or(
		cmp.Compare(a.Side, b.Side),
		cmp.Compare(a.Service, b.Service),
		cmp.Compare(a.Method, b.Method),
		compareBool(a.Attempt, b.Attempt),
		cmp.Compare(a.Instance, b.Instance),
	)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func (s *series) snapshot(k seriesKey, bounds []time.Duration) Series {
	out := Series{
		Side:     k.side.String(),
		Service:  k.service,
		Method:   k.method,
		Instance: k.instance,
		Attempt:  k.attempt,
		Codes:    make(map[string]uint64),
		Retries:  s.retries.Load(),
	}
	for i := range s.codes {
		if n := s.codes[i].Load(); n > 0 {
			out.Codes[codeNames[i]] = n
		}
	}
	addMocked := func(kind string, n uint64) {
		if n == 0 {
			return
		}
		if out.Mocked == nil {
			out.Mocked = make(map[string]uint64)
		}
		out.Mocked[kind] += n
	}
	addMocked("forced", s.forced.Load())
	addMocked("fallback", s.fallback.Load())
	s.mu.Lock()
	for c, n := range s.otherCodes {
		out.Codes[c] += n
	}
	for kind, n := range s.otherMocked {
		addMocked(kind, n)
	}
	s.mu.Unlock()
	// The buckets are read after the codes, and an event adds to its code
	// before its bucket: an error being recorded may be in the codes and
	// not yet in the buckets, and then the histogram trails Count by it.
	// OK is what the buckets hold beyond the other codes (see series);
	// while errors are being recorded that falls short of the OK events
	// recorded, so it is never taken below what an earlier snapshot
	// reported: OK and Count only grow from one snapshot to the next, as
	// counters do.
	h := Histogram{Bounds: bounds, Counts: make([]uint64, len(s.buckets))}
	for i := range s.buckets {
		h.Count += s.buckets[i].n.Load()
		h.Counts[i] = h.Count
		h.Sum += time.Duration(s.buckets[i].sum.Load())
	}
	for _, n := range out.Codes {
		out.Errors += n
	}
	ok := s.seenOK(max(h.Count, out.Errors) - out.Errors)
	out.Count = max(h.Count, out.Errors+ok)
	if ok > 0 {
		out.Codes["OK"] = ok
	}
	out.Latency = h
	out.P50, out.P99 = h.Quantile(0.5), h.Quantile(0.99)
	return out
}

// seenOK returns the series' OK count for a snapshot that computed ok:
// ok, or more if an earlier snapshot reported more.
func (s *series) seenOK(ok uint64) uint64 {
	for {
		seen := s.okSeen.Load()
		if ok <= seen {
			return seen
		}
		if s.okSeen.CompareAndSwap(seen, ok) {
			return ok
		}
	}
}

// Call returns the series of whole calls of service/method on side, and
// whether it exists.
func (s Snapshot) Call(side Side, service, method string) (Series, bool) {
	for _, x := range s.Series {
		if !x.Attempt && x.Side == side.String() && x.Service == service && x.Method == method {
			return x, true
		}
	}
	return Series{}, false
}

// Attempts returns the series of client attempts of service/method, one per
// instance, sorted by instance; nil if there are none.
func (s Snapshot) Attempts(service, method string) []Series {
	var out []Series
	for _, x := range s.Series {
		if x.Attempt && x.Side == "client" && x.Service == service && x.Method == method {
			out = append(out, x)
		}
	}
	return out
}
