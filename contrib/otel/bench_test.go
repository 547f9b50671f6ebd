package otel_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	yotel "github.com/yrpc/yrpc/contrib/otel"
	"github.com/yrpc/yrpc/examples/feed/feedrpc"
	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
)

// BenchmarkCall measures one SayHello over loopback TCP without the
// interceptors, with both interceptors on no-op providers (what a program
// pays before it installs an SDK), and with both on the SDK: every span
// sampled and ended (no exporter), both histograms aggregated by a
// ManualReader, W3C trace context sent and extracted.
func BenchmarkCall(b *testing.B) {
	sdk := yotel.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		Propagators:    propagation.TraceContext{},
	}
	nop := yotel.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: noop.NewMeterProvider(),
		Propagators: propagation.TraceContext{}}
	for _, bc := range []struct {
		name string
		o    *yotel.Options
	}{{"bare", nil}, {"noop", &nop}, {"sdk", &sdk}} {
		b.Run(bc.name, func(b *testing.B) {
			var p pair
			if bc.o == nil {
				p = startPair(b, nil, nil)
			} else {
				o := *bc.o
				p = startPair(b, yotel.NewServerInterceptor(o),
					func(addr string) rt.ClientInterceptor { o.ServerAddr = addr; return yotel.NewClientInterceptor(o) })
			}
			ctx := context.Background()
			req := &greeterrpc.HelloRequest{Name: "bench"}
			if _, err := p.cli.SayHello(ctx, req); err != nil { // connect
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.cli.SayHello(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInterceptors measures the client and the server interceptor
// alone, around a next that does nothing: the CPU and allocations they add
// to a call, without the network's noise.
func BenchmarkInterceptors(b *testing.B) {
	info := &rt.CallInfo{Service: &greeterrpc.GreeterServiceDesc, Method: &greeterrpc.GreeterServiceDesc.Methods[0]}
	for _, bc := range []struct {
		name string
		o    yotel.Options
	}{
		{"noop", yotel.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: noop.NewMeterProvider(),
			Propagators: propagation.TraceContext{}}},
		{"sdk", yotel.Options{
			TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())),
			MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
			Propagators:    propagation.TraceContext{}, ServerAddr: "127.0.0.1:7000"}},
	} {
		ci, si := yotel.NewClientInterceptor(bc.o), yotel.NewServerInterceptor(bc.o)
		invoke := func(context.Context, *rt.CallInfo, rt.Message, rt.Message) error { return nil }
		handle := func(context.Context, rt.Message) (rt.Message, error) { return nil, nil }
		ctx := context.Background()
		b.Run(bc.name+"/client", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = ci(ctx, info, nil, nil, invoke)
			}
		})
		b.Run(bc.name+"/server", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = si(ctx, nil, info, handle)
			}
		})
	}
}

// BenchmarkStreamInterceptor measures the server stream interceptor around
// a handler that sends 10 messages on a stream that takes them at once:
// a stream's span and duration, and its message events (with and without
// NoMessageEvents).
func BenchmarkStreamInterceptor(b *testing.B) {
	info := &rt.CallInfo{Service: &feedrpc.FeedServiceDesc, Method: &feedrpc.FeedServiceDesc.Methods[1]}
	sdk := yotel.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		Propagators:    propagation.TraceContext{}}
	quiet := sdk
	quiet.NoMessageEvents = true
	nop := yotel.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: noop.NewMeterProvider(),
		Propagators: propagation.TraceContext{}}
	ev := &feedrpc.Event{Topic: "t", Seq: 1, Text: "bench"}
	handle := func(ss rt.ServerStreamer) error {
		for range 10 {
			if err := ss.SendMsg(ev); err != nil {
				return err
			}
		}
		return nil
	}
	for _, bc := range []struct {
		name string
		o    yotel.Options
	}{{"noop", nop}, {"sdk", sdk}, {"sdk-no-events", quiet}} {
		si := yotel.NewStreamServerInterceptor(bc.o)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = si(sinkStream{}, info, handle)
			}
		})
	}
}
