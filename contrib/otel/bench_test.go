package otel_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	yotel "github.com/yrpc/yrpc/contrib/otel"
	"github.com/yrpc/yrpc/examples/feed/feedrpc"
	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/internal/benchcpu"
	"github.com/yrpc/yrpc/rt"
)

// BenchmarkCall measures a SayHello of a 581-byte name over loopback
// TCP, client and server in this process, with one caller at a time (c=1)
// and 64 sharing the client (c=64): without the interceptors (bare), with
// both on no-op providers (what a program pays before it installs an SDK),
// and with both on the SDK: every span sampled and ended (no exporter),
// both histograms aggregated by a ManualReader, W3C trace context sent and
// extracted. Beside ns/op, B/op and allocs/op it reports cpu-ns/op, the
// process's CPU time per call (client and server). Every reply is checked:
// it names the server span the handler ran in, which only the SDK makes.
func BenchmarkCall(b *testing.B) {
	sdk := yotel.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		Propagators:    propagation.TraceContext{},
	}
	nop := yotel.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: noop.NewMeterProvider(),
		Propagators: propagation.TraceContext{}}
	noSpan := "span=" + trace.SpanID{}.String()
	for _, bc := range []struct {
		name string
		o    *yotel.Options
	}{{"bare", nil}, {"noop", &nop}, {"sdk", &sdk}} {
		b.Run("opt="+bc.name, func(b *testing.B) {
			var p pair
			if bc.o == nil {
				p = startPair(b, nil, nil)
			} else {
				o := *bc.o
				p = startPair(b, yotel.NewServerInterceptor(o),
					func(addr string) rt.ClientInterceptor { o.ServerAddr = addr; return yotel.NewClientInterceptor(o) })
			}
			call := func(req *greeterrpc.HelloRequest) error {
				reply, err := p.cli.SayHello(context.Background(), req)
				if err == nil && (reply.Message == noSpan) != (bc.o != &sdk) {
					err = fmt.Errorf("reply %q", reply.Message)
				}
				return err
			}
			if err := call(&greeterrpc.HelloRequest{Name: "connect"}); err != nil {
				b.Fatal(err)
			}
			for _, c := range []int{1, 64} {
				b.Run("c="+strconv.Itoa(c), func(b *testing.B) {
					benchcpu.Calls(b, c, func() func() error {
						req := &greeterrpc.HelloRequest{Name: strings.Repeat("x", 581)}
						return func() error { return call(req) }
					})
				})
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
