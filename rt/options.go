package rt

import (
	"context"
	"crypto/tls"
	"log/slog"
	"math"
	"net"
	"sync"
	"time"

	"github.com/yrpc/yrpc/internal/warnlog"
	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/wire"
)

// Options come in three kinds, as in connect-go: a ClientOption configures
// a Client (NewClient), a ServerOption a Server (NewServer), and an Option
// both. An option given to the side it does not concern does not compile:
// NewClient(WithWeight(5)) is a type error, not a silently ignored setting.
//
// Where the shapes of this round sit: client-only settings (balancer,
// retries, dialing, and later TLS client config and per-call credentials)
// are ClientOptions in client_options.go; server-only ones (registration,
// limits, and later the authenticator) are ServerOptions in
// server_options.go; settings both sides have (logger, clock, registry,
// frame size, compression, heartbeat, metrics) are Options here.

// Option configures a Client and a Server alike; it can be given to both
// NewClient and NewServer.
type Option interface {
	ClientOption
	ServerOption
}

// ClientOption configures a Client; see NewClient.
type ClientOption interface{ applyToClient(*clientConfig) }

// ServerOption configures a Server; see NewServer.
type ServerOption interface{ applyToServer(*serverConfig) }

// sharedOption sets what both sides have.
type sharedOption func(*sharedConfig)

func (f sharedOption) applyToClient(c *clientConfig) { f(&c.sharedConfig) }
func (f sharedOption) applyToServer(c *serverConfig) { f(&c.sharedConfig) }

// Clock tells the time and waits on it. The runtime takes one so that tests
// can control time-based behaviour: breakers, limiters, warm-up, the retry
// budget and the backoff between retries. Deadlines sent on the wire and set
// on sockets are always wall-clock time.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed on this
	// clock (time.After for the system clock).
	After(d time.Duration) <-chan time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Dialer opens a connection to addr, e.g. (&net.Dialer{}).DialContext
// wrapped as func(ctx, addr) { return d.DialContext(ctx, "tcp", addr) }, or
// memnet.Network.Dial for tests.
type Dialer func(ctx context.Context, addr string) (net.Conn, error)

// sharedConfig is the configuration both sides have.
type sharedConfig struct {
	logger         *slog.Logger
	clock          Clock
	registry       registry.Registry
	app            string
	group, version string
	maxFrame       int
	maxMD          int
	writeTimeout   time.Duration
	compress       int // threshold; 0 = off
	heartbeat      time.Duration
	spinWait       time.Duration // 0: readers never poll
	observer       metrics.Observer
	observerSet    bool
	tls            *tls.Config // nil: plaintext

	// Set by finish, not by options.
	compressors *sync.Pool       // of *wire.Compressor, shared by the side's connections
	spinGate    *sock.SpinGate   // the side's pollers
	buffers     *sock.BufferPool // write buffers of the side's connections
	readBuffers *wire.BufferPool // large read buffers of the side's connections
}

func defaultShared() sharedConfig {
	return sharedConfig{
		clock:        systemClock{},
		maxFrame:     wire.DefaultMaxFrameSize,
		maxMD:        wire.DefaultMaxMetadataSize,
		writeTimeout: DefaultWriteTimeout,
		heartbeat:    15 * time.Second,
		spinWait:     60 * time.Microsecond, // about twice a loopback round trip on a VM
	}
}

// finish fills what options left unset and builds the side's shared parts.
func (s *sharedConfig) finish() {
	if s.logger == nil {
		s.logger = warnlog.Default()
	}
	if s.clock == nil {
		s.clock = systemClock{}
	}
	s.writeTimeout = max(s.writeTimeout, 0)
	if s.maxFrame <= 0 {
		s.maxFrame = wire.DefaultMaxFrameSize
	}
	s.maxFrame = int(min(uint64(max(s.maxFrame, wire.MinFrameLimit)), math.MaxUint32)) // announced as a uint32
	if s.maxMD <= 0 {
		s.maxMD = wire.DefaultMaxMetadataSize
	}
	s.maxMD = int(min(uint64(s.maxMD), math.MaxUint32))
	s.compressors = &sync.Pool{New: func() any { return new(wire.Compressor) }}
	s.spinGate = sock.NewSpinGate()
	s.buffers = new(sock.BufferPool)
	s.readBuffers = new(wire.BufferPool)
}

// features are the optional protocol features this side announces.
func (s *sharedConfig) features() wire.Features {
	f := wire.FeatureStreams
	if s.compress > 0 {
		f |= wire.FeatureLZ4
	}
	return f
}

// settings are the limits this side announces; maxCalls is the server's
// calls per connection (0: none announced).
func (s *sharedConfig) settings(maxCalls uint32) wire.Settings {
	return wire.Settings{MaxFrameSize: uint32(s.maxFrame), MaxMetadataSize: uint32(s.maxMD), MaxConcurrentCalls: maxCalls}
}

// readerOptions configure the reader of a connection whose handshake
// negotiated features.
func (s *sharedConfig) readerOptions(features wire.Features) wire.ReaderOptions {
	return wire.ReaderOptions{MaxFrameSize: s.maxFrame, MaxMetadataSize: s.maxMD, Features: features, Pool: s.readBuffers}
}

