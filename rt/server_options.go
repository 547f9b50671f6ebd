package rt

import (
	"fmt"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
)

// serverConfig is a Server's configuration.
type serverConfig struct {
	sharedConfig
	advertise          string
	weight             int
	tags               map[string]string
	interceptors       []ServerInterceptor
	streamInterceptors []StreamServerInterceptor
	idleTimeout        time.Duration
	deregisterWait     time.Duration
	limits             Limits
	plaintextOK        bool          // with TLS: accept plaintext too
	auth               Authenticator // nil: the certificate's identity
	access             AccessRules
	registryToken      bool
	grpcMode           GRPCMode
	noReflection       bool // WithReflection(false)
	reuseRequests      bool // WithRequestReuse(true)
}

func newServerConfig(opts []ServerOption) serverConfig {
	c := serverConfig{
		sharedConfig: defaultShared(),
		idleTimeout:  5 * time.Minute,
	}
	for _, o := range opts {
		o.applyToServer(&c)
	}
	c.finish()
	c.limits = c.limits.withDefaults()
	c.tls = serverTLS(c.tls, c.grpcMode)
	return c
}

// check reports a setting that can only be a mistake, naming its option
// and value. NewServer keeps the error for Serve to return, as it keeps a
// registration error.
func (c *serverConfig) check() error {
	if err := registry.CheckWeight(c.weight); err != nil {
		return fmt.Errorf("rt: new server: WithWeight(%d): %w", c.weight, err)
	}
	return nil
}

// serverOption sets what only a Server has.
type serverOption func(*serverConfig)

func (f serverOption) applyToServer(c *serverConfig) { f(c) }

// WithAdvertiseAddr sets the address the server registers (default: the
// listener's address, with an unspecified host replaced by the first
// non-loopback IPv4 address).
func WithAdvertiseAddr(addr string) ServerOption {
	return serverOption(func(c *serverConfig) { c.advertise = addr })
}

// WithWeight sets the server's registered weight, its relative share of
// traffic: 1..registry.MaxWeight (10000); 0 means the default, 100. A
// weight out of range is an error that Serve returns at once, before it
// accepts a connection or registers anything (NewServer returns no error,
// nor does RegisterService).
func WithWeight(w int) ServerOption { return serverOption(func(c *serverConfig) { c.weight = w }) }

// WithTags sets the server's registered tags, for tag routing.
func WithTags(tags map[string]string) ServerOption {
	return serverOption(func(c *serverConfig) { c.tags = tags })
}

// WithServerInterceptors adds server interceptors; the first is outermost.
func WithServerInterceptors(is ...ServerInterceptor) ServerOption {
	return serverOption(func(c *serverConfig) { c.interceptors = appendSet(c.interceptors, is) })
}

// WithStreamServerInterceptors adds stream interceptors; the first is
// outermost. They wrap stream handlers as WithServerInterceptors' wrap
// unary ones.
func WithStreamServerInterceptors(is ...StreamServerInterceptor) ServerOption {
	return serverOption(func(c *serverConfig) { c.streamInterceptors = appendSet(c.streamInterceptors, is) })
}

// WithIdleTimeout closes connections with no calls for d. Default 5
// minutes; negative disables.
func WithIdleTimeout(d time.Duration) ServerOption {
	return serverOption(func(c *serverConfig) { c.idleTimeout = d })
}

// WithDeregisterWait sets how long Shutdown waits after deregistering for
// consumers to notice, before it sends GOAWAY. Default 0; set it to your
// registry's propagation time.
func WithDeregisterWait(d time.Duration) ServerOption {
	return serverOption(func(c *serverConfig) { c.deregisterWait = d })
}

// WithLimits sets the limits on what peers can make the server hold; zero
// fields keep their defaults (see Limits).
func WithLimits(l Limits) ServerOption {
	return serverOption(func(c *serverConfig) { c.limits = l })
}

// WithRequestReuse turns the reuse of unary request messages on or off.
// Default off: each request is decoded into a new message, which the
// handler owns.
//
// With reuse on, the server saves an allocation per call: once a unary
// call's handler (and every server interceptor) has returned and its
// response is written, the server resets the request message and decodes
// a later request of the same method into it. The handler and the
// interceptors must then not keep the request pointer past the call: not
// store it, nor hand it to a goroutine that outlives the call, nor return
// a response that refers to the request message itself (a response that
// is the request is fine: it is written before the request is reset).
// What the request holds (strings, byte slices, nested messages, lists,
// maps) is never reused and may be kept. Streams' messages are not
// reused, nor are the requests of calls over gRPC: reuse covers unary
// calls on yrpc's own protocol.
func WithRequestReuse(on bool) ServerOption {
	return serverOption(func(c *serverConfig) { c.reuseRequests = on })
}
