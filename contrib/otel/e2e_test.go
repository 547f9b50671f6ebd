package otel_test

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	yotel "github.com/yrpc/yrpc/contrib/otel"
	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
)

// greeter answers "span=<id of the span in the handler's context>", and
// fails on the names "notfound" (NotFound: the caller's fault) and "boom"
// (a plain error: Unknown, the server's fault), and panics on "panic".
type greeter struct{}

func (greeter) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	switch req.Name {
	case "notfound":
		return nil, rt.Errorf(rt.NotFound, "no greeting for %q", req.Name)
	case "boom":
		return nil, errors.New("boom")
	case "panic":
		panic("greeter panicked")
	}
	return &greeterrpc.HelloReply{Message: "span=" + trace.SpanContextFromContext(ctx).SpanID().String()}, nil
}

// pair is a greeter server and a client of it on loopback TCP.
type pair struct {
	cli  *greeterrpc.GreeterClient
	addr string
}

// startPair serves greeter with the server interceptors and connects a
// client with the client interceptors (nil: none).
func startPair(t testing.TB, si rt.ServerInterceptor, ci func(addr string) rt.ClientInterceptor) pair {
	t.Helper()
	var sopts []rt.ServerOption
	if si != nil {
		sopts = append(sopts, rt.WithServerInterceptors(si))
	}
	cli, addr := serve(t, sopts, func(srv *rt.Server) { greeterrpc.RegisterGreeter(srv, greeter{}) },
		func(addr string) []rt.ClientOption {
			if ci == nil {
				return nil
			}
			return []rt.ClientOption{rt.WithClientInterceptors(ci(addr))}
		})
	return pair{cli: greeterrpc.NewGreeterClient(cli), addr: addr}
}

// serve serves on loopback TCP, with sopts, what register registers, and
// returns a client of it made with rt.WithAddrs and copts(addr), and the
// address. Both are closed when the test ends.
func serve(t testing.TB, sopts []rt.ServerOption, register func(*rt.Server), copts func(addr string) []rt.ClientOption) (*rt.Client, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := rt.NewServer(sopts...)
	register(srv)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), lis) }()
	addr := lis.Addr().String()
	cli, err := rt.NewClient(append([]rt.ClientOption{rt.WithAddrs(addr)}, copts(addr)...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; err != nil && !errors.Is(err, rt.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return cli, addr
}

// telemetry is an SDK tracer and meter provider that keep what they get.
type telemetry struct {
	tp     *sdktrace.TracerProvider
	spans  *tracetest.SpanRecorder
	mp     *sdkmetric.MeterProvider
	reader *sdkmetric.ManualReader
}

func newTelemetry() telemetry {
	spans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	return telemetry{
		tp:     sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
		spans:  spans,
		mp:     sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		reader: reader,
	}
}

func (tel telemetry) options(serverAddr string) yotel.Options {
	return yotel.Options{TracerProvider: tel.tp, MeterProvider: tel.mp,
		Propagators: propagation.TraceContext{}, ServerAddr: serverAddr}
}

// spansOf returns the ended spans of kind k, oldest first.
func (tel telemetry) spansOf(k trace.SpanKind) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.SpanKind() == k {
			out = append(out, s)
		}
	}
	return out
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value)
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// checkAttrs reports every attribute of want that s lacks or has with
// another value, and every key of absent that s has.
func checkAttrs(t *testing.T, what string, s sdktrace.ReadOnlySpan, want map[attribute.Key]any, absent ...attribute.Key) {
	t.Helper()
	got := attrs(s)
	for k, w := range want {
		v, ok := got[k]
		if !ok || v.AsInterface() != w {
			t.Errorf("%s span: %s = %v (present %v), want %v", what, k, v.AsInterface(), ok, w)
		}
	}
	for _, k := range absent {
		if v, ok := got[k]; ok {
			t.Errorf("%s span: %s = %v, want it absent", what, k, v.AsInterface())
		}
	}
}

