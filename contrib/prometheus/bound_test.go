package prometheus

import (
	"strconv"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/yrpc/yrpc/rt/metrics"
)

// fakeNow is a clock that moves only when told.
type fakeNow struct{ t time.Time }

func (c *fakeNow) now() time.Time { return c.t }

// attempt is an OK attempt of s.S/M on instance addr.
func attempt(addr string) metrics.Event {
	return metrics.Event{Side: metrics.Client, Service: "s.S", Method: "M", Instance: addr, Attempt: 1, Code: "OK", Latency: ms}
}

// instanceCounts gathers reg and returns yrpc_attempts_total by instance.
func instanceCounts(t *testing.T, reg *prom.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "yrpc_attempts_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "instance" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

func newBoundedObserver(t *testing.T, opts Options) (*Observer, *prom.Registry) {
	t.Helper()
	reg := prom.NewPedanticRegistry()
	o, err := NewObserver(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return o, reg
}

// Beyond MaxSeries, the attempts of new instances are counted under the
// overflow instance: the series stay bounded and the total stays right.
func TestObserverMaxSeries(t *testing.T) {
	tests := []struct {
		name      string
		max       int
		instances int
		want      int // distinct instance labels, the overflow one included
	}{
		{"under the bound", 5, 5, 5},
		{"over the bound", 3, 100, 4},
		{"default bound", 0, metrics.DefaultMaxSeries + 1000, metrics.DefaultMaxSeries + 1},
		{"no bound", -1, 300, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, reg := newBoundedObserver(t, Options{MaxSeries: tt.max, InstanceTTL: -1})
			for i := range tt.instances {
				o.Observe(attempt("10.0.0.1:" + strconv.Itoa(i)))
			}
			o.Observe(attempt("10.0.0.1:0")) // a known instance keeps its series
			got := instanceCounts(t, reg)
			if len(got) != tt.want {
				t.Errorf("%d instance labels, want %d", len(got), tt.want)
			}
			var total float64
			for _, n := range got {
				total += n
			}
			if total != float64(tt.instances+1) {
				t.Errorf("attempts in all = %v, want %d", total, tt.instances+1)
			}
			if got["10.0.0.1:0"] != 2 {
				t.Errorf("attempts of the first instance = %v, want 2", got["10.0.0.1:0"])
			}
		})
	}
}

// The series of an instance without an event for InstanceTTL go at the
// next scrape; an instance that is still called keeps its series, and one
// that comes back starts new ones.
func TestObserverInstanceTTL(t *testing.T) {
	clock := &fakeNow{t: time.Unix(1e9, 0)}
	o, reg := newBoundedObserver(t, Options{InstanceTTL: time.Minute, Now: clock.now})
	step := func(d time.Duration, events ...string) map[string]float64 {
		clock.t = clock.t.Add(d)
		for _, addr := range events {
			o.Observe(attempt(addr))
		}
		return instanceCounts(t, reg)
	}
	step(0, "a:1", "b:1")
	step(30*time.Second, "a:1")
	if got := step(29*time.Second, "a:1"); len(got) != 2 {
		t.Fatalf("at 59s: %v, want both instances", got)
	}
	got := step(41 * time.Second) // b idle since 0s, a since 59s
	if _, ok := got["b:1"]; ok || got["a:1"] != 3 {
		t.Errorf("at 100s: %v, want a:1 with 3 attempts and no b:1", got)
	}
	if got := step(time.Second, "b:1"); got["b:1"] != 1 {
		t.Errorf("b:1 back: %v, want its count to start again at 1", got)
	}
	if got := step(2 * time.Minute); len(got) != 0 {
		t.Errorf("after 2 idle minutes: %v, want no instance series", got)
	}
	o.mu.RLock()
	n, cached := len(o.inst), len(o.cache)
	o.mu.RUnlock()
	if n != 0 || cached != 0 {
		t.Errorf("the Observer still holds %d instance series and %d cache entries", n, cached)
	}
}

// A client whose providers churn — 20 new addresses a minute for an hour,
// 1200 in all — keeps the series of the last InstanceTTL or so, with the
// default options, and never overflows.
func TestObserverChurnStaysBounded(t *testing.T) {
	clock := &fakeNow{t: time.Unix(1e9, 0)}
	o, reg := newBoundedObserver(t, Options{Now: clock.now})
	const perMinute = 20
	limit := perMinute * int(DefaultInstanceTTL*3/2/time.Minute+1)
	most := 0
	for m := range 60 {
		clock.t = clock.t.Add(time.Minute)
		for i := range perMinute {
			o.Observe(attempt("10.0." + strconv.Itoa(m) + "." + strconv.Itoa(i) + ":7000"))
		}
		got := instanceCounts(t, reg)
		if _, ok := got[OverflowInstance]; ok {
			t.Fatalf("minute %d: overflow with %d instances", m, len(got))
		}
		most = max(most, len(got))
	}
	if most > limit || most < perMinute*int(DefaultInstanceTTL/time.Minute) {
		t.Errorf("at most %d instance series, want between %d and %d", most, perMinute*int(DefaultInstanceTTL/time.Minute), limit)
	}
}
