package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClient counts calls per worker, fails every failEvery-th call and
// reports a worker that is used by two goroutines at once.
type fakeClient struct {
	busy      []atomic.Bool
	calls     atomic.Int64
	failEvery int64
	overlap   atomic.Bool
	badWorker atomic.Bool
}

func newFake(c int, failEvery int64) *fakeClient {
	return &fakeClient{busy: make([]atomic.Bool, c), failEvery: failEvery}
}

func (f *fakeClient) Call(_ context.Context, w int) error {
	if w < 0 || w >= len(f.busy) {
		f.badWorker.Store(true)
		return errors.New("bad worker")
	}
	if f.busy[w].Swap(true) {
		f.overlap.Store(true)
	}
	defer f.busy[w].Store(false)
	n := f.calls.Add(1)
	if f.failEvery > 0 && n%f.failEvery == 0 {
		return fmt.Errorf("call %d failed", n)
	}
	return nil
}

func (f *fakeClient) Close() error { return nil }

func TestRun(t *testing.T) {
	tests := []struct {
		c, n      int
		failEvery int64
		wantErrs  int
	}{
		{1, 1, 0, 0},
		{1, 100, 0, 0},
		{8, 1000, 0, 0},
		{8, 1000, 10, 100},
		{64, 10, 0, 0}, // more workers than calls
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("c=%d,n=%d,fail=%d", tt.c, tt.n, tt.failEvery), func(t *testing.T) {
			f := newFake(tt.c, tt.failEvery)
			ph := Run(context.Background(), f, tt.c, tt.n)
			if got := f.calls.Load(); got != int64(tt.n) {
				t.Errorf("made %d calls, want %d", got, tt.n)
			}
			if len(ph.Lat) != tt.n {
				t.Errorf("recorded %d latencies, want %d", len(ph.Lat), tt.n)
			}
			if ph.Errors != tt.wantErrs || (tt.wantErrs > 0) != (ph.FirstErr != nil) {
				t.Errorf("errors = %d (first %v), want %d", ph.Errors, ph.FirstErr, tt.wantErrs)
			}
			if f.overlap.Load() || f.badWorker.Load() {
				t.Errorf("worker misuse: overlap %v, bad index %v", f.overlap.Load(), f.badWorker.Load())
			}
			for i := 1; i < len(ph.Lat); i++ {
				if ph.Lat[i] < ph.Lat[i-1] {
					t.Fatalf("latencies not sorted at %d", i)
				}
			}
		})
	}
}

// fakeDriver answers every request at a fixed latency.
type fakeDriver struct {
	fakeClient
	gotC int
}

func (d *fakeDriver) Drive(_ context.Context, c int, lat []time.Duration) (int, error) {
	d.gotC = c
	for i := range lat {
		lat[i] = time.Duration(len(lat)-i) * time.Microsecond
	}
	return 0, nil
}

func TestRunDriver(t *testing.T) {
	d := &fakeDriver{}
	ph := Run(context.Background(), d, 16, 100)
	if d.gotC != 16 || d.calls.Load() != 0 {
		t.Fatalf("Drive got c=%d, Call made %d calls", d.gotC, d.calls.Load())
	}
	if ph.Lat[0] != time.Microsecond || ph.Lat[99] != 100*time.Microsecond {
		t.Errorf("latencies not taken from Drive: %v .. %v", ph.Lat[0], ph.Lat[99])
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := newFake(4, 1) // every call fails, as a canceled call would
	ph := Run(ctx, f, 4, 1000)
	if ph.Errors != 1000 {
		t.Errorf("errors = %d, want every call counted as failed", ph.Errors)
	}
	if f.calls.Load() > 4 {
		t.Errorf("made %d calls after cancel, want at most one per worker", f.calls.Load())
	}
}

func TestPercentile(t *testing.T) {
	lat := make([]time.Duration, 1000)
	for i := range lat {
		lat[i] = time.Duration(i+1) * time.Microsecond
	}
	tests := []struct {
		in   []time.Duration
		q    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{lat[:1], 0.99, time.Microsecond},
		{lat, 0, time.Microsecond},
		{lat, 0.5, 500 * time.Microsecond},
		{lat, 0.99, 990 * time.Microsecond},
		{lat, 0.999, 999 * time.Microsecond},
		{lat, 1, 1000 * time.Microsecond},
		{lat[:10], 0.99, 10 * time.Microsecond},
	}
	for _, tt := range tests {
		if got := Percentile(tt.in, tt.q); got != tt.want {
			t.Errorf("Percentile(len %d, %v) = %v, want %v", len(tt.in), tt.q, got, tt.want)
		}
	}
	if got := Mean(lat[:3]); got != 2*time.Microsecond {
		t.Errorf("Mean = %v, want 2µs", got)
	}
}

// BenchmarkRunOverhead measures what the harness adds to every call: the
// shared counter, two clock reads and the latency store.
func BenchmarkRunOverhead(b *testing.B) {
	for _, c := range []int{1, 64} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			f := newFake(c, 0)
			b.ReportAllocs()
			b.ResetTimer()
			Run(context.Background(), f, c, b.N)
		})
	}
}

// TestFanIn checks that FanIn spreads workers evenly and maps each to one
// worker index of its client.
func TestFanIn(t *testing.T) {
	const n, c = 3, 7
	var seen [n]map[int]bool
	clients := make(FanIn, n)
	for i := range clients {
		seen[i] = map[int]bool{}
		clients[i] = &recorder{seen: seen[i], id: i}
	}
	for w := range c {
		if err := clients.Call(context.Background(), w); err != nil {
			t.Fatal(err)
		}
	}
	want := []map[int]bool{{0: true, 1: true, 2: true}, {0: true, 1: true}, {0: true, 1: true}}
	for i := range seen {
		if !maps.Equal(seen[i], want[i]) {
			t.Errorf("client %d saw workers %v, want %v", i, seen[i], want[i])
		}
	}
	if err := clients.Close(); err == nil || err.Error() != "closed 0" {
		t.Errorf("Close = %v, want the first client's error", err)
	}
}

type recorder struct {
	seen map[int]bool
	id   int
}

func (r *recorder) Call(_ context.Context, w int) error { r.seen[w] = true; return nil }
func (r *recorder) Close() error                        { return fmt.Errorf("closed %d", r.id) }

// TestRunTimeline checks that RunTimeline keeps every call's start and
// latency in call order: with one worker the starts increase, and each
// call starts after the one before it ended.
func TestRunTimeline(t *testing.T) {
	f := newFake(1, 0)
	before := time.Now().UnixNano()
	ph := RunTimeline(context.Background(), f, 1, 200)
	after := time.Now().UnixNano()
	if len(ph.Starts) != 200 || len(ph.Took) != 200 || len(ph.Lat) != 200 {
		t.Fatalf("kept %d starts, %d latencies in call order and %d sorted; want 200 each", len(ph.Starts), len(ph.Took), len(ph.Lat))
	}
	for i, st := range ph.Starts {
		if st < before || st > after {
			t.Fatalf("call %d started at %d, outside the phase [%d, %d]", i, st, before, after)
		}
		if i > 0 && st < ph.Starts[i-1]+int64(ph.Took[i-1]) {
			t.Fatalf("call %d started at %d, before call %d ended (%d + %v)", i, st, i-1, ph.Starts[i-1], ph.Took[i-1])
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(ph.Took)), ph.Lat) {
		t.Error("the latencies in call order are not those of Lat")
	}
	if ph := Run(context.Background(), f, 1, 10); ph.Starts != nil || ph.Took != nil {
		t.Errorf("Run kept a timeline: %d starts", len(ph.Starts))
	}
}
