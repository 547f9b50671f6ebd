// Package otel traces yrpc calls and streams and measures their duration with
// OpenTelemetry (go.opentelemetry.io/otel), following the semantic
// conventions for RPC of semconv v1.43.0 (the package
// go.opentelemetry.io/otel/semconv/v1.43.0, schema URL
// https://opentelemetry.io/schemas/1.43.0; the RPC conventions are a
// release candidate there).
//
// NewClientInterceptor and NewServerInterceptor return an
// rt.ClientInterceptor and an rt.ServerInterceptor for unary calls; install
// them first with rt.WithClientInterceptors and rt.WithServerInterceptors.
// NewStreamClientInterceptor and NewStreamServerInterceptor do the same for
// streams, installed first with rt.WithStreamClientInterceptors and
// rt.WithStreamServerInterceptors. Options chooses the TracerProvider,
// MeterProvider and propagator; the zero Options uses OpenTelemetry's
// globals.
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
// One span per call or stream on each side, named after the method,
// "package.Service/Method", of kind Client or Server. The client span
// covers the whole call as its caller waits for it: retries, failover,
// hedging and mocks included. Attributes:
//
//	rpc.system.name           "yrpc", or "grpc" (below)     both
//	rpc.method                "package.Service/Method"      both
//	rpc.response.status_code  "OK", "NOT_FOUND", ...        both
//	error.type                the status code, on failure   both
//	server.address            Options.ServerAddr's host, or "package.Service"   client
//	server.port               Options.ServerAddr's port, when it has one          client
//	network.peer.address      the caller's IP (rt.PeerAddr)  server
//	network.peer.port         the caller's port              server
//	network.peer.address      the provider's host            client
//	network.peer.port         the provider's port            client
//
// rpc.system.name (System, SystemGRPC) is "yrpc" on client spans, the
// system that made the call, and on server spans of calls that came over
// yrpc's wire; a server span says "grpc" for a call or stream that came
// over the gRPC endpoint, gRPC or gRPC-Web (rt.ProtocolFrom tells them
// apart), which the rt.Server answers on the same port. A client call's
// or stream's tries over gRPC (grpc:// providers) say "grpc" on their
// events (below).
//
// Status codes are rt's, which are gRPC's, spelled as gRPC spells them
// (StatusName). As the conventions for gRPC say, every code but OK fails a
// client span, while a server span fails only on UNKNOWN,
// DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE and DATA_LOSS (a
// NOT_FOUND or INVALID_ARGUMENT is the request's fault, not the server's).
// A failed span has status Error with the error's text, and error.type.
//
// The client interceptors run above balancing and retries; they learn
// each try of a call or stream from rt.OnAttempt. network.peer.* on a
// client span name the provider whose outcome the call returned: the
// first try that succeeded, or else the last to end (a host name as the
// registry or rt.WithAddrs lists it; no attribute for a call answered by
// a mock).
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
// # Tries
//
// A client span gets an event named AttemptEvent ("yrpc.attempt") per
// try of its call or stream when it made more than one (a failover's
// retries, a hedge, a fork's forks, the losers included; a stream tried
// again elsewhere) or a try went over gRPC; a call of one try over yrpc's wire gets none, since its span
// says it all. Each event, at the time the try ended (by the client's
// clock, rt.WithClock), has:
//
//	yrpc.attempt.number       1, 2, ... (AttemptNumber)
//	rpc.system.name           "yrpc" or "grpc": what the try went over
//	network.peer.address      the provider's host
//	network.peer.port         the provider's port
//	rpc.response.status_code  how the try ended, "OK", "UNAVAILABLE", ...
//	error.type                the status code, on failure
//	yrpc.attempt.duration     the try's duration, seconds (AttemptDuration)
//
// The conventions have the client span cover the whole call, its retries
// included, and name no attempt event; these are yrpc's, kept as events
// so that the trace keeps one client span per call, the parent of every
// server span its tries made.
//
// # Streams
//
// A stream gets one span on each side, with the attributes and status rules
// above; the server span is the child of the client span whose trace
// context the stream's request metadata carries, and the handler's
// ss.Context() carries the server span. The client span starts when the
// stream is opened and ends, with the stream's status, at the first of:
// RecvMsg returning io.EOF (OK) or an error; SendMsg failing with a code
// other than FAILED_PRECONDITION (the stream is over; that code means a
// send after CloseSend or a stream the server already ended, whose status
// RecvMsg returns); the stream's context ending while no RecvMsg waits
// (CANCELLED or DEADLINE_EXCEEDED: the caller canceled or gave up); the
// stream failing to open. A stream its caller neither reads to io.EOF nor
// cancels keeps its span open, as it keeps the stream itself. The server
// span ends when the handler returns, with its error's status, or panics,
// with INTERNAL (what rt answers a panic with; so do unary server spans).
//
// Every message sent or received on a stream adds an rpc.message event to
// the span of its side, with rpc.message.type "SENT" or "RECEIVED",
// rpc.message.id counting each type from 1, and
// rpc.message.uncompressed_size (the encoded size in bytes); the server
// span's RECEIVED events include the request of a server stream.
// Conventions v1.40.0 deprecated this event (span events are on their way
// out) and the semconv packages from v1.40.0 on no longer declare its
// keys; the package records it as v1.39.0 defines it, because backends
// still show it and it is the only place a stream's message count and
// timing appear. Options.NoMessageEvents turns it off. Unary calls have no
// message events.
//
// # Metrics
//
// Two float64 histograms in seconds, with the conventions' bucket bounds
// (5 ms to 10 s; change them with an SDK View):
//
//	rpc.client.call.duration  rpc.system.name, rpc.method, rpc.response.status_code, error.type, server.address, server.port
//	rpc.server.call.duration  rpc.system.name, rpc.method, rpc.response.status_code, error.type
//
// rpc.system.name splits the server's histogram by protocol, as it does
// server spans. A stream records one value on each side when its span ends: its whole
// life, open to end, as its span's duration (the conventions' message
// counts per call, rpc.*.requests_per_rpc and responses_per_rpc, are
// deprecated and not recorded).
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
// than a bare one. Keeping a sampled call's tries (rt.OnAttempt) and
// setting network.peer.* adds 3 allocations and about 290 bytes
// (BenchmarkCall/opt=sdk, three runs each way on the same machine: 30 to
// 33 allocations, 4,755 to 5,045 bytes per call; its CPU moved within the
// noise, 16.2 to 16.8 µs per call at c = 64), and a call of several tries
// pays for an event per try; unsampled calls keep none.
//
// Streams, by BenchmarkStreamInterceptor (the server interceptor around a
// handler that sends 10 messages; lowest of three runs at a load average
// near 22): on no-op providers 0.7 µs and 2 allocations per stream (the
// stream wrapper and the no-op tracer's context), nothing per message; on
// the SDK 2.9 µs and 6 allocations per stream with NoMessageEvents, and
// each message's event adds some 2.3 µs, 4.5 allocations and 670 bytes.
//
// This package is a module of its own, so that programs that embed yrpc
// without it do not depend on OpenTelemetry.
package otel
