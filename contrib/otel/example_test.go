package otel_test

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	yotel "github.com/yrpc/yrpc/contrib/otel"
	"github.com/yrpc/yrpc/rt"
)

// A server and a client traced with an SDK tracer provider (give it an
// exporter in real code) and W3C trace context, calls and streams. The
// interceptors go first, so that their spans cover the other interceptors
// too.
func Example() {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	o := yotel.Options{TracerProvider: tp, Propagators: propagation.TraceContext{}}

	srv := rt.NewServer(rt.WithServerInterceptors(yotel.NewServerInterceptor(o)),
		rt.WithStreamServerInterceptors(yotel.NewStreamServerInterceptor(o)))
	_ = srv // register services, then srv.Serve(ctx, lis)

	o.ServerAddr = "users.internal:7000" // what client spans call server.address
	cli, err := rt.NewClient(rt.WithAddrs(o.ServerAddr), rt.WithClientInterceptors(yotel.NewClientInterceptor(o)),
		rt.WithStreamClientInterceptors(yotel.NewStreamClientInterceptor(o)))
	if err != nil {
		panic(err)
	}
	defer cli.Close()
}
