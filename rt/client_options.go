package rt

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt/balance"
)

// clientConfig is a Client's configuration.
type clientConfig struct {
	sharedConfig
	addrs              []string
	dialer             Dialer
	dialTimeout        time.Duration
	poolSize           int
	interceptors       []ClientInterceptor
	streamInterceptors []StreamClientInterceptor
	timeout            time.Duration
	balancer           balance.Builder // nil: the schema's, else p2c
	retryRatio         float64
	retryFloor         float64
	debug              bool
	creds              Credentials
	discoveryWait      time.Duration
	methodLimits       map[string]RateLimitPolicy // by "package.Service/Method"
}

func newClientConfig(opts []ClientOption) clientConfig {
	c := clientConfig{
		sharedConfig:  defaultShared(),
		poolSize:      1,
		dialTimeout:   3 * time.Second,
		retryRatio:    0.1,
		retryFloor:    10,
		discoveryWait: DefaultDiscoveryWait,
	}
	for _, o := range opts {
		o.applyToClient(&c)
	}
	c.finish()
	if c.dialer == nil {
		d := &net.Dialer{Timeout: c.dialTimeout}
		c.dialer = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	c.poolSize = max(c.poolSize, 1)
	return c
}

// clientOption sets what only a Client has.
type clientOption func(*clientConfig)

func (f clientOption) applyToClient(c *clientConfig) { f(c) }

// WithAddrs makes the client call a fixed list of providers (a
// registry.Static, "host:port" each), for every service.
func WithAddrs(addrs ...string) ClientOption {
	return clientOption(func(c *clientConfig) { c.addrs = append([]string(nil), addrs...) })
}

// WithDialer sets how the client connects, e.g. an in-memory network
// (memnet.Network.Dial) or a net.Dialer with other settings. Default: TCP
// with a 3 s connect timeout.
func WithDialer(d Dialer) ClientOption { return clientOption(func(c *clientConfig) { c.dialer = d }) }

// WithPoolSize sets the number of connections per provider. Default 1.
func WithPoolSize(n int) ClientOption { return clientOption(func(c *clientConfig) { c.poolSize = n }) }

// WithClientInterceptors adds client interceptors; the first is outermost.
// Having any costs a call one allocation (the context that carries the
// call through them, where OnAttempt finds it).
func WithClientInterceptors(is ...ClientInterceptor) ClientOption {
	return clientOption(func(c *clientConfig) { c.interceptors = appendSet(c.interceptors, is) })
}

// WithStreamClientInterceptors adds stream interceptors; the first is
// outermost. They wrap the opening of streams, and may wrap the streams.
// Having any costs a stream two allocations (what OnAttempt fills, and
// the context that carries it to them).
func WithStreamClientInterceptors(is ...StreamClientInterceptor) ClientOption {
	return clientOption(func(c *clientConfig) { c.streamInterceptors = appendSet(c.streamInterceptors, is) })
}

// WithTimeout sets the client's default call timeout for methods whose
// schema sets none. Default: none (the caller's context decides).
func WithTimeout(d time.Duration) ClientOption {
	return clientOption(func(c *clientConfig) { c.timeout = d })
}

// WithBalancer sets the balancer of every service the client calls,
// overriding the schema's Balance annotation: one of package balance's
// (balance.NewP2C(balance.Options{}), balance.NewConsistentHash with
// BoundedLoad, ...) or a Builder of your own. Default: the schema's
// balancer, else p2c.
func WithBalancer(b balance.Builder) ClientOption {
	return clientOption(func(c *clientConfig) { c.balancer = b })
}

// WithRetryBudget limits retries, hedges included, to ratio times the
// recent first attempts plus floor per second (defaults 0.1 and 10), so
// that a dead cluster does not multiply the load.
func WithRetryBudget(ratio, floor float64) ClientOption {
	return clientOption(func(c *clientConfig) { c.retryRatio, c.retryFloor = ratio, floor })
}

// WithMethodRateLimit caps the calls the client sends of one method
// ("package.Service/Method") at rate per second with bursts of burst,
// replacing the schema's ClientRateLimit: calls beyond it fail locally
// with ResourceExhausted, before they leave the client, and count against
// no provider's breaker. A rate of 0 lifts the schema's limit. NewClient
// fails on a method not named so, a rate that is negative, NaN or
// infinite, or a negative burst; a name its service turns out not to
// have is logged (Warn) when the client first uses the service.
func WithMethodRateLimit(method string, rate float64, burst int) ClientOption {
	return clientOption(func(c *clientConfig) {
		if c.methodLimits == nil {
			c.methodLimits = map[string]RateLimitPolicy{}
		}
		c.methodLimits[method] = RateLimitPolicy{Rate: rate, Burst: burst}
	})
}

// DefaultDiscoveryWait is the default of WithDiscoveryWait.
const DefaultDiscoveryWait = 3 * time.Second

// WithDiscoveryWait bounds how long calls wait for a service's providers
// to become known: after the client starts watching a service, its calls
// wait (within their context, before their own timeout starts) for the
// registry's first answer that lists a provider, for at most d from the
// start of the watch. So the first calls of a program that starts with its
// providers do not fail with "no provider" while registration and
// discovery catch up, and a service that has none fails fast once d has
// passed. Default 3 s. Calls do not wait for a registry that is closed:
// when it closes while they wait (registry.CloseNotifier tells), or was
// closed before the client watched the service, they fail at once with
// Unavailable, "no providers known for SERVICE: the registry was closed".
func WithDiscoveryWait(d time.Duration) ClientOption {
	return clientOption(func(c *clientConfig) { c.discoveryWait = d })
}

// WithDebug makes the client log, at debug level, why each call's
// candidates were excluded (draining, tags, open breakers, failed attempts).
func WithDebug(on bool) ClientOption { return clientOption(func(c *clientConfig) { c.debug = on }) }

// checkMethodLimits refuses WithMethodRateLimit's settings that could
// only be mistakes: a method not named "package.Service/Method", a rate
// that is not a finite number >= 0, a negative burst.
func checkMethodLimits(limits map[string]RateLimitPolicy) error {
	for _, method := range slices.Sorted(maps.Keys(limits)) {
		rl := limits[method]
		svc, name, ok := strings.Cut(method, "/")
		switch {
		case !ok || svc == "" || name == "" || strings.Contains(name, "/"):
			return fmt.Errorf("rt: new client: WithMethodRateLimit(%q): want a method's full name, \"package.Service/Method\"", method)
		case !(rl.Rate >= 0) || math.IsInf(rl.Rate, 1):
			return fmt.Errorf("rt: new client: WithMethodRateLimit(%q): rate %v: want a finite number of calls per second >= 0 (0 lifts the schema's limit)", method, rl.Rate)
		case rl.Burst < 0:
			return fmt.Errorf("rt: new client: WithMethodRateLimit(%q): burst %d: want >= 0", method, rl.Burst)
		}
	}
	return nil
}