func TestE2E(t *testing.T) {
	tel := newTelemetry()
	p := startPair(t, yotel.NewServerInterceptor(tel.options("")),
		func(addr string) rt.ClientInterceptor { return yotel.NewClientInterceptor(tel.options(addr)) })
	host, portStr, _ := net.SplitHostPort(p.addr)
	port, _ := strconv.Atoi(portStr)

	tests := []struct {
		name         string
		code         string // rpc.response.status_code on both sides
		clientFailed bool   // client span status Error, error.type set
		serverFailed bool
	}{
		{"ok", "OK", false, false},
		{"notfound", "NOT_FOUND", true, false}, // the request's fault: not a server error
		{"boom", "UNKNOWN", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel.spans.Reset()
			ctx, parent := tel.tp.Tracer("test").Start(context.Background(), "parent")
			reply, err := p.cli.SayHello(ctx, &greeterrpc.HelloRequest{Name: tt.name})
			parent.End()
			if got := yotel.StatusName(rt.CodeOf(err)); got != tt.code {
				t.Fatalf("SayHello(%q) = %v, want code %s", tt.name, err, tt.code)
			}

			cs, ss := tel.spansOf(trace.SpanKindClient), tel.spansOf(trace.SpanKindServer)
			if len(cs) != 1 || len(ss) != 1 {
				t.Fatalf("got %d client and %d server spans, want 1 and 1", len(cs), len(ss))
			}
			c, s := cs[0], ss[0]
			checkLinks(t, parent, c, s, "greeter.Greeter/SayHello")
			if err == nil && reply.Message != "span="+s.SpanContext().SpanID().String() {
				t.Errorf("handler saw %s, want its server span %s", reply.Message, s.SpanContext().SpanID())
			}

			common := map[attribute.Key]any{"rpc.system.name": "yrpc", "rpc.method": "greeter.Greeter/SayHello", "rpc.response.status_code": tt.code}
			cw := map[attribute.Key]any{"server.address": host, "server.port": int64(port),
				"network.peer.address": host, "network.peer.port": int64(port)}
			sw := map[attribute.Key]any{"network.peer.address": "127.0.0.1"}
			for k, v := range common {
				cw[k], sw[k] = v, v
			}
			checkSide(t, "client", c, cw, tt.clientFailed, tt.code)
			if evs := c.Events(); len(evs) != 0 {
				t.Errorf("client span of one try over yrpc has events %+v, want none", evs)
			}
			checkSide(t, "server", s, sw, tt.serverFailed, tt.code, "server.address")
			if v := attrs(s)["network.peer.port"].AsInt64(); v <= 0 || v == int64(port) {
				t.Errorf("server span: network.peer.port = %d, want the client's port", v)
			}
		})
	}

	// One histogram point per status code on each side, in seconds.
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rpc.client.call.duration", "rpc.server.call.duration"} {
		m, ok := findMetric(rm, name)
		if !ok {
			t.Errorf("no metric %s", name)
			continue
		}
		if m.Unit != "s" {
			t.Errorf("%s unit = %q, want s", name, m.Unit)
		}
		h, ok := m.Data.(metricdata.Histogram[float64])
		if !ok {
			t.Errorf("%s is a %T, want a float64 histogram", name, m.Data)
			continue
		}
		counts := map[string]uint64{}
		for _, dp := range h.DataPoints {
			v, _ := dp.Attributes.Value("rpc.response.status_code")
			counts[v.AsString()] += dp.Count
			if v, _ := dp.Attributes.Value("rpc.method"); v.AsString() != "greeter.Greeter/SayHello" {
				t.Errorf("%s point has rpc.method %q", name, v.AsString())
			}
		}
		for _, code := range []string{"OK", "NOT_FOUND", "UNKNOWN"} {
			if counts[code] != 1 {
				t.Errorf("%s counts by code = %v, want 1 of each of OK, NOT_FOUND, UNKNOWN", name, counts)
				break
			}
		}
	}
}

// attempt is what an AttemptEvent should say of a try.
type attempt struct {
	n            int
	system, host string
	port         int
	code         string // rpc.response.status_code; error.type too unless "OK"
}

