package prometheus

import (
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/yrpc/yrpc/rt/metrics"
)

func BenchmarkObserve(b *testing.B) {
	o, err := NewObserver(prom.NewRegistry(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	e := metrics.Event{Side: metrics.Client, Service: "users.v1.Users", Method: "GetUser", Code: "OK", Latency: 730 * time.Microsecond}
	o.Observe(e)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		o.Observe(e)
	}
}

func BenchmarkObserveParallel(b *testing.B) {
	o, err := NewObserver(prom.NewRegistry(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	instances := []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000", "10.0.0.4:7000"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		e := metrics.Event{Side: metrics.Client, Service: "users.v1.Users", Method: "GetUser", Attempt: 1, Code: "OK", Latency: time.Millisecond}
		i := 0
		for pb.Next() {
			e.Instance = instances[i%len(instances)]
			o.Observe(e)
			i++
		}
	})
}

// BenchmarkWithLabelValues is what Observe would cost without its cache.
func BenchmarkWithLabelValues(b *testing.B) {
	o, err := NewObserver(prom.NewRegistry(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		o.calls.WithLabelValues("client", "users.v1.Users", "GetUser", "", "OK").Inc()
		o.callDur.WithLabelValues("client", "users.v1.Users", "GetUser", "").Observe(0.00073)
	}
}
