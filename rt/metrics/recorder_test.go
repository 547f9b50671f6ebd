package metrics

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const ms = time.Millisecond

// testBounds are small bounds that make histograms easy to read.
var testBounds = []time.Duration{1 * ms, 2 * ms, 4 * ms}

func call(code string, lat time.Duration) Event {
	return Event{Side: Client, Service: "users.Users", Method: "Get", Code: code, Latency: lat}
}

func attempt(n int, instance, code string, lat time.Duration) Event {
	return Event{Side: Client, Service: "users.Users", Method: "Get", Instance: instance, Attempt: n, Code: code, Latency: lat}
}

func hist(counts []uint64, sum time.Duration) Histogram {
	return Histogram{Bounds: testBounds, Counts: counts, Count: counts[len(counts)-1], Sum: sum}
}

func TestRecorder(t *testing.T) {
	tests := []struct {
		name   string
		events []Event
		want   []Series
	}{
		{
			name:   "empty",
			events: nil,
			want:   []Series{},
		},
		{
			name: "counts per code",
			events: []Event{
				call("OK", 1*ms), call("OK", 1*ms), call("Unavailable", 3*ms),
				call("DeadlineExceeded", 5*ms), call("Code(42)", 0),
			},
			want: []Series{{
				Side: "client", Service: "users.Users", Method: "Get",
				Count: 5, Errors: 3,
				Codes:   map[string]uint64{"OK": 2, "Unavailable": 1, "DeadlineExceeded": 1, "Code(42)": 1},
				Latency: hist([]uint64{3, 3, 4, 5}, 10*ms),
				P50:     833333 * time.Nanosecond, P99: 4 * ms, // 2.5/3 into [0, 1ms]; +Inf reports 4ms
			}},
		},
		{
			name: "attempts kept apart from calls, retries counted",
			events: []Event{
				attempt(1, "10.0.0.1:7000", "Unavailable", 1*ms),
				attempt(2, "10.0.0.2:7000", "OK", 2*ms),
				call("OK", 3*ms),
			},
			want: []Series{
				{
					Side: "client", Service: "users.Users", Method: "Get",
					Count: 1, Codes: map[string]uint64{"OK": 1},
					Latency: hist([]uint64{0, 0, 1, 1}, 3*ms), P50: 3 * ms, P99: 3980 * time.Microsecond,
				},
				{
					Side: "client", Service: "users.Users", Method: "Get", Instance: "10.0.0.1:7000", Attempt: true,
					Count: 1, Errors: 1, Codes: map[string]uint64{"Unavailable": 1},
					Latency: hist([]uint64{1, 1, 1, 1}, 1*ms), P50: ms / 2, P99: 990 * time.Microsecond,
				},
				{
					Side: "client", Service: "users.Users", Method: "Get", Instance: "10.0.0.2:7000", Attempt: true,
					Count: 1, Codes: map[string]uint64{"OK": 1}, Retries: 1,
					Latency: hist([]uint64{0, 1, 1, 1}, 2*ms), P50: 1500 * time.Microsecond, P99: 1990 * time.Microsecond,
				},
			},
		},
		{
			name: "mocks per kind",
			events: []Event{
				{Side: Client, Service: "s.S", Method: "M", Code: "OK", Mocked: "forced"},
				{Side: Client, Service: "s.S", Method: "M", Code: "OK", Mocked: "forced"},
				{Side: Client, Service: "s.S", Method: "M", Code: "Internal", Mocked: "fallback"},
				{Side: Client, Service: "s.S", Method: "M", Code: "OK", Mocked: "chaos"},
				{Side: Client, Service: "s.S", Method: "M", Code: "OK"},
			},
			want: []Series{{
				Side: "client", Service: "s.S", Method: "M",
				Count: 5, Errors: 1, Codes: map[string]uint64{"OK": 4, "Internal": 1},
				Mocked:  map[string]uint64{"forced": 2, "fallback": 1, "chaos": 1},
				Latency: hist([]uint64{5, 5, 5, 5}, 0), P50: ms / 2, P99: 990 * time.Microsecond,
			}},
		},
		{
			name: "sides and sort order",
			events: []Event{
				{Side: Server, Service: "b.B", Method: "M", Code: "OK", Latency: -time.Second},
				{Side: Client, Service: "b.B", Method: "M", Code: "OK"},
				{Side: Client, Service: "a.A", Method: "Z", Code: "OK"},
				{Side: Client, Service: "a.A", Method: "A", Code: "OK", Latency: time.Hour},
			},
			want: []Series{
				{Side: "client", Service: "a.A", Method: "A", Count: 1, Codes: map[string]uint64{"OK": 1},
					Latency: hist([]uint64{0, 0, 0, 1}, time.Hour), P50: 4 * ms, P99: 4 * ms},
				{Side: "client", Service: "a.A", Method: "Z", Count: 1, Codes: map[string]uint64{"OK": 1},
					Latency: hist([]uint64{1, 1, 1, 1}, 0), P50: ms / 2, P99: 990 * time.Microsecond},
				{Side: "client", Service: "b.B", Method: "M", Count: 1, Codes: map[string]uint64{"OK": 1},
					Latency: hist([]uint64{1, 1, 1, 1}, 0), P50: ms / 2, P99: 990 * time.Microsecond},
				{Side: "server", Service: "b.B", Method: "M", Count: 1, Codes: map[string]uint64{"OK": 1},
					Latency: hist([]uint64{1, 1, 1, 1}, 0), P50: ms / 2, P99: 990 * time.Microsecond}, // negative latency counts as 0
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecorder(RecorderOptions{Buckets: testBounds})
			for _, e := range tt.events {
				r.Observe(e)
			}
			got := r.Snapshot()
			if diff := cmp.Diff(Snapshot{Series: tt.want}, got); diff != "" {
				t.Errorf("Snapshot() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBucketBoundsAreInclusive(t *testing.T) {
	tests := []struct {
		lat  time.Duration
		want int
	}{
		{0, 0}, {1 * ms, 0}, {1*ms + 1, 1}, {2 * ms, 1}, {3 * ms, 2}, {4 * ms, 2}, {4*ms + 1, 3}, {time.Hour, 3},
	}
	for _, tt := range tests {
		if got := bucketIndex(testBounds, tt.lat); got != tt.want {
			t.Errorf("bucketIndex(%v) = %d, want %d", tt.lat, got, tt.want)
		}
	}
}

func TestBuckets(t *testing.T) {
	tests := []struct {
		name string
		in   []time.Duration
		want []time.Duration
	}{
		{"nil means default", nil, DefaultBuckets()},
		{"only invalid means default", []time.Duration{0, -1}, DefaultBuckets()},
		{"sorted, deduplicated, positive", []time.Duration{4 * ms, 0, 1 * ms, 4 * ms, -ms, 2 * ms}, testBounds},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tt.in...)
			r := NewRecorder(RecorderOptions{Buckets: in})
			r.Observe(call("OK", 0))
			got := r.Snapshot().Series[0].Latency.Bounds
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("bounds (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.in, in); diff != "" {
				t.Errorf("NewRecorder modified the caller's Buckets (-before +after):\n%s", diff)
			}
		})
	}
}

func TestDefaultBucketsAscending(t *testing.T) {
	b := DefaultBuckets()
	if b[0] != 50*time.Microsecond || b[len(b)-1] != 10*time.Second {
		t.Errorf("DefaultBuckets() spans %v..%v, want 50µs..10s", b[0], b[len(b)-1])
	}
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			t.Fatalf("DefaultBuckets()[%d] = %v, not above %v", i, b[i], b[i-1])
		}
	}
}

