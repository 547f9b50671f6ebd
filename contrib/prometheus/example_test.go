package prometheus_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/yrpc/yrpc/contrib/prometheus"
	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/memnet"
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

type greeter struct {
	greeterrpc.UnimplementedGreeterServer
}

func (greeter) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	return &greeterrpc.HelloReply{Message: "Hello, " + req.Name}, nil
}

// A Collector of a client's and a server's gauges, served at /metrics.
func ExampleNewCollector() {
	network := memnet.New()
	lis, _ := network.Listen("greeter:1")
	srv := rt.NewServer()
	greeterrpc.RegisterGreeter(srv, greeter{})
	go srv.Serve(context.Background(), lis)
	defer srv.Close()
	cli, err := rt.NewClient(rt.WithAddrs("greeter:1"), rt.WithDialer(network.Dial))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cli.Close()

	// Registry: a *zkreg.Registry adds yrpc_registry_connected.
	c, err := prometheus.NewCollector(prometheus.CollectorOptions{Client: cli, Server: srv})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := prom.NewRegistry()
	reg.MustRegister(c)
	handler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{}) // http.Handle("/metrics", handler)

	if _, err := greeterrpc.NewGreeterClient(cli).SayHello(context.Background(), &greeterrpc.HelloRequest{Name: "Ada"}); err != nil {
		fmt.Println(err)
		return
	}
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(w.Body.String()) {
		if !strings.HasPrefix(line, "#") {
			fmt.Print(line)
		}
	}
	// Output:
	// yrpc_client_connections 1
	// yrpc_client_provider_breaker_state{instance="greeter:1",service="greeter.Greeter"} 0
	// yrpc_client_provider_in_flight{instance="greeter:1",service="greeter.Greeter"} 0
	// yrpc_client_providers{service="greeter.Greeter",state="draining"} 0
	// yrpc_client_providers{service="greeter.Greeter",state="not_serving"} 0
	// yrpc_client_providers{service="greeter.Greeter",state="routable"} 1
	// yrpc_server_connections 1
	// yrpc_server_in_flight 0
	// yrpc_server_serving 1
}
