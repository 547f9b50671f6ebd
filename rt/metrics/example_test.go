package metrics_test

import (
	"fmt"
	"os"
	"time"

	"github.com/yrpc/yrpc/rt/metrics"
)

func Example() {
	rec := metrics.NewRecorder(metrics.RecorderOptions{})
	// rt.WithObserver(rec) makes the runtime report its events; here we
	// report a few by hand: a call whose first attempt failed over to a
	// second instance, and a call answered by a fallback mock.
	ev := metrics.Event{Side: metrics.Client, Service: "users.Users", Method: "Get"}
	for _, e := range []metrics.Event{
		{Instance: "10.0.0.1:7000", Attempt: 1, Code: "Unavailable", Latency: 2 * time.Millisecond},
		{Instance: "10.0.0.2:7000", Attempt: 2, Code: "OK", Latency: 300 * time.Microsecond},
		{Code: "OK", Latency: 2400 * time.Microsecond},
		{Code: "OK", Latency: 80 * time.Microsecond, Mocked: "fallback"},
	} {
		e.Side, e.Service, e.Method = ev.Side, ev.Service, ev.Method
		rec.Observe(e)
	}

	snap := rec.Snapshot()
	calls, _ := snap.Call(metrics.Client, "users.Users", "Get")
	fmt.Println("calls:", calls.Count, "errors:", calls.Errors, "mocked:", calls.Mocked)
	for _, a := range snap.Attempts("users.Users", "Get") {
		fmt.Println("attempts to", a.Instance, a.Codes)
	}
	fmt.Println()
	_ = snap.WriteTable(os.Stdout)
	// Output:
	// calls: 2 errors: 0 mocked: map[fallback:1]
	// attempts to 10.0.0.1:7000 map[Unavailable:1]
	// attempts to 10.0.0.2:7000 map[OK:1]
	//
	// SIDE    SERVICE/METHOD   KIND     INSTANCE       COUNT  ERRORS  RETRIES  MOCKED      P50     P99     CODES
	// client  users.Users/Get  call     -              2      0       0        fallback=1  100µs   2.47ms  -
	// client  users.Users/Get  attempt  10.0.0.1:7000  1      1       0        -           1.75ms  2.49ms  Unavailable=1
	// client  users.Users/Get  attempt  10.0.0.2:7000  1      0       1        -           375µs   498µs   -
}

func ExampleRecorder_Publish() {
	rec := metrics.NewRecorder(metrics.RecorderOptions{})
	// The snapshot is served as JSON at /debug/vars under "yrpc" once the
	// program serves http.DefaultServeMux (importing expvar mounts it).
	_ = rec.Publish("yrpc") // check the error in real code
	// expvar names are process-wide: a second Publish under the same name
	// fails instead of panicking.
	fmt.Println(metrics.NewRecorder(metrics.RecorderOptions{}).Publish("yrpc"))
	// Output:
	// metrics: expvar "yrpc" is already published
}

func ExampleMulti() {
	rec := metrics.NewRecorder(metrics.RecorderOptions{})
	logged := metrics.ObserverFunc(func(e metrics.Event) {
		if e.Code != "OK" {
			fmt.Printf("%s %s/%s: %s\n", e.Side, e.Service, e.Method, e.Code)
		}
	})
	obs := metrics.Multi(rec, logged) // e.g. rt.WithObserver(obs)
	obs.Observe(metrics.Event{Side: metrics.Server, Service: "users.Users", Method: "Get", Code: "NotFound"})
	s, _ := rec.Snapshot().Call(metrics.Server, "users.Users", "Get")
	fmt.Println(s.Codes)
	// Output:
	// server users.Users/Get: NotFound
	// map[NotFound:1]
}

func ExampleHistogram_Quantile() {
	h := metrics.Histogram{
		Bounds: []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond},
		Counts: []uint64{50, 90, 100, 100}, // cumulative; the last is +Inf
		Count:  100,
	}
	fmt.Println(h.Quantile(0.5), h.Quantile(0.75), h.Quantile(0.95))
	// Output:
	// 1ms 1.625ms 3ms
}
