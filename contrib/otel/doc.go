// Package otel traces yrpc calls and measures their duration with
// OpenTelemetry (go.opentelemetry.io/otel), following the semantic
// conventions for RPC of semconv v1.43.0 (the package
// go.opentelemetry.io/otel/semconv/v1.43.0, schema URL
// https://opentelemetry.io/schemas/1.43.0; the RPC conventions are a
// release candidate there).
//
// NewClientInterceptor and NewServerInterceptor return an
// rt.ClientInterceptor and an rt.ServerInterceptor; install them first with
// rt.WithClientInterceptors and rt.WithServerInterceptors. Options chooses
// the TracerProvider, MeterProvider and propagator; the zero Options uses
// OpenTelemetry's globals.
//
// # Propagation
//
// The client injects the trace context of its span into the request
// metadata (with propagation.TraceContext: the "traceparent" and
// "tracestate" keys of W3C Trace Context), after any metadata the caller
// set; the server extracts it, so its span is the client span's child in
// the same trace. Carrier adapts rt.MD to propagation.TextMapCarrier; its
// Get returns a key's last value, so the client's traceparent wins over
// one a caller copied in. OpenTelemetry's global propagator propagates
// nothing until otel.SetTextMapPropagator is called.
//
// # Spans
//
// One span per call on each side, named after the method,
// "package.Service/Method", of kind Client or Server. The client span
// covers the whole call as its caller waits for it: retries, failover,
// hedging and mocks included. Attributes:
//
//	rpc.system.name           "yrpc"                        both
//	rpc.method                "package.Service/Method"      both
//	rpc.response.status_code  "OK", "NOT_FOUND", ...        both
//	error.type                the status code, on failure   both
//	server.address            Options.ServerAddr's host, or "package.Service"   client
//	server.port               Options.ServerAddr's port, when it has one          client
//	network.peer.address      the caller's IP (rt.PeerAddr)  server
//	network.peer.port         the caller's port              server
//
// Status codes are rt's, which are gRPC's, spelled as gRPC spells them
// (StatusName). As the conventions for gRPC say, every code but OK fails a
// client span, while a server span fails only on UNKNOWN,
// DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE and DATA_LOSS (a
// NOT_FOUND or INVALID_ARGUMENT is the request's fault, not the server's).
// A failed span has status Error with the error's text, and error.type.
//
// The client interceptor runs above balancing and retries, so it does not
// know which provider answered: client spans have no network.peer.*
// attributes (rt's metrics Observer sees every attempt and its provider).
// Without Options.ServerAddr, server.address is the service's name, the
// path under which the registry lists its providers, as the conventions
// allow ("an endpoint and path in the service registry").
//
// Conventions up to v1.37.0 named things differently: rpc.system became
// rpc.system.name, rpc.service is folded into rpc.method (now fully
// qualified), rpc.grpc.status_code (a number) became
// rpc.response.status_code (a name), and rpc.client.duration and
// rpc.server.duration (milliseconds) became the histograms below (seconds).
//
// # Metrics
//
// Two float64 histograms in seconds, with the conventions' bucket bounds
// (5 ms to 10 s; change them with an SDK View):
//
//	rpc.client.call.duration  rpc.system.name, rpc.method, rpc.response.status_code, error.type, server.address, server.port
//	rpc.server.call.duration  rpc.system.name, rpc.method, rpc.response.status_code, error.type
//
// Attribute sets are built once per method and status code, so recording
// allocates nothing of this package's own.
//
// # Cost
//
// Measured with BenchmarkCall and BenchmarkInterceptors on the 2-core
// development machine while other jobs kept its load average near 20, so
// the times are the lowest of six runs and only a rough guide; the
// allocation counts are exact. A greeter SayHello over loopback TCP:
//
//	                                   ns/op    B/op   allocs/op
//	no interceptors                    22 700    344    7
//	both interceptors, no-op providers 20 000    504   11
//	both interceptors, SDK             27 700   4113   32
//
// "SDK" samples and ends every span (no exporter) and aggregates both
// histograms with a ManualReader. The interceptors alone, around a next
// that does nothing: on no-op providers 560 ns and 1 allocation (the no-op
// tracer's context) for the client, 690 ns and 1 for the server; on the
// SDK 4.2 µs, 9 allocations and 1.7 KB for the client, 3.1 µs, 5
// allocations and 1 KB for the server, nearly all of it the SDK's span and
// its context. Of the 4 allocations the no-op case adds to a call, 2 are
// the no-op tracer's contexts and 2 rt's for having any client interceptor
// (the context that carries the call through the chain); the interceptors
// allocate none of their own (the carrier comes from a pool, attribute
// lists and sets are built once per method). A traced call costs about 25
// allocations and, by the interceptor benchmarks, some 7 µs of CPU more
// than a bare one.
//
// # Not yet
//
// Streams are not traced: the package has no rt.StreamClientInterceptor or
// rt.StreamServerInterceptor, so a stream's calls carry no trace context
// and record no span or duration.
//
// This package is a module of its own, so that programs that embed yrpc
// without it do not depend on OpenTelemetry.
package otel