func TestCodeIndex(t *testing.T) {
	for i, name := range codeNames {
		if got := codeIndex(name); got != i {
			t.Errorf("codeIndex(%q) = %d, want %d", name, got, i)
		}
	}
	for _, name := range []string{"", "ok", "Code(17)"} {
		if got := codeIndex(name); got != -1 {
			t.Errorf("codeIndex(%q) = %d, want -1", name, got)
		}
	}
}

func TestMaxSeries(t *testing.T) {
	r := NewRecorder(RecorderOptions{MaxSeries: 2})
	for _, inst := range []string{"a", "b", "c", "a", "c"} {
		r.Observe(attempt(1, inst, "OK", 0))
	}
	s := r.Snapshot()
	if len(s.Series) != 2 || s.Dropped != 2 {
		t.Fatalf("got %d series, %d dropped; want 2 series, 2 dropped", len(s.Series), s.Dropped)
	}
	if a := s.Attempts("users.Users", "Get"); a[0].Instance != "a" || a[0].Count != 2 {
		t.Errorf("series a = %+v, want 2 events", a[0])
	}

	unlimited := NewRecorder(RecorderOptions{MaxSeries: -1})
	for i := range DefaultMaxSeries + 1 {
		unlimited.Observe(attempt(1, string(rune(i)), "OK", 0))
	}
	if s := unlimited.Snapshot(); len(s.Series) != DefaultMaxSeries+1 || s.Dropped != 0 {
		t.Errorf("unlimited: got %d series, %d dropped", len(s.Series), s.Dropped)
	}
}

