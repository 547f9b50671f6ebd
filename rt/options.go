package rt

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/wire"
)

// Option configures a Client or a Server. Options that concern only one side
// are ignored by the other; each option's doc says where it applies.
type Option func(*options)

// Clock tells the time. The runtime takes one so that tests can control
// time-based behaviour (breakers, limiters, warm-up).
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Dialer opens a connection to addr.
type Dialer func(ctx context.Context, addr string) (net.Conn, error)

type options struct {
	logger   *slog.Logger
	clock    Clock
	registry registry.Registry
	app      string

	// server
	advertise      string
	weight         int
	tags           map[string]string
	serverInts     []ServerInterceptor
	maxFrame       int
	compress       int // threshold; 0 = off
	idleTimeout    time.Duration
	heartbeat      time.Duration
	deregisterWait time.Duration
	group, version string
	maxConcurrent  int

	// client
	addrs       []string
	dialer      Dialer
	poolSize    int
	clientInts  []ClientInterceptor
	timeout     time.Duration
	dialTimeout time.Duration
	balancer    string
	retryRatio  float64
	retryFloor  float64
	observer    metrics.Observer
	observerSet bool
	compressors *sync.Pool // of *wire.Compressor, shared by the side's connections
	debug       bool

	spinWait time.Duration // 0: readers never poll
	spinGate *spinGate     // the side's pollers
}

