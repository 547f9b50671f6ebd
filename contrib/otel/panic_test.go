package otel_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	yotel "github.com/yrpc/yrpc/contrib/otel"
	"github.com/yrpc/yrpc/examples/feed/feedrpc"
	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
)

// TestHandlerPanics: rt turns a handler's panic into INTERNAL below the
// interceptors, so the panic unwinds through the server interceptor; the
// server span must still end, failed with INTERNAL as the client sees it,
// and the duration be recorded, not the span be left open for ever.
func TestHandlerPanics(t *testing.T) {
	const method = "greeter.Greeter/SayHello"
	tel := newTelemetry()
	p := startPair(t, yotel.NewServerInterceptor(tel.options("")),
		func(addr string) rt.ClientInterceptor { return yotel.NewClientInterceptor(tel.options(addr)) })
	ctx, parent := tel.tp.Tracer("test").Start(context.Background(), "parent")
	_, err := p.cli.SayHello(ctx, &greeterrpc.HelloRequest{Name: "panic"})
	parent.End()
	if rt.CodeOf(err) != rt.Internal {
		t.Fatalf("SayHello(panic) = %v, want Internal", err)
	}
	cs, ss := tel.spansOf(trace.SpanKindClient), tel.spansOf(trace.SpanKindServer)
	if len(cs) != 1 || len(ss) != 1 {
		t.Fatalf("got %d client and %d ended server spans, want 1 and 1", len(cs), len(ss))
	}
	checkLinks(t, parent, cs[0], ss[0], method)
	want := map[attribute.Key]any{"rpc.system.name": "yrpc", "rpc.method": method, "rpc.response.status_code": "INTERNAL"}
	checkSide(t, "server", ss[0], want, true, "INTERNAL", "server.address")
	checkServerDuration(t, tel, "INTERNAL")
}

// TestStreamHandlerPanics is TestHandlerPanics for a stream.
func TestStreamHandlerPanics(t *testing.T) {
	tel := newTelemetry()
	cli := startFeed(t, tel)
	s, err := cli.Subscribe(context.Background(), &feedrpc.Subscription{Topic: "panic"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recvEvents(s); rt.CodeOf(err) != rt.Internal {
		t.Fatalf("Subscribe(panic) = %v, want Internal", err)
	}
	ss := tel.spansOf(trace.SpanKindServer)
	if len(ss) != 1 {
		t.Fatalf("got %d ended server spans, want 1", len(ss))
	}
	want := map[attribute.Key]any{"rpc.system.name": "yrpc", "rpc.method": "feed.Feed/Subscribe", "rpc.response.status_code": "INTERNAL"}
	checkSide(t, "server", ss[0], want, true, "INTERNAL", "server.address")
	if got := messages(t, "server", ss[0]); count(got, "SENT") != 1 {
		t.Errorf("server span messages %v, want 1 SENT", got)
	}
	checkServerDuration(t, tel, "INTERNAL")
}

// checkServerDuration checks that rpc.server.call.duration has one value,
// with status code code.
func checkServerDuration(t *testing.T, tel telemetry, code string) {
	t.Helper()
	counts := serverDurationCounts(t, tel, "rpc.response.status_code")
	if len(counts) != 1 || counts[code] != 1 {
		t.Errorf("rpc.server.call.duration counts by code = %v, want %s=1", counts, code)
	}
}

// serverDurationCounts collects rpc.server.call.duration and counts its
// values by the given attributes' values, joined with spaces.
func serverDurationCounts(t *testing.T, tel telemetry, keys ...attribute.Key) map[string]uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	m, ok := findMetric(rm, "rpc.server.call.duration")
	if !ok {
		t.Fatal("no rpc.server.call.duration")
	}
	counts := map[string]uint64{}
	for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		vals := make([]string, len(keys))
		for i, k := range keys {
			v, _ := dp.Attributes.Value(k)
			vals[i] = v.AsString()
		}
		counts[strings.Join(vals, " ")] += dp.Count
	}
	return counts
}
