package otel

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/rpcconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// ScopeName is the instrumentation scope of the tracers and meters this
// package gets from the providers.
const ScopeName = "github.com/yrpc/yrpc/contrib/otel"

// System is the value of the rpc.system.name attribute of client spans,
// and of server spans of calls and streams that came over yrpc's wire.
const System = "yrpc"

// SystemGRPC is the value of the rpc.system.name attribute of server spans
// of calls and streams that came over gRPC or gRPC-Web (rt.ProtocolFrom),
// which the server answers on the same port as yrpc's wire.
const SystemGRPC = "grpc"

// Options configures the interceptors. The zero value uses OpenTelemetry's
// global providers and propagator, as they are when the interceptor is made
// (the globals delegate to whatever is installed later). An Options is
// plain data, read once by the New...Interceptor function given it.
type Options struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the duration histograms; nil means
	// otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagators inject the trace context into the request metadata and
	// extract it on the server; nil means otel.GetTextMapPropagator(),
	// which propagates nothing until otel.SetTextMapPropagator is called
	// (for example with propagation.TraceContext{}).
	Propagators propagation.TextMapPropagator
	// ServerAddr is what client spans and metrics report as server.address
	// (and server.port when it has the form "host:port"): the address given
	// to rt.WithAddrs, a DNS name, a load balancer's address. Empty means
	// the called service's name, "package.Service", which is the path
	// under which the registry lists its providers. Ignored by the server.
	ServerAddr string
	// NoMessageEvents turns off the rpc.message events that stream spans
	// get for every message sent and received (see the package doc).
	// Unary calls have no message events either way.
	NoMessageEvents bool
}

// side says which end of a call an interceptor instruments.
type side uint8

const (
	clientSide side = iota
	serverSide
)

// instruments are what one interceptor records with. Safe for concurrent
// use: methods only grows, and its values are never modified once stored.
type instruments struct {
	side     side
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	duration metric.Float64Histogram
	server   []attribute.KeyValue // client: from Options.ServerAddr; nil means per service
	methods  sync.Map             // *rt.MethodDesc -> *method
	carriers sync.Pool            // *Carrier, empty; saves a call its allocations
	events   bool                 // streams: add rpc.message events
}

// method holds what is fixed for one method, so that a call builds no
// attribute lists: the span's start options, and per status code the span's
// end attributes and the histogram's record options.
type method struct {
	name   string // span name: "package.Service/Method"
	start  []trace.SpanStartOption
	base   []attribute.KeyValue // rpc.system.name, rpc.method, server.*
	end    [numCodes][]attribute.KeyValue
	record [numCodes][]metric.RecordOption
	// grpc is the method as a server records a call that came over gRPC
	// or gRPC-Web (rpc.system.name "grpc"); nil on the client.
	grpc *method
}

func newInstruments(s side, o Options) *instruments {
	tp, mp, prop := o.TracerProvider, o.MeterProvider, o.Propagators
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	in := &instruments{
		side:   s,
		tracer: tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:   prop,
		events: !o.NoMessageEvents,
	}
	meter := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	var err error
	if s == clientSide {
		var h rpcconv.ClientCallDuration
		h, err = rpcconv.NewClientCallDuration(meter)
		in.duration = h.Inst()
		in.server = serverAttrs(o.ServerAddr)
	} else {
		var h rpcconv.ServerCallDuration
		h, err = rpcconv.NewServerCallDuration(meter)
		in.duration = h.Inst()
	}
	if err != nil { // the instrument is a no-op then; spans still work
		otel.Handle(err)
	}
	return in
}

// serverAttrs returns server.address and server.port for addr, or nil for
// an empty addr.
func serverAttrs(addr string) []attribute.KeyValue {
	if addr == "" {
		return nil
	}
	return addrAttrs(addr, semconv.ServerAddress, semconv.ServerPort)
}

// addrAttrs returns the attributes host and port make of addr's host and
// port; an addr that is not "host:port" with a numeric port is all host.
func addrAttrs(addr string, host func(string) attribute.KeyValue, port func(int) attribute.KeyValue) []attribute.KeyValue {
	h, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return []attribute.KeyValue{host(addr)}
	}
	p, err := strconv.Atoi(ps)
	if err != nil {
		return []attribute.KeyValue{host(addr)}
	}
	return []attribute.KeyValue{host(h), port(p)}
}

// method returns the cached attributes of info's method.
func (in *instruments) method(info *rt.CallInfo) *method {
	if m, ok := in.methods.Load(info.Method); ok {
		return m.(*method)
	}
	m := in.newMethod(info, System)
	if in.side == serverSide {
		m.grpc = in.newMethod(info, SystemGRPC)
	}
	v, _ := in.methods.LoadOrStore(info.Method, m)
	return v.(*method)
}

// serverMethod returns the cached attributes of info's method for the
// server call or stream of ctx: with rpc.system.name "grpc" if it came
// over gRPC or gRPC-Web.
func (in *instruments) serverMethod(ctx context.Context, info *rt.CallInfo) *method {
	m := in.method(info)
	if p, _ := rt.ProtocolFrom(ctx); p == rt.ProtocolGRPC || p == rt.ProtocolGRPCWeb {
		return m.grpc
	}
	return m
}