func defaultOptions(opts []Option) options {
	o := options{
		clock:       systemClock{},
		maxFrame:    4 << 20,
		idleTimeout: 5 * time.Minute,
		heartbeat:   15 * time.Second,
		poolSize:    1,
		timeout:     0,
		dialTimeout: 3 * time.Second,
		retryRatio:  0.1,
		retryFloor:  10,
		spinWait:    60 * time.Microsecond, // about twice a loopback round trip on a VM
	}
	for _, f := range opts {
		f(&o)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	if o.dialer == nil {
		d := &net.Dialer{Timeout: o.dialTimeout}
		o.dialer = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	o.compressors = &sync.Pool{New: func() any { return new(wire.Compressor) }}
	o.spinGate = newSpinGate()
	if o.poolSize < 1 {
		o.poolSize = 1
	}
	return o
}

// WithLogger sets the structured logger (both sides). Default: discard.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithClock sets the clock used for breakers, limiters and warm-up (both
// sides). Default: the system clock.
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithRegistry sets the registry: the server registers its services there,
// the client finds providers there. Default: none; a client then needs
// WithAddrs.
func WithRegistry(r registry.Registry) Option { return func(o *options) { o.registry = r } }

// WithAddrs makes the client call a fixed list of providers (a
// registry.Static), for every service.
func WithAddrs(addrs ...string) Option {
	return func(o *options) { o.addrs = append([]string(nil), addrs...) }
}

// WithApp names the application (both sides): shown by `yrpcc ctl ls`, sent
// with calls for per-app rate limits.
func WithApp(name string) Option { return func(o *options) { o.app = name } }

// WithGroupVersion makes the client call, or the server serve, the given
// group and version instead of the schema's.
func WithGroupVersion(group, version string) Option {
	return func(o *options) { o.group, o.version = group, version }
}

// WithAdvertiseAddr sets the address the server registers (default: the
// listener's address).
func WithAdvertiseAddr(addr string) Option { return func(o *options) { o.advertise = addr } }

// WithWeight sets the server's registered weight (default 100).
func WithWeight(w int) Option { return func(o *options) { o.weight = w } }

// WithTags sets the server's registered tags, for tag routing.
func WithTags(tags map[string]string) Option { return func(o *options) { o.tags = tags } }

// WithServerInterceptors adds server interceptors; the first is outermost.
func WithServerInterceptors(is ...ServerInterceptor) Option {
	return func(o *options) { o.serverInts = append(o.serverInts, is...) }
}

// WithClientInterceptors adds client interceptors; the first is outermost.
func WithClientInterceptors(is ...ClientInterceptor) Option {
	return func(o *options) { o.clientInts = append(o.clientInts, is...) }
}

// WithMaxFrameSize sets the largest frame accepted (both sides). Default
// 4 MiB.
func WithMaxFrameSize(n int) Option { return func(o *options) { o.maxFrame = n } }

// WithCompression compresses bodies of at least threshold bytes with lz4
// when the peer supports it (both sides). Default: off.
func WithCompression(threshold int) Option { return func(o *options) { o.compress = threshold } }

// WithIdleTimeout closes server connections with no calls for d. Default 5
// minutes; negative disables.
func WithIdleTimeout(d time.Duration) Option { return func(o *options) { o.idleTimeout = d } }

// WithHeartbeat sets the ping interval on idle connections (both sides); a
// peer silent for three intervals is considered dead. Default 15 s;
// negative disables.
func WithHeartbeat(d time.Duration) Option { return func(o *options) { o.heartbeat = d } }

// WithDeregisterWait sets how long Shutdown waits after deregistering for
// consumers to notice, before it sends GOAWAY. Default 0 without a registry
// change to wait for; set it to your registry's propagation time.
func WithDeregisterWait(d time.Duration) Option { return func(o *options) { o.deregisterWait = d } }

// WithSpinWait sets how long a reader polls its socket for input before
// it parks in the netpoller (both sides). Only connections that carry
// about one call at a time (under 1.5 on average) poll: on the client, a
// caller reading its own response; on the server, the connection's reader
// waiting for the next request. Parking and being woken costs tens of
// microseconds on loopback (more on VMs); polling spends CPU instead. At
// most GOMAXPROCS/2 readers of a Client or Server poll at once, and a
// connection whose peer keeps taking longer than d polls ever more rarely
// (down to one wait in 64). Default 60 µs (at c=1 on a 2-core VM, 100 µs
// gave the same p50 and a worse p99, 30–50 µs a worse p50); 0 or
// negative disables.
func WithSpinWait(d time.Duration) Option { return func(o *options) { o.spinWait = d } }

// WithDialer sets how the client connects (e.g. an in-memory network).
func WithDialer(d Dialer) Option { return func(o *options) { o.dialer = d } }

// WithPoolSize sets the number of connections per provider. Default 1.
func WithPoolSize(n int) Option { return func(o *options) { o.poolSize = n } }

// WithTimeout sets the client's default call timeout for methods whose
// schema sets none. Default: none (the caller's context decides).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithBalancer sets the client's balancer for services whose schema names
// none: "random", "round_robin", "weighted_round_robin", "least_active",
// "p2c" (the default) or "consistent_hash".
func WithBalancer(name string) Option { return func(o *options) { o.balancer = name } }

// WithRetryBudget limits retries to ratio times the recent first attempts
// plus floor per second (defaults 0.1 and 10), so that a dead cluster does
// not multiply the load.
func WithRetryBudget(ratio, floor float64) Option {
	return func(o *options) { o.retryRatio, o.retryFloor = ratio, floor }
}

// WithObserver sends an event for every call and attempt to obs (both
// sides), e.g. the Prometheus observer of contrib/prometheus, instead of
// the default: a metrics.Recorder of the Client or Server, read with its
// Metrics method and published through expvar as "yrpc.client" or
// "yrpc.server" (".2", ".3", ... for later ones in the same process).
// WithObserver(nil) turns metrics off.
func WithObserver(obs metrics.Observer) Option {
	return func(o *options) { o.observer, o.observerSet = obs, true }
}

// defaultMetrics installs the default Recorder when no observer was chosen,
// publishing it through expvar under base or a numbered variant.
func (o *options) defaultMetrics(base string) *metrics.Recorder {
	if o.observerSet {
		return nil
	}
	rec := metrics.NewRecorder(metrics.RecorderOptions{})
	o.observer = rec
	for i := 1; i <= 1000; i++ {
		name := base
		if i > 1 {
			name = base + "." + strconv.Itoa(i)
		}
		if rec.Publish(name) == nil {
			break
		}
	}
	return rec
}

// WithDebug makes the client log, at debug level, why each call's
// candidates were excluded (draining, tags, open breakers, failed attempts).
func WithDebug(on bool) Option { return func(o *options) { o.debug = on } }

// WithMaxConcurrent makes the server refuse calls with ResourceExhausted
// while n calls are in flight (clients retry them on another provider).
// Default 0: no limit.
func WithMaxConcurrent(n int) Option { return func(o *options) { o.maxConcurrent = n } }
