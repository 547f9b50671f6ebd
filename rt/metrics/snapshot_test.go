package metrics

import (
	"encoding/json"
	"expvar"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestQuantile(t *testing.T) {
	b := []time.Duration{10 * ms, 20 * ms, 40 * ms}
	tests := []struct {
		name   string
		counts []uint64 // cumulative, +Inf last
		q      float64
		want   time.Duration
	}{
		{"empty", []uint64{0, 0, 0, 0}, 0.5, 0},
		{"first bucket from 0", []uint64{4, 4, 4, 4}, 0.5, 5 * ms},
		{"interpolates in bucket", []uint64{0, 10, 10, 10}, 0.25, 12500 * time.Microsecond},
		{"across buckets", []uint64{50, 100, 100, 100}, 0.75, 15 * ms},
		{"p99", []uint64{90, 99, 100, 100}, 0.99, 20 * ms},
		{"+Inf reports last bound", []uint64{0, 0, 1, 10}, 0.5, 40 * ms},
		{"q=0 is the lowest non-empty bucket's lower bound", []uint64{0, 5, 10, 10}, 0, 10 * ms},
		{"q=1", []uint64{0, 5, 10, 10}, 1, 40 * ms},
		{"q clamped below", []uint64{4, 4, 4, 4}, -3, 0},
		{"q clamped above", []uint64{4, 4, 4, 4}, 7, 10 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Histogram{Bounds: b, Counts: tt.counts, Count: tt.counts[len(tt.counts)-1]}
			if got := h.Quantile(tt.q); got != tt.want {
				t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
	if got := (Histogram{Bounds: b, Counts: []uint64{1, 1, 1, 1}, Count: 1}).Quantile(math.NaN()); got != 0 {
		t.Errorf("Quantile(NaN) = %v, want 0", got)
	}
	if got := (Histogram{}).Quantile(0.5); got != 0 {
		t.Errorf("zero Histogram: Quantile = %v, want 0", got)
	}
	if got := (Histogram{Count: 3, Counts: []uint64{1}}).Quantile(0.5); got != 0 {
		t.Errorf("malformed Histogram: Quantile = %v, want 0", got)
	}
}

func TestMean(t *testing.T) {
	if got := (Histogram{}).Mean(); got != 0 {
		t.Errorf("empty Mean = %v", got)
	}
	if got := (Histogram{Count: 4, Sum: 10 * ms}).Mean(); got != 2500*time.Microsecond {
		t.Errorf("Mean = %v, want 2.5ms", got)
	}
}

func TestSnapshotLookups(t *testing.T) {
	r := NewRecorder(RecorderOptions{})
	r.Observe(attempt(1, "b:1", "Unavailable", ms))
	r.Observe(attempt(2, "a:1", "OK", ms))
	r.Observe(call("OK", 2*ms))
	r.Observe(Event{Side: Server, Service: "users.Users", Method: "Get", Code: "OK"})
	s := r.Snapshot()

	c, ok := s.Call(Client, "users.Users", "Get")
	if !ok || c.Count != 1 || c.Attempt {
		t.Errorf("Call(client) = %+v, %v", c, ok)
	}
	if c, ok := s.Call(Server, "users.Users", "Get"); !ok || c.Side != "server" {
		t.Errorf("Call(server) = %+v, %v", c, ok)
	}
	if _, ok := s.Call(Client, "users.Users", "Put"); ok {
		t.Error("Call(Put) found a series")
	}
	a := s.Attempts("users.Users", "Get")
	if len(a) != 2 || a[0].Instance != "a:1" || a[1].Instance != "b:1" || a[1].Errors != 1 {
		t.Errorf("Attempts = %+v", a)
	}
	if a := s.Attempts("users.Users", "Put"); a != nil {
		t.Errorf("Attempts(Put) = %+v, want nil", a)
	}
}

func TestSnapshotJSON(t *testing.T) {
	r := NewRecorder(RecorderOptions{Buckets: testBounds})
	r.Observe(call("OK", 3*ms))
	r.Observe(Event{Side: Client, Service: "users.Users", Method: "Get", Code: "Internal", Mocked: "fallback", Latency: ms})
	want := r.Snapshot()
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got Snapshot
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
	for _, field := range []string{`"codes":{"Internal":1,"OK":1}`, `"mocked":{"fallback":1}`, `"bounds_ns":[1000000,2000000,4000000]`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("JSON %s lacks %s", data, field)
		}
	}
}

var publishRuns atomic.Int64

func TestPublish(t *testing.T) {
	// expvar names are process-wide and permanent: one per run (-count).
	name := fmt.Sprintf("yrpc_metrics_test_publish_%d", publishRuns.Add(1))
	r := NewRecorder(RecorderOptions{Buckets: testBounds})
	if err := r.Publish(name); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	r.Observe(call("OK", ms)) // read lazily: events after Publish show

	v := expvar.Get(name)
	if v == nil {
		t.Fatal("expvar.Get returned nil after Publish")
	}
	var got Snapshot
	if err := json.Unmarshal([]byte(v.String()), &got); err != nil {
		t.Fatalf("expvar value %q: %v", v.String(), err)
	}
	if diff := cmp.Diff(r.Snapshot(), got); diff != "" {
		t.Errorf("published value (-want +got):\n%s", diff)
	}

	for _, taken := range []string{name, "memstats"} {
		err := NewRecorder(RecorderOptions{}).Publish(taken)
		if err == nil || !strings.Contains(err.Error(), "already published") {
			t.Errorf("Publish(%q) = %v, want an already-published error", taken, err)
		}
	}
	if err := r.Publish(name); err != nil {
		t.Errorf("Publish of the same recorder under the same name again: %v, want nil", err)
	}
	if err := r.Publish(""); err == nil {
		t.Error(`Publish("") succeeded`)
	}
}

// TestPublishNil: Client.Recorder is nil when rt.WithObserver replaced the
// default Recorder; publishing it must fail, not leave an expvar that
// panics whenever /debug/vars is read.
func TestPublishNil(t *testing.T) {
	name := fmt.Sprintf("yrpc_metrics_test_publish_nil_%d", publishRuns.Add(1))
	var r *Recorder
	if err := r.Publish(name); err == nil || !strings.Contains(err.Error(), "nil Recorder") {
		t.Errorf("Publish on a nil Recorder = %v, want a nil-Recorder error", err)
	}
	if v := expvar.Get(name); v != nil {
		t.Errorf("Publish on a nil Recorder published %q", name)
	}
}

func TestWriteTable(t *testing.T) {
	r := NewRecorder(RecorderOptions{Buckets: testBounds, MaxSeries: 3})
	r.Observe(attempt(1, "10.0.0.1:7000", "Unavailable", 3*ms))
	r.Observe(attempt(2, "10.0.0.2:7000", "OK", ms))
	r.Observe(Event{Side: Client, Service: "users.Users", Method: "Get", Code: "OK", Latency: 4 * ms, Mocked: "fallback"})
	r.Observe(Event{Side: Server, Service: "users.Users", Method: "Get", Code: "OK"}) // dropped
	var b strings.Builder
	if err := r.Snapshot().WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	want := `SIDE    SERVICE/METHOD   KIND     INSTANCE       COUNT  ERRORS  RETRIES  MOCKED      P50    P99     CODES
client  users.Users/Get  call     -              1      0       0        fallback=1  3ms    3.98ms  -
client  users.Users/Get  attempt  10.0.0.1:7000  1      1       0        -           3ms    3.98ms  Unavailable=1
client  users.Users/Get  attempt  10.0.0.2:7000  1      0       1        -           500µs  990µs   -
(1 events dropped: too many series)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteTable (-want +got):\n%s", diff)
	}
}

func TestRound3(t *testing.T) {
	tests := []struct{ in, want time.Duration }{
		{0, 0}, {999, 999}, {1234, 1230}, {833333, 833000}, {3980 * time.Microsecond, 3980 * time.Microsecond},
		{1234567890, 1230 * ms},
	}
	for _, tt := range tests {
		if got := round3(tt.in); got != tt.want {
			t.Errorf("round3(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// FuzzQuantile checks that Quantile never panics and stays within the
// histogram's bounds, whatever the (possibly inconsistent) counts.
func FuzzQuantile(f *testing.F) {
	f.Add(uint64(4), uint64(4), uint64(4), uint64(4), 0.5)
	f.Add(uint64(0), uint64(10), uint64(10), uint64(12), 0.99)
	f.Add(uint64(9), uint64(3), uint64(0), uint64(1), 0.25) // not cumulative
	f.Add(uint64(1), uint64(1), uint64(1), uint64(1), math.NaN())
	f.Fuzz(func(t *testing.T, c0, c1, c2, inf uint64, q float64) {
		h := Histogram{Bounds: testBounds, Counts: []uint64{c0, c1, c2, inf}, Count: inf}
		got := h.Quantile(q)
		if got < 0 || got > testBounds[len(testBounds)-1] {
			t.Errorf("Quantile(%v) of %v = %v, outside [0, %v]", q, h.Counts, got, testBounds[len(testBounds)-1])
		}
	})
}
