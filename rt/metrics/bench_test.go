package metrics

import (
	"strconv"
	"testing"
	"time"
)

// benchEvent is a whole client call on an existing series.
var benchEvent = Event{Side: Client, Service: "users.v1.Users", Method: "GetUser", Code: "OK", Latency: 730 * time.Microsecond}

func BenchmarkRecorderObserve(b *testing.B) {
	r := NewRecorder(RecorderOptions{})
	// A realistic index: 40 methods, 10 instances each.
	for m := range 40 {
		for i := range 10 {
			r.Observe(Event{Side: Client, Service: "users.v1.Users", Method: "M" + strconv.Itoa(m),
				Instance: "10.0.0." + strconv.Itoa(i) + ":7000", Attempt: 1, Code: "OK"})
		}
	}
	e := benchEvent
	for range 100 { // promote the series into the lock-free map
		r.Observe(e)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r.Observe(e)
	}
}

func BenchmarkRecorderObserveParallel(b *testing.B) {
	r := NewRecorder(RecorderOptions{})
	instances := []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000", "10.0.0.4:7000"}
	for range 100 {
		for _, inst := range instances {
			r.Observe(Event{Side: Client, Service: "users.v1.Users", Method: "GetUser", Instance: inst, Attempt: 1, Code: "OK"})
		}
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		e := Event{Side: Client, Service: "users.v1.Users", Method: "GetUser", Attempt: 1, Code: "OK", Latency: time.Millisecond}
		i := 0
		for pb.Next() {
			e.Instance = instances[i%len(instances)]
			r.Observe(e)
			i++
		}
	})
}

func BenchmarkRecorderSnapshot(b *testing.B) {
	r := NewRecorder(RecorderOptions{})
	for m := range 20 {
		for i := range 5 {
			r.Observe(Event{Side: Client, Service: "users.v1.Users", Method: "M" + strconv.Itoa(m),
				Instance: "10.0.0." + strconv.Itoa(i) + ":7000", Attempt: 1, Code: "OK"})
		}
	}
	b.ReportAllocs()
	for range b.N {
		_ = r.Snapshot()
	}
}

func BenchmarkMulti(b *testing.B) {
	obs := Multi(NewRecorder(RecorderOptions{}), Discard{})
	obs.Observe(benchEvent)
	b.ReportAllocs()
	for range b.N {
		obs.Observe(benchEvent)
	}
}