// newMethod builds the attributes of info's method with rpc.system.name
// system.
func (in *instruments) newMethod(info *rt.CallInfo, system string) *method {
	m := &method{name: info.Method.FullName}
	m.base = []attribute.KeyValue{semconv.RPCSystemNameKey.String(system), semconv.RPCMethod(m.name)}
	kind := trace.SpanKindServer
	if in.side == clientSide {
		kind = trace.SpanKindClient
		if in.server != nil {
			m.base = append(m.base, in.server...)
		} else {
			m.base = append(m.base, semconv.ServerAddress(info.Service.Name))
		}
	}
	m.start = []trace.SpanStartOption{trace.WithSpanKind(kind), trace.WithAttributes(m.base...)}
	for c := range rt.Code(numCodes) {
		m.end[c] = endAttrs(in.side, c)
		m.record[c] = recordOpts(m.base, m.end[c])
	}
	return m
}

// endAttrs returns the attributes a call's outcome adds: its status code,
// and error.type when the code is a failure on side s.
func endAttrs(s side, c rt.Code) []attribute.KeyValue {
	name := StatusName(c)
	if failed(s, c) {
		return []attribute.KeyValue{semconv.RPCResponseStatusCode(name), semconv.ErrorTypeKey.String(name)}
	}
	return []attribute.KeyValue{semconv.RPCResponseStatusCode(name)}
}

// finish ends span and records the call's duration.
func (in *instruments) finish(ctx context.Context, span trace.Span, m *method, err error, start time.Time) {
	c := rt.CodeOf(err)
	end, rec := in.outcome(m, c)
	if span.IsRecording() {
		span.SetAttributes(end...)
		if failed(in.side, c) {
			span.SetStatus(codes.Error, err.Error())
		}
	}
	in.duration.Record(ctx, time.Since(start).Seconds(), rec...)
}

// outcome returns the end attributes and record options of code c.
func (in *instruments) outcome(m *method, c rt.Code) ([]attribute.KeyValue, []metric.RecordOption) {
	if int(c) < numCodes {
		return m.end[c], m.record[c]
	}
	end := endAttrs(in.side, c)
	return end, recordOpts(m.base, end)
}

// recordOpts returns the histogram's record options for the attributes
// base and end.
func recordOpts(base, end []attribute.KeyValue) []metric.RecordOption {
	set := attribute.NewSet(append(append([]attribute.KeyValue(nil), base...), end...)...)
	return []metric.RecordOption{metric.WithAttributeSet(set)}
}

// carrier returns an empty Carrier from the pool.
func (in *instruments) carrier() *Carrier {
	if c, ok := in.carriers.Get().(*Carrier); ok {
		return c
	}
	return new(Carrier)
}

// putCarrier empties c and puts it back in the pool.
func (in *instruments) putCarrier(c *Carrier) {
	clear(*c)
	*c = (*c)[:0]
	in.carriers.Put(c)
}

// startClient starts m's client span under ctx and returns the context to
// call with: the span's, with its trace context appended to the outgoing
// metadata.
func (in *instruments) startClient(ctx context.Context, m *method) (context.Context, trace.Span) {
	ctx, span := in.tracer.Start(ctx, m.name, m.start...)
	md := in.carrier()
	in.prop.Inject(ctx, md)
	if len(*md) > 0 {
		ctx = rt.WithMetadata(ctx, *md...) // copies md
	}
	in.putCarrier(md)
	return ctx, span
}

// startServer extracts the caller's trace context from the incoming
// metadata of ctx and starts m's server span as its child.
func (in *instruments) startServer(ctx context.Context, m *method) (context.Context, trace.Span) {
	c := in.carrier()
	*c = Carrier(rt.IncomingMetadata(ctx))
	ctx = in.prop.Extract(ctx, c)
	*c = nil // the metadata is the call's, not the pool's
	in.putCarrier(c)
	ctx, span := in.tracer.Start(ctx, m.name, m.start...)
	if span.IsRecording() {
		span.SetAttributes(peerAttrs(rt.PeerAddr(ctx))...)
	}
	return ctx, span
}

// NewClientInterceptor returns an interceptor that makes a client span for
// every call (the whole call, with its retries: the span covers what the
// caller waits for), injects its trace context into the request metadata
// and records rpc.client.call.duration. Install it with
// rt.WithClientInterceptors; put it first so that the span covers the other
// interceptors too. The interceptor is safe for concurrent use.
func NewClientInterceptor(o Options) rt.ClientInterceptor {
	in := newInstruments(clientSide, o)
	return func(ctx context.Context, info *rt.CallInfo, req, resp rt.Message, next rt.InvokeFunc) error {
		m := in.method(info)
		start := time.Now()
		ctx, span := in.startClient(ctx, m)
		var t *tries
		if span.IsRecording() {
			t = &tries{span: span}
			rt.OnAttempt(ctx, t.add)
		}
		err := next(ctx, info, req, resp)
		if t != nil {
			t.end()
		}
		in.finish(ctx, span, m, err, start)
		span.End()
		return err
	}
}

