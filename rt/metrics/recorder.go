package metrics

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxSeries is the number of series a Recorder keeps when
// RecorderOptions.MaxSeries is zero.
const DefaultMaxSeries = 4096

// DefaultBuckets returns the latency histogram's default upper bounds, a new
// slice on each call: the 1-2.5-5 sequence from 50µs to 10s (17 bounds,
// plus the implicit +Inf bucket). It spans an in-memory loopback call to a
// slow remote one; Prometheus' own default set starts at 5ms, too coarse for
// RPCs that often finish in microseconds.
func DefaultBuckets() []time.Duration {
	return []time.Duration{
		50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
		time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
		25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
		500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
	}
}

// RecorderOptions configures a Recorder. The zero value means the defaults.
type RecorderOptions struct {
	// Buckets are the latency histogram's upper bounds (inclusive, as
	// Prometheus' "le"); an event slower than the last one lands in the
	// +Inf bucket. NewRecorder sorts them and drops duplicates and
	// non-positive values. Empty means DefaultBuckets().
	Buckets []time.Duration
	// MaxSeries bounds the number of series, so that a churning set of
	// instances cannot grow the Recorder without limit. Events of a new
	// series beyond it are not recorded but counted in Snapshot.Dropped.
	// Zero means DefaultMaxSeries; negative means no limit.
	MaxSeries int
}

// Recorder is the built-in Observer: it keeps RED metrics per series, a
// series being one (side, service, method, instance) for either whole calls
// (Event.Attempt == 0) or single attempts (Event.Attempt > 0). For each it
// counts events by status code, retries (attempts after the first) and mocked
// answers by mock kind, and keeps a latency histogram with fixed buckets.
//
// Create one with NewRecorder; the zero value is not usable. A Recorder is
// safe for concurrent use. Observe on a series seen before neither locks
// nor allocates; a series' first event allocates it under a lock, and its
// next few lookups take that lock until the series joins the lock-free map
// (see index).
type Recorder struct {
	bounds    []time.Duration // sorted, positive, distinct; never modified
	maxSeries int             // < 0: no limit
	series    index
	dropped   atomic.Uint64
}

// seriesKey names a series.
type seriesKey struct {
	side     Side
	attempt  bool
	service  string
	method   string
	instance string
}

// series holds one series' counters. Codes and mock kinds the package knows
// have fixed slots; others go to a small locked map.
//
// An OK event, almost every one, touches a single cache line: its latency
// bucket, which keeps the bucket's count and the sum of its latencies side
// by side. OK has a slot in codes but it stays zero: every event lands in
// one bucket, so OK events are the buckets' total less the other codes.
// (Counting OK, and the sum, on lines of their own made every core that
// records the series pull three lines from the others per event.)
type series struct {
	codes    [numCodes]atomic.Uint64
	retries  atomic.Uint64
	forced   atomic.Uint64
	fallback atomic.Uint64
	buckets  []bucket // not cumulative; len(bounds)+1, the last is +Inf
	// okSeen is the most OK events a snapshot has reported: snapshots
	// never report fewer (see snapshot).
	okSeen atomic.Uint64

	mu          sync.Mutex
	otherCodes  map[string]uint64
	otherMocked map[string]uint64
}

// NewRecorder returns an empty Recorder configured by opts.
func NewRecorder(opts RecorderOptions) *Recorder {
	r := &Recorder{bounds: normBounds(opts.Buckets), maxSeries: opts.MaxSeries}
	if r.maxSeries == 0 {
		r.maxSeries = DefaultMaxSeries
	}
	return r
}

// normBounds returns a sorted copy of b without duplicates and non-positive
// values, or DefaultBuckets() if nothing is left.
func normBounds(b []time.Duration) []time.Duration {
	out := slices.DeleteFunc(slices.Clone(b), func(d time.Duration) bool { return d <= 0 })
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return DefaultBuckets()
	}
	return slices.Clip(out)
}

// Observe records e. It implements Observer.
func (r *Recorder) Observe(e Event) {
	k := seriesKey{side: e.Side, attempt: e.Attempt > 0, service: e.Service, method: e.Method, instance: e.Instance}
	s := r.series.get(k)
	if s == nil {
		if s = r.series.getOrAdd(k, r.maxSeries, r.newSeries); s == nil {
			r.dropped.Add(1)
			return
		}
	}
	s.observe(e, r.bounds)
}

func (r *Recorder) newSeries() *series {
	return &series{buckets: make([]bucket, len(r.bounds)+1)}
}

// bucket is one latency bucket: 16 bytes, so that its two counters share
// a cache line (the slice's elements are 16-byte aligned).
type bucket struct {
	n   atomic.Uint64 // events
	sum atomic.Int64  // their latencies, nanoseconds
}

func (s *series) observe(e Event, bounds []time.Duration) {
	if i := codeIndex(e.Code); i > 0 {
		s.codes[i].Add(1)
	} else if i < 0 {
		s.addOther(&s.otherCodes, e.Code)
	}
	if e.Attempt > 1 {
		s.retries.Add(1)
	}
	switch e.Mocked {
	case "":
	case "forced":
		s.forced.Add(1)
	case "fallback":
		s.fallback.Add(1)
	default:
		s.addOther(&s.otherMocked, e.Mocked)
	}
	lat := max(e.Latency, 0)
	b := &s.buckets[bucketIndex(bounds, lat)]
	b.n.Add(1)
	b.sum.Add(int64(lat))
}

func (s *series) addOther(m *map[string]uint64, name string) {
	s.mu.Lock()
	if *m == nil {
		*m = make(map[string]uint64)
	}
	(*m)[name]++
	s.mu.Unlock()
}

// bucketIndex returns the first i with d <= bounds[i], or len(bounds).
func bucketIndex(bounds []time.Duration, d time.Duration) int {
	lo, hi := 0, len(bounds)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bounds[mid] < d {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// codeNames are the status code names the runtime reports (rt.Code's
// String, gRPC's set), in code order.
var codeNames = [...]string{
	"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded",
	"NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted",
	"FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
	"Internal", "Unavailable", "DataLoss", "Unauthenticated",
}

const numCodes = len(codeNames)

// codeIndex returns name's index in codeNames, or -1.
func codeIndex(name string) int {
	switch name {
	case "OK":
		return 0
	case "Canceled":
		return 1
	case "Unknown":
		return 2
	case "InvalidArgument":
		return 3
	case "DeadlineExceeded":
		return 4
	case "NotFound":
		return 5
	case "AlreadyExists":
		return 6
	case "PermissionDenied":
		return 7
	case "ResourceExhausted":
		return 8
	case "FailedPrecondition":
		return 9
	case "Aborted":
		return 10
	case "OutOfRange":
		return 11
	case "Unimplemented":
		return 12
	case "Internal":
		return 13
	case "Unavailable":
		return 14
	case "DataLoss":
		return 15
	case "Unauthenticated":
		return 16
	}
	return -1
}