// checkAttempts checks that client span s has an AttemptEvent per try of
// want, in order, within the span.
func checkAttempts(t *testing.T, s sdktrace.ReadOnlySpan, want ...attempt) {
	t.Helper()
	evs := s.Events()
	if len(evs) != len(want) {
		t.Fatalf("client span events %+v, want %d", evs, len(want))
	}
	for i, ev := range evs {
		w := want[i]
		got := make(map[attribute.Key]attribute.Value)
		for _, kv := range ev.Attributes {
			got[kv.Key] = kv.Value
		}
		wa := map[attribute.Key]any{yotel.AttemptNumber: int64(w.n), "rpc.system.name": w.system,
			"network.peer.address": w.host, "network.peer.port": int64(w.port), "rpc.response.status_code": w.code}
		if w.code != "OK" {
			wa["error.type"] = w.code
		} else if v, ok := got["error.type"]; ok {
			t.Errorf("event %d: error.type = %v, want it absent", i, v.AsInterface())
		}
		if ev.Name != yotel.AttemptEvent {
			t.Errorf("event %d is %q, want %q", i, ev.Name, yotel.AttemptEvent)
		}
		for k, v := range wa {
			if g, ok := got[k]; !ok || g.AsInterface() != v {
				t.Errorf("event %d: %s = %v (present %v), want %v", i, k, g.AsInterface(), ok, v)
			}
		}
		if d := got[yotel.AttemptDuration].AsFloat64(); d <= 0 || d > s.EndTime().Sub(s.StartTime()).Seconds() {
			t.Errorf("event %d: %s = %v s, want above 0 and within the span's %v", i, yotel.AttemptDuration, d, s.EndTime().Sub(s.StartTime()))
		}
		if ev.Time.Before(s.StartTime()) || ev.Time.After(s.EndTime()) {
			t.Errorf("event %d at %v, want within the span (%v to %v)", i, ev.Time, s.StartTime(), s.EndTime())
		}
	}
}

// checkSide checks one span's attributes, status and error.type.
func checkSide(t *testing.T, side string, s sdktrace.ReadOnlySpan, want map[attribute.Key]any, failed bool, code string, absent ...attribute.Key) {
	t.Helper()
	if failed {
		want["error.type"] = code
		checkAttrs(t, side, s, want, absent...)
		if s.Status().Code != codes.Error || s.Status().Description == "" {
			t.Errorf("%s span status = %+v, want Error with a description", side, s.Status())
		}
		return
	}
	checkAttrs(t, side, s, want, append(absent, "error.type")...)
	if s.Status().Code != codes.Unset {
		t.Errorf("%s span status = %+v, want Unset", side, s.Status())
	}
}

func findMetric(rm metricdata.ResourceMetrics, name string) (metricdata.Metrics, bool) {
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != yotel.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// TestGlobals checks that the zero Options use the global providers and
// propagator. It sets the globals, so it must not run in parallel.
func TestGlobals(t *testing.T) {
	tel := newTelemetry()
	otel.SetTracerProvider(tel.tp)
	otel.SetMeterProvider(tel.mp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	p := startPair(t, yotel.NewServerInterceptor(yotel.Options{}),
		func(string) rt.ClientInterceptor { return yotel.NewClientInterceptor(yotel.Options{}) })
	if _, err := p.cli.SayHello(context.Background(), &greeterrpc.HelloRequest{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	cs, ss := tel.spansOf(trace.SpanKindClient), tel.spansOf(trace.SpanKindServer)
	if len(cs) != 1 || len(ss) != 1 {
		t.Fatalf("got %d client and %d server spans, want 1 and 1", len(cs), len(ss))
	}
	if ss[0].Parent().SpanID() != cs[0].SpanContext().SpanID() {
		t.Errorf("server span's parent %s is not the client span %s", ss[0].Parent().SpanID(), cs[0].SpanContext().SpanID())
	}
	// With no ServerAddr, server.address names the service.
	checkAttrs(t, "client", cs[0], map[attribute.Key]any{"server.address": "greeter.Greeter"}, "server.port")
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if _, ok := findMetric(rm, "rpc.server.call.duration"); !ok {
		t.Error("the global meter provider got no rpc.server.call.duration")
	}
}

func TestStatusName(t *testing.T) {
	// Every code rt defines has gRPC's name: rt's own in upper snake case,
	// except that gRPC spells Canceled with two Ls.
	for c := rt.OK; c <= rt.Unauthenticated; c++ {
		want := strings.ToUpper(regexp.MustCompile(`([a-z])([A-Z])`).ReplaceAllString(c.String(), "${1}_$2"))
		if c == rt.Canceled {
			want = "CANCELLED"
		}
		if got := yotel.StatusName(c); got != want {
			t.Errorf("StatusName(%v) = %q, want %q", c, got, want)
		}
	}
	if got := yotel.StatusName(42); got != "42" {
		t.Errorf("StatusName(42) = %q, want the number", got)
	}
}