// TestConcurrent observes from several goroutines, while snapshots are
// taken, and checks that nothing is lost and that every snapshot adds up
// (OK is derived from the histogram: see series). Run it with -race.
func TestConcurrent(t *testing.T) {
	const goroutines, perG = 8, 2000
	r := NewRecorder(RecorderOptions{})
	instances := []string{"", "10.0.0.1:1", "10.0.0.2:1"}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				inst := instances[(g+i)%len(instances)]
				e := Event{Side: Client, Service: "s.S", Method: "M", Instance: inst, Code: "OK", Latency: time.Duration(i) * time.Microsecond}
				if inst != "" {
					e.Attempt = 1
				}
				if i%10 == 0 {
					e.Code, e.Mocked = "Code(99)", "other"
				}
				r.Observe(e)
			}
		})
	}
	var bad []string
	wg.Go(func() {
		for range 50 {
			for _, s := range r.Snapshot().Series {
				var codes uint64
				for _, n := range s.Codes {
					codes += n
				}
				// The histogram may trail by the errors being recorded.
				if codes != s.Count || s.Latency.Count > s.Count || s.Errors > s.Count || s.Count-s.Errors != s.Codes["OK"] {
					bad = append(bad, fmt.Sprintf("count %d, codes %v, histogram %d, errors %d", s.Count, s.Codes, s.Latency.Count, s.Errors))
				}
			}
		}
	})
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("%d series in snapshots taken meanwhile do not add up, e.g. %s", len(bad), bad[0])
	}

	var total, errs, hcount, mocked uint64
	for _, s := range r.Snapshot().Series {
		total += s.Count
		errs += s.Errors
		hcount += s.Latency.Count
		mocked += s.Mocked["other"]
	}
	want := uint64(goroutines * perG)
	if total != want || hcount != want || errs != want/10 || mocked != want/10 {
		t.Errorf("count %d, histogram %d, errors %d, mocked %d; want %d, %d, %d, %d",
			total, hcount, errs, mocked, want, want, want/10, want/10)
	}
}

// TestSnapshotMidEvent takes a snapshot between the two adds of an error
// event (its code, then its bucket): the error counts, the histogram
// trails by it, and OK does not go below zero.
func TestSnapshotMidEvent(t *testing.T) {
	r := NewRecorder(RecorderOptions{Buckets: testBounds})
	r.Observe(call("Unavailable", ms))
	k := seriesKey{side: Client, service: "users.Users", method: "Get"}
	r.series.get(k).codes[codeIndex("Unavailable")].Add(1) // the bucket's add is yet to come
	got, ok := r.Snapshot().Call(Client, "users.Users", "Get")
	if !ok {
		t.Fatal("no series")
	}
	if got.Count != 2 || got.Errors != 2 || got.Latency.Count != 1 || len(got.Codes) != 1 {
		t.Errorf("count %d, errors %d, histogram %d, codes %v; want 2, 2, 1 and Unavailable only", got.Count, got.Errors, got.Latency.Count, got.Codes)
	}
}

// A snapshot taken while an error is being recorded (its code counted, its
// bucket not yet) reports no fewer OK events than the snapshot before it:
// OK and Count only grow, as the counters a scraper computes rates from.
func TestSnapshotOKNeverDrops(t *testing.T) {
	r := NewRecorder(RecorderOptions{Buckets: testBounds})
	for range 3 {
		r.Observe(call("OK", ms))
	}
	before, _ := r.Snapshot().Call(Client, "users.Users", "Get")
	k := seriesKey{side: Client, service: "users.Users", method: "Get"}
	r.series.get(k).codes[codeIndex("Unavailable")].Add(1) // the bucket's add is yet to come
	mid, _ := r.Snapshot().Call(Client, "users.Users", "Get")
	if mid.Codes["OK"] < before.Codes["OK"] || mid.Count < before.Count || mid.Count != mid.Errors+mid.Codes["OK"] {
		t.Errorf("before: OK %d, count %d; mid-event: OK %d, errors %d, count %d; want OK and count not below before's, count = errors + OK",
			before.Codes["OK"], before.Count, mid.Codes["OK"], mid.Errors, mid.Count)
	}
}