// WithLogger sets the structured logger, which gets every level the
// handler enables (WithDebug's traces are at Debug). Default: the warnings
// and errors, to slog.Default() — a dropped provider payload or a failed
// deregistration is never silent.
func WithLogger(l *slog.Logger) Option { return sharedOption(func(s *sharedConfig) { s.logger = l }) }

// WithClock sets the clock of breakers, limiters, warm-up, the retry budget,
// retry backoff and hedge delays. Default: the system clock.
func WithClock(c Clock) Option { return sharedOption(func(s *sharedConfig) { s.clock = c }) }

// WithRegistry sets the registry: the server registers its services there,
// the client finds providers there. Default: none; a client then needs
// WithAddrs.
func WithRegistry(r registry.Registry) Option {
	return sharedOption(func(s *sharedConfig) { s.registry = r })
}

// WithApp names the application: shown by `yrpcc ctl ls`, sent with calls
// for per-app rate limits. The name is a claim the server cannot check: a
// server that authenticates its callers (mutual TLS, an Authenticator)
// keys per-app limits on their principal instead.
func WithApp(name string) Option { return sharedOption(func(s *sharedConfig) { s.app = name }) }

// WithGroupVersion makes the client call, or the server serve, the given
// group and version instead of the schema's.
func WithGroupVersion(group, version string) Option {
	return sharedOption(func(s *sharedConfig) { s.group, s.version = group, version })
}

// WithMaxFrameSize sets the largest frame this side accepts, announced to
// the peer. Default 4 MiB (also for n <= 0); at least 1 KiB
// (wire.MinFrameLimit, the least a peer accepts), at most 4 GiB - 1.
func WithMaxFrameSize(n int) Option { return sharedOption(func(s *sharedConfig) { s.maxFrame = n }) }

// WithMaxMetadataSize sets the largest metadata block this side accepts
// in a frame, announced to the peer; a call whose metadata is larger than
// the peer's limit fails locally with InvalidArgument. Default 16 KiB
// (also for n <= 0).
func WithMaxMetadataSize(n int) Option { return sharedOption(func(s *sharedConfig) { s.maxMD = n }) }

// DefaultWriteTimeout is the default of WithWriteTimeout.
const DefaultWriteTimeout = 20 * time.Second

// WithWriteTimeout closes a connection whose peer takes none of the bytes
// written to it for d (at least half of d): a peer that stops reading
// cannot hold this side's buffers and goroutines. Writes that make
// progress, however slowly, go on. Default 20 s; 0 or negative disables.
func WithWriteTimeout(d time.Duration) Option {
	return sharedOption(func(s *sharedConfig) { s.writeTimeout = d })
}

// WithCompression compresses bodies of at least threshold bytes with lz4
// when the peer supports it. Default: off.
func WithCompression(threshold int) Option {
	return sharedOption(func(s *sharedConfig) { s.compress = threshold })
}

// WithHeartbeat sets the ping interval on idle connections; a peer silent
// for three intervals is considered dead. Default 15 s; negative disables.
func WithHeartbeat(d time.Duration) Option {
	return sharedOption(func(s *sharedConfig) { s.heartbeat = d })
}

// WithSpinWait sets how long a reader polls its socket for input before
// it parks in the netpoller. Only connections that carry about one call at
// a time (under 1.5 on average) poll: on the client, a caller reading its
// own response; on the server, the connection's reader waiting for the
// next request. Parking and being woken costs tens of microseconds on
// loopback (more on VMs); polling spends CPU instead. At most GOMAXPROCS/2
// readers of a Client or Server poll at once, and a connection whose peer
// keeps taking longer than d polls ever more rarely (down to one wait in
// 64). Default 60 µs (at c=1 on a 2-core VM, 100 µs gave the same p50 and
// a worse p99, 30–50 µs a worse p50); 0 or negative disables.
func WithSpinWait(d time.Duration) Option {
	return sharedOption(func(s *sharedConfig) { s.spinWait = d })
}

// WithObserver sends an event for every call and attempt to obs, e.g. the
// Prometheus observer of contrib/prometheus, instead of the default: a
// metrics.Recorder of the Client or Server, read with its Metrics method
// (and published through expvar only if you call Recorder().Publish).
// WithObserver(nil) turns metrics off.
func WithObserver(obs metrics.Observer) Option {
	return sharedOption(func(s *sharedConfig) { s.observer, s.observerSet = obs, true })
}

// defaultRecorder installs the default Recorder when no observer was
// chosen. It publishes nothing: expvar names are process-wide and can
// never be released, so publishing is the caller's explicit choice.
func (s *sharedConfig) defaultRecorder() *metrics.Recorder {
	if s.observerSet {
		return nil
	}
	rec := metrics.NewRecorder(metrics.RecorderOptions{})
	s.observer = rec
	return rec
}

// appendSet appends the interceptors of fs that are not nil to dst: a
// nil interceptor is none.
func appendSet[F ClientInterceptor | StreamClientInterceptor | ServerInterceptor | StreamServerInterceptor](dst, fs []F) []F {
	for _, f := range fs {
		if !isNilInterceptor(f) {
			dst = append(dst, f)
		}
	}
	return dst
}

func isNilInterceptor(f any) bool {
	switch f := f.(type) {
	case ClientInterceptor:
		return f == nil
	case StreamClientInterceptor:
		return f == nil
	case ServerInterceptor:
		return f == nil
	case StreamServerInterceptor:
		return f == nil
	}
	return false
}
