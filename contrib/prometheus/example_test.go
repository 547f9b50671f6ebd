package prometheus_test

import (
	"fmt"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/yrpc/yrpc/contrib/prometheus"
	"github.com/yrpc/yrpc/rt/metrics"
)

func Example() {
	reg := prom.NewRegistry() // or nil for prometheus.DefaultRegisterer
	obs, err := prometheus.NewObserver(reg, prometheus.Options{ConstLabels: prom.Labels{"app": "users"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Install it with rt.WithObserver(obs), or next to the expvar Recorder:
	// rt.WithObserver(metrics.Multi(rec, obs)). Here we report by hand.
	obs.Observe(metrics.Event{Side: metrics.Server, Service: "users.Users", Method: "Get", Code: "OK", Latency: 300 * time.Microsecond})
	obs.Observe(metrics.Event{Side: metrics.Server, Service: "users.Users", Method: "Get", Code: "NotFound", Latency: 200 * time.Microsecond})

	n, _ := testutil.GatherAndCount(reg, "yrpc_calls_total")
	fmt.Println("series of yrpc_calls_total:", n)
	// Output:
	// series of yrpc_calls_total: 2
}
