package prometheus

import (
	"strings"
	"sync"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/yrpc/yrpc/rt/metrics"
)

const ms = time.Millisecond

func newTestObserver(t *testing.T) (*Observer, *prom.Registry) {
	t.Helper()
	reg := prom.NewPedanticRegistry()
	o, err := NewObserver(reg, Options{Buckets: []time.Duration{4 * ms, 1 * ms, 2 * ms, 2 * ms, 0}})
	if err != nil {
		t.Fatalf("NewObserver: %v", err)
	}
	return o, reg
}

func TestObserverExposition(t *testing.T) {
	o, reg := newTestObserver(t)
	for _, e := range []metrics.Event{
		{Side: metrics.Client, Service: "users.Users", Method: "Get", Instance: "10.0.0.1:7000", Attempt: 1, Code: "Unavailable", Latency: 3 * ms},
		{Side: metrics.Client, Service: "users.Users", Method: "Get", Instance: "10.0.0.2:7000", Attempt: 2, Code: "OK", Latency: 1 * ms},
		{Side: metrics.Client, Service: "users.Users", Method: "Get", Code: "OK", Latency: 5 * ms},
		{Side: metrics.Client, Service: "users.Users", Method: "Get", Code: "OK", Latency: -ms, Mocked: "forced"},
		{Side: metrics.Server, Service: "users.Users", Method: "Get", Code: "NotFound", Latency: ms / 2},
	} {
		o.Observe(e)
	}
	want := `
# HELP yrpc_attempt_duration_seconds Latency of finished yrpc client attempts by provider instance.
# TYPE yrpc_attempt_duration_seconds histogram
yrpc_attempt_duration_seconds_bucket{instance="10.0.0.1:7000",method="Get",service="users.Users",side="client",le="0.001"} 0
yrpc_attempt_duration_seconds_bucket{instance="10.0.0.1:7000",method="Get",service="users.Users",side="client",le="0.002"} 0
yrpc_attempt_duration_seconds_bucket{instance="10.0.0.1:7000",method="Get",service="users.Users",side="client",le="0.004"} 1
yrpc_attempt_duration_seconds_bucket{instance="10.0.0.1:7000",method="Get",service="users.Users",side="client",le="+Inf"} 1
yrpc_attempt_duration_seconds_sum{instance="10.0.0.1:7000",method="Get",service="users.Users",side="client"} 0.003
yrpc_attempt_duration_seconds_count{instance="10.0.0.1:7000",method="Get",service="users.Users",side="client"} 1
yrpc_attempt_duration_seconds_bucket{instance="10.0.0.2:7000",method="Get",service="users.Users",side="client",le="0.001"} 1
yrpc_attempt_duration_seconds_bucket{instance="10.0.0.2:7000",method="Get",service="users.Users",side="client",le="0.002"} 1
yrpc_attempt_duration_seconds_bucket{instance="10.0.0.2:7000",method="Get",service="users.Users",side="client",le="0.004"} 1
yrpc_attempt_duration_seconds_bucket{instance="10.0.0.2:7000",method="Get",service="users.Users",side="client",le="+Inf"} 1
yrpc_attempt_duration_seconds_sum{instance="10.0.0.2:7000",method="Get",service="users.Users",side="client"} 0.001
yrpc_attempt_duration_seconds_count{instance="10.0.0.2:7000",method="Get",service="users.Users",side="client"} 1
# HELP yrpc_attempts_total Finished yrpc client attempts by provider instance and status code.
# TYPE yrpc_attempts_total counter
yrpc_attempts_total{code="OK",instance="10.0.0.2:7000",method="Get",service="users.Users",side="client"} 1
yrpc_attempts_total{code="Unavailable",instance="10.0.0.1:7000",method="Get",service="users.Users",side="client"} 1
# HELP yrpc_call_duration_seconds Latency of finished yrpc calls.
# TYPE yrpc_call_duration_seconds histogram
yrpc_call_duration_seconds_bucket{instance="",method="Get",service="users.Users",side="client",le="0.001"} 1
yrpc_call_duration_seconds_bucket{instance="",method="Get",service="users.Users",side="client",le="0.002"} 1
yrpc_call_duration_seconds_bucket{instance="",method="Get",service="users.Users",side="client",le="0.004"} 1
yrpc_call_duration_seconds_bucket{instance="",method="Get",service="users.Users",side="client",le="+Inf"} 2
yrpc_call_duration_seconds_sum{instance="",method="Get",service="users.Users",side="client"} 0.005
yrpc_call_duration_seconds_count{instance="",method="Get",service="users.Users",side="client"} 2
yrpc_call_duration_seconds_bucket{instance="",method="Get",service="users.Users",side="server",le="0.001"} 1
yrpc_call_duration_seconds_bucket{instance="",method="Get",service="users.Users",side="server",le="0.002"} 1
yrpc_call_duration_seconds_bucket{instance="",method="Get",service="users.Users",side="server",le="0.004"} 1
yrpc_call_duration_seconds_bucket{instance="",method="Get",service="users.Users",side="server",le="+Inf"} 1
yrpc_call_duration_seconds_sum{instance="",method="Get",service="users.Users",side="server"} 0.0005
yrpc_call_duration_seconds_count{instance="",method="Get",service="users.Users",side="server"} 1
# HELP yrpc_calls_total Finished yrpc calls (client: after retries, fallbacks and mocks) by status code.
# TYPE yrpc_calls_total counter
yrpc_calls_total{code="NotFound",instance="",method="Get",service="users.Users",side="server"} 1
yrpc_calls_total{code="OK",instance="",method="Get",service="users.Users",side="client"} 2
# HELP yrpc_mocked_total yrpc calls answered by a mock, by kind (forced, fallback).
# TYPE yrpc_mocked_total counter
yrpc_mocked_total{instance="",kind="forced",method="Get",service="users.Users",side="client"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestObserverCounters(t *testing.T) {
	tests := []struct {
		name   string
		events []metrics.Event
		calls  map[[2]string]float64 // {side, code} -> whole calls of s.S/M
		mocked map[string]float64    // kind -> mocked calls of client s.S/M
	}{
		{
			name: "codes",
			events: []metrics.Event{
				{Side: metrics.Client, Code: "OK"}, {Side: metrics.Client, Code: "OK"},
				{Side: metrics.Client, Code: "DeadlineExceeded"}, {Side: metrics.Server, Code: "OK"},
			},
			calls: map[[2]string]float64{{"client", "OK"}: 2, {"client", "DeadlineExceeded"}: 1, {"server", "OK"}: 1},
		},
		{
			name: "attempts are not calls",
			events: []metrics.Event{
				{Side: metrics.Client, Attempt: 1, Instance: "a:1", Code: "Unavailable"},
				{Side: metrics.Client, Attempt: 2, Instance: "b:1", Code: "OK"},
				{Side: metrics.Client, Code: "OK"},
			},
			calls: map[[2]string]float64{{"client", "OK"}: 1, {"client", "Unavailable"}: 0},
		},
		{
			name: "mocks per kind",
			events: []metrics.Event{
				{Side: metrics.Client, Code: "OK", Mocked: "forced"},
				{Side: metrics.Client, Code: "OK", Mocked: "fallback"},
				{Side: metrics.Client, Code: "Internal", Mocked: "fallback"},
			},
			calls:  map[[2]string]float64{{"client", "OK"}: 2, {"client", "Internal"}: 1},
			mocked: map[string]float64{"forced": 1, "fallback": 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _ := newTestObserver(t)
			for _, e := range tt.events {
				e.Service, e.Method = "s.S", "M"
				o.Observe(e)
			}
			for sc, want := range tt.calls {
				if got := testutil.ToFloat64(o.calls.WithLabelValues(sc[0], "s.S", "M", "", sc[1])); got != want {
					t.Errorf("calls{side=%q,code=%q} = %v, want %v", sc[0], sc[1], got, want)
				}
			}
			for kind, want := range tt.mocked {
				if got := testutil.ToFloat64(o.mocked.WithLabelValues("client", "s.S", "M", "", kind)); got != want {
					t.Errorf("mocked{kind=%q} = %v, want %v", kind, got, want)
				}
			}
		})
	}
}

func TestNewObserverRegistration(t *testing.T) {
	reg := prom.NewRegistry()
	if _, err := NewObserver(reg, Options{}); err != nil {
		t.Fatal(err)
	}
	_, err := NewObserver(reg, Options{})
	if err == nil || !strings.Contains(err.Error(), `namespace "yrpc" are already registered`) {
		t.Fatalf("second NewObserver: %v, want an already-registered error", err)
	}
	// Another namespace or const labels make other metrics.
	if _, err := NewObserver(reg, Options{Namespace: "other"}); err != nil {
		t.Errorf("NewObserver with another namespace: %v", err)
	}
	// Const labels tell processes' metrics apart in one registry, but the
	// label names must agree.
	for _, app := range []string{"a", "b"} {
		if _, err := NewObserver(reg, Options{Namespace: "app", ConstLabels: prom.Labels{"app": app}}); err != nil {
			t.Errorf("NewObserver with app=%q: %v", app, err)
		}
	}

	// Bad options are errors, not panics.
	if _, err := NewObserver(prom.NewRegistry(), Options{ConstLabels: prom.Labels{"side": "x"}}); err == nil {
		t.Error("NewObserver with a const label named like a variable one succeeded")
	}

	// A failed NewObserver leaves nothing registered.
	live := &liveRegisterer{Registerer: prom.NewRegistry()}
	live.MustRegister(prom.NewCounter(prom.CounterOpts{Name: "yrpc_mocked_total", Help: "clash"}))
	if _, err := NewObserver(live, Options{}); err == nil {
		t.Fatal("NewObserver registered over a clashing metric")
	}
	if live.n != 1 {
		t.Errorf("after a failed NewObserver, %d collectors are registered, want 1", live.n)
	}
}

// liveRegisterer counts the collectors registered with it.
type liveRegisterer struct {
	prom.Registerer
	n int
}

func (r *liveRegisterer) Register(c prom.Collector) error {
	err := r.Registerer.Register(c)
	if err == nil {
		r.n++
	}
	return err
}

func (r *liveRegisterer) MustRegister(cs ...prom.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *liveRegisterer) Unregister(c prom.Collector) bool {
	ok := r.Registerer.Unregister(c)
	if ok {
		r.n--
	}
	return ok
}

func TestSeconds(t *testing.T) {
	got := seconds([]time.Duration{4 * ms, 0, 1 * ms, 4 * ms, -ms})
	if want := []float64{0.001, 0.004}; !slicesEqual(got, want) {
		t.Errorf("seconds = %v, want %v", got, want)
	}
	if got := seconds(nil); len(got) != len(metrics.DefaultBuckets()) || got[0] != 50e-6 || got[len(got)-1] != 10 {
		t.Errorf("default seconds = %v", got)
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestObserverConcurrent runs Observe from several goroutines while the
// registry is scraped; run it with -race.
func TestObserverConcurrent(t *testing.T) {
	o, reg := newTestObserver(t)
	const goroutines, perG = 8, 1000
	codes := []string{"OK", "Unavailable", "Internal"}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				o.Observe(metrics.Event{Side: metrics.Client, Service: "s.S", Method: "M", Code: codes[(g+i)%len(codes)], Latency: ms})
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	var total float64
	for _, c := range codes {
		total += testutil.ToFloat64(o.calls.WithLabelValues("client", "s.S", "M", "", c))
	}
	if total != goroutines*perG {
		t.Errorf("calls total = %v, want %d", total, goroutines*perG)
	}
}