// AttemptEvent is the name of the event a client span gets for each try of
// its call on a provider (see the package doc).
const AttemptEvent = "yrpc.attempt"

// AttemptNumber is the attribute of an AttemptEvent that numbers the
// call's tries from 1.
const AttemptNumber = attribute.Key("yrpc.attempt.number")

// AttemptDuration is the attribute of an AttemptEvent that says how long
// the try took, in seconds.
const AttemptDuration = attribute.Key("yrpc.attempt.duration")

// tries keeps a client call's tries as rt.OnAttempt reports them
// (concurrently, for a hedged or forked call) until the call ends; then
// end records them on the call's span.
type tries struct {
	span  trace.Span
	mu    sync.Mutex
	all   []rt.Attempt
	first [1]rt.Attempt // all's room for the usual single try
}

func (t *tries) add(a rt.Attempt) {
	t.mu.Lock()
	if t.all == nil {
		t.all = t.first[:0]
	}
	t.all = append(t.all, a)
	t.mu.Unlock()
}

// end sets network.peer.* of the try whose outcome the call returned (the
// first that succeeded, else the last to end) on the span, and adds an
// AttemptEvent per try when there were several or one went over gRPC.
func (t *tries) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.all) == 0 {
		return
	}
	ans := &t.all[len(t.all)-1]
	events := len(t.all) > 1
	for i := range t.all {
		a := &t.all[i]
		if a.Err == nil && ans.Err != nil {
			ans = a
		}
		events = events || a.Protocol != rt.ProtocolYRPC
	}
	t.span.SetAttributes(providerAttrs(ans.Addr)...)
	if !events {
		return
	}
	for _, a := range t.all {
		attrs := make([]attribute.KeyValue, 0, 7)
		attrs = append(attrs, AttemptNumber.Int(a.N), semconv.RPCSystemNameKey.String(a.Protocol))
		attrs = append(attrs, providerAttrs(a.Addr)...)
		attrs = append(attrs, endAttrs(clientSide, rt.CodeOf(a.Err))...)
		attrs = append(attrs, AttemptDuration.Float64(a.Duration.Seconds()))
		t.span.AddEvent(AttemptEvent, trace.WithTimestamp(a.Start.Add(a.Duration)), trace.WithAttributes(attrs...))
	}
}

// providerAttrs returns network.peer.address and network.peer.port of a
// provider's address as rt.Attempt gives it ("host:port", or with a
// grpc:// or grpcs:// scheme).
func providerAttrs(addr string) []attribute.KeyValue {
	for _, s := range []string{registry.SchemeGRPC, registry.SchemeGRPCS} {
		if a, ok := strings.CutPrefix(addr, s); ok {
			addr = a
			break
		}
	}
	return addrAttrs(addr, semconv.NetworkPeerAddress, semconv.NetworkPeerPort)
}

// NewServerInterceptor returns an interceptor that extracts the caller's
// trace context from the request metadata, runs the handler under a server
// span that is its child, and records rpc.server.call.duration. A handler
// that panics (rt answers INTERNAL) ends its span with INTERNAL. Install it
// with rt.WithServerInterceptors; put it first so that the span covers the
// other interceptors too. The interceptor is safe for concurrent use.
func NewServerInterceptor(o Options) rt.ServerInterceptor {
	in := newInstruments(serverSide, o)
	return func(ctx context.Context, req rt.Message, info *rt.CallInfo, next rt.Handler) (resp rt.Message, err error) {
		m := in.serverMethod(ctx, info)
		start := time.Now()
		ctx, span := in.startServer(ctx, m)
		returned := false
		defer func() {
			if !returned {
				in.panicked(ctx, span, m, start)
			}
		}()
		resp, err = next(ctx, req)
		returned = true
		in.finish(ctx, span, m, err, start)
		span.End()
		return resp, err
	}
}

// panicked ends the server span of a handler that panicked (or ended its
// goroutine) with the Internal error rt answers it with; rt recovers the
// panic below the interceptors, so it unwinds through them.
func (in *instruments) panicked(ctx context.Context, span trace.Span, m *method, start time.Time) {
	in.finish(ctx, span, m, rt.Errorf(rt.Internal, "%s: handler panicked", m.name), start)
	span.End()
}

// peerAttrs returns network.peer.address and network.peer.port of a, or
// nil when a is nil.
func peerAttrs(a net.Addr) []attribute.KeyValue {
	switch a := a.(type) {
	case nil:
		return nil
	case *net.TCPAddr:
		return []attribute.KeyValue{semconv.NetworkPeerAddress(a.IP.String()), semconv.NetworkPeerPort(a.Port)}
	}
	return addrAttrs(a.String(), semconv.NetworkPeerAddress, semconv.NetworkPeerPort)
}
