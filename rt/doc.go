// Package rt is yrpc's runtime: the client and server that generated code
// calls, over the frame format of package rt/wire.
//
// # Server
//
//	srv := rt.NewServer(rt.WithRegistry(reg))
//	userrpc.RegisterUsers(srv, impl)         // generated
//	go srv.Serve(context.Background(), lis) // not a signal's context: its end closes at once
//	<-srv.Ready()                            // registered
//	...                                      // on SIGTERM:
//	srv.Shutdown(ctxWithTimeout)             // deregister, GOAWAY, drain
//	reg.Close()                              // last
//
// A server reads frames on one goroutine per connection and decodes each
// request there (one copy of its bytes; strings alias it; up to 4.5 KiB, of
// messages that implement OwnedUnmarshaler, the copy is allocated with
// the call's record and handler context). Handlers run on
// that reading goroutine, one after the other, with no hand-off: the
// requests that one read syscall brought are answered with one write when
// they are drained. A stall timer hands the read loop to a pooled worker
// when calls hold it for more than 200µs, so that a slow handler does not
// hold up the connection; a method whose calls stall often (a handler that
// blocks on I/O, say) runs on pooled workers for the next second, and then
// is tried on the reading goroutine again. Streams run on pooled workers.
// The path of a call: TLS or plaintext, told by the first byte (WithTLS)
// -> preface and settings -> closing? -> registry token (WithRegistryToken)
// -> group and version -> per-client rate limit (schema RateLimit or
// governance config, keyed by client IP, or per app by the client
// certificate's identity, else the app name the client claims) -> calls
// in flight per connection and overall (Limits) -> method ID to handler
// (the generated switch) -> decode -> authentication and authorization
// (Authenticator, AccessRules; with an Authenticator a per-app limit is
// checked here, keyed on its principal) -> Validate -> interceptors ->
// handler -> encode -> batched write. Handler contexts carry the caller's
// deadline, metadata (IncomingMetadata), the peer (PeerFrom: address, TLS
// state, certificate identity, principal), the protocol the call came
// over (ProtocolFrom: yrpc's wire, gRPC or gRPC-Web) and cancellation (a
// cancel frame or a closed connection); they cost one allocation per
// call, shared with the request's bytes.
//
// Every resource a client can make the server hold has a limit with a
// default (Limits, WithMaxFrameSize, WithMaxMetadataSize,
// WithWriteTimeout); the limits a client must know are announced in the
// handshake, so a well-behaved client refuses an oversized call locally.
//
// Shutdown is graceful, in this order: deregister from the registry; wait
// WithDeregisterWait for consumers to notice; send GOAWAY, naming the last
// call admitted, and stop accepting; answer calls that still arrive with
// Unavailable ("server closing", marked as refused so that clients retry
// elsewhere); wait for in-flight calls and open streams until the context
// ends; half-close each connection and let its client read to the end
// (at most 1 s); close, resetting streams still open with Unavailable.
// Close stops at once.
//
// # gRPC
//
// A Server answers gRPC too, from the same registered services and
// through the same call path (limits, auth, Validate, interceptors,
// metrics): by default on the same port, telling HTTP/2's preface and
// HTTP/1.1 (gRPC-Web) from yrpc's by the first bytes, or with TLS by ALPN
// ("h2", "http/1.1" vs "yrpc"). WithGRPC chooses the same port, a port of
// its own (Server.ServeGRPC) or none; GRPCMode documents the mapping of
// deadlines, metadata, status codes, error details, compression and the
// HTTP/2 limits. HTTP/2 connections (h2c and TLS) are served by yrpc's
// own lean HTTP/2 server (package rt/internal/h2 reads and writes the
// frames, package internal/hpack codes the headers; the root module needs
// nothing beyond the standard library for it): one reading
// goroutine per connection, quick unary calls served inline as on yrpc's
// own connections, answers batched through the same socket writer.
// net/http serves only gRPC-Web over HTTP/1.1. Package rt/internal/grpcwire
// holds gRPC's message framing, status and metadata rules. Every Server also serves the standard
// grpc.health.v1.Health service on both protocols (HealthServiceDesc),
// tied to Shutdown, governance draining and SetServing, and gRPC server
// reflection (grpc.reflection.v1 and v1alpha, from the descriptors the
// generated code embeds) so that grpcurl and other tools can list and call
// its services; WithReflection(false) turns it off.
//
// A Client calls plain gRPC servers too: a provider whose address is
// grpc://host:port (HTTP/2 without TLS, h2c) or grpcs://host:port (TLS,
// ALPN h2, with WithTLS's config or else the system's roots), in
// WithAddrs or a registry, or whose registry payload lists "grpc" and not
// "yrpc" among its Protocols (over TLS when the client has WithTLS), is
// called over gRPC; a yrpc Server lists both and is called over yrpc. The
// generated stubs do not change, and the whole call path above the
// connection applies: balancers, breakers, retries and the budget (a call
// is not sent when its connection could not be made, its request headers
// never left, the server refused it, or it was above a GOAWAY's last
// stream or refused with REFUSED_STREAM), mocks, interceptors,
// credentials and metrics. Unary calls and the three stream kinds
// (NewStream) go to "/package.Service/Method"; the deadline travels as
// grpc-timeout; metadata as headers (keys in lowercase, "-bin" values in
// base64; keys of other characters than letters, digits, '-', '_' and
// '.', and other values than printable ASCII, fail locally with
// InvalidArgument; the transport's own keys are left out); the answer's
// headers and trailers are its metadata (ResponseMetadata, a stream's
// Trailer); grpc-status, grpc-message and grpc-status-details-bin become
// the *Error's Code, Message and Details. Answers may be gzipped;
// WithCompression gzips requests from its threshold (unary calls from the
// first, streams once a gzipped call went through) until the server
// refuses gzip: a call it refused for its encoding (Unimplemented) is sent
// again uncompressed, as are later ones. WithMaxFrameSize bounds
// each answer's message (ResourceExhausted), a method's MaxMessageSize a stream's messages both
// ways, WithMaxMetadataSize plus 1 KiB the answer's headers and trailers;
// WithHeartbeat sends HTTP/2 pings, WithWriteTimeout applies. What
// differs from yrpc's connections: one HTTP/2 connection per provider
// (WithPoolSize does not apply; calls beyond the server's
// MaxConcurrentStreams wait for a slot); a oneway method waits for the
// server's empty answer; a lost connection counts against the breaker
// once per call it failed; a stream's end is known when RecvMsg reaches it
// or its context ends (an error answered before any message excepted).
// Not supported: gRPC-Web, codecs other than protobuf, encodings other
// than gzip, gRPC's service config (its retry and load-balancing
// policies), name resolvers (dns:///), and ALTS. Package
// rt/internal/grpcclient holds the client connection.
//
// # Client
//
//	cli, err := rt.NewClient(rt.WithRegistry(reg)) // or rt.WithAddrs("host:port")
//	users := userrpc.NewUsersClient(cli)            // generated
//	u, err := users.Get(ctx, &userrpc.GetUser{ID: 1})
//
// One Client serves every service and is safe for concurrent use. The path
// of a call: interceptors -> forced mock? -> the providers of (service,
// group, version) from the registry watch -> routers (draining providers
// and, with WithTag, tag routing) -> balancer (rt/balance; WithBalancer's, else
// the schema's, default p2c) -> the provider's circuit breaker (package
// breaker; open breakers take the provider out of the pick; it trips on the
// schema's error rate, or after 5 failures in a row without an answer from
// the provider, a lost connection counting once) -> its multiplexed
// connection -> the response, the deadline or cancellation.
// On failure the error is classified: calls that provably did not run
// (refused, no connection, open breaker) may go to another provider for
// any method; other failures are retried only for idempotent methods in
// failover mode, up to the schema's Retry tries, with backoff and jitter,
// never past the deadline and within a retry budget (10 % of recent calls
// plus 10/s by default). Then an on-failure mock, the failsafe mode, or the
// error. Hedged requests (schema Hedge, idempotent methods; each hedge
// spends the retry budget) and forking (FaultForking) race attempts on
// several providers. A client interceptor learns each attempt of its call
// or stream (provider, protocol, outcome, timing) from OnAttempt; the
// client access logs and contrib/otel use it to name the provider that
// answered.
//
// A connection carries many calls at once, matched by request id; a
// goroutine that writes while nobody else is writing does the write
// syscall itself, and frames queued meanwhile are written together by the
// connection's writer, so load batches many frames into one syscall while
// a lone call pays no hand-off. Reading works the same way: a caller alone
// on the connection reads its own response, as a plain blocking
// request-response would; under load the connection's reading goroutine
// hands each response's bytes to its caller, who decodes them on its own
// goroutine (generated messages implement OwnedUnmarshaler; others are
// decoded by the reader). When the call makes its response (InvokeNew,
// what generated XxxClient methods call), the reader copies those bytes
// into a buffer that the call's pooled record keeps, and the caller
// makes the message with room for them (one allocation per call, off the
// reader's goroutine) and decodes there; the reader also watches idle
// connections for GOAWAY
// and closing. A call that finds nobody reading its connection first
// peeks at the socket (a non-blocking MSG_PEEK), so that it is not sent
// into a connection the server closed. No goroutine is started per call.
//
// A lone call's reader (the leading caller on the client, the
// connection's reader on the server) polls its socket for up to 60 µs
// before it parks, since being woken from the netpoller costs more than a
// quick peer takes to answer; only connections that carry about one call
// at a time do so, at most GOMAXPROCS/2 at once per Client or Server, ever
// more rarely when the polls miss (WithSpinWait).
//
// A caller that writes itself does so under its deadline: a server that
// stops reading fills the socket buffers, and the write that then blocks
// fails at the deadline, with DeadlineExceeded for that caller and the
// connection closed (its other calls fail as on any lost connection).
// Cancel frames, pings and pongs go through the writer goroutine, so a
// caller giving up never blocks.
//
// # Options
//
// NewClient takes ClientOptions, NewServer ServerOptions; an Option fits
// both. Giving a side an option it does not use does not compile.
//
// # Code layout
//
// The top level holds the contract with generated code (desc.go, codes.go,
// metadata.go, callctx.go), the client (client.go, service.go for what it
// knows of each service, call.go and race.go for one call's path,
// policy.go for the policy's pure decisions, mock.go, budget.go) and the
// server (server.go, serverconn.go; grpc_*.go for gRPC and health);
// transport.go chooses a provider's connection: rt/internal/conn's (yrpc)
// or rt/internal/grpcclient's (gRPC). rt/internal/sock is the socket
// machinery both sides share.
//
// # Streams
//
// Server, client and bidi streams (StreamKind) travel on the same
// multiplexed connections as calls, flow controlled per stream and per
// connection: a sender waits for credit, so a stream whose reader stalls
// holds up only itself, and neither side buffers more than a window.
// Generated code hands out the typed streams of stream.go; NewStream opens
// one on a provider picked as a call's first attempt is, and is retried
// elsewhere while it provably reached none; a server stream whose method
// has a Retry policy is also tried again elsewhere, with its one request,
// when it fails before its first response. The context given to
// NewStream governs the stream (cancel it or read to io.EOF); the method's
// timeout bounds it; cancellation and deadlines reach the other side.
// A stream's SendMsg and RecvMsg are safe for concurrent use (see
// Stream); a stream ends when its handler returns. Rate limits count
// streams opened; the interceptors StreamRecvLimit (server) and
// StreamSendLimit (client) pace each stream's messages. The access logs
// of streams are interceptors too: StreamServerAccessLog and
// StreamClientAccessLog write one line per stream when it ends, as
// ServerAccessLog and ClientAccessLog do per call, with its messages
// sent and received.
//
// # Security
//
// WithTLS turns on TLS (mutual TLS with client certificates; rotation
// through the config's callbacks). A server then refuses plaintext with a
// reason, and registers that it requires TLS, so that clients without TLS
// fail locally naming it. The caller's identity reaches handlers through
// PeerFrom; an Authenticator (BearerTokens, or your own) turns a call's
// metadata and TLS state into a principal, and access rules (the schema's
// Allow lists, AccessRules at run time) say which principals may call
// what. Clients send Credentials (BearerToken) only over TLS unless told
// otherwise. WithRegistryToken refuses calls that did not come through
// the registry. Servers refuse calls for a group or version they do not
// serve.
//
// # Errors
//
// Errors carry a Code (gRPC's set). CodeOf reads it from any error;
// errors.Is(err, rt.ErrUnavailable) matches by code; IsRemote tells errors
// that came over the wire from local ones. A handler's *Error reaches the
// caller with its code and message; other handler errors arrive as Unknown.
//
// # Tests
//
// Package rt/memnet is an in-memory network (WithDialer) for tests, and
// package rt/fault injects delays, aborts and dropped connections.
package rt
