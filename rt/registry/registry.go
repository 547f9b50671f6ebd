package registry

import (
	"context"
	"errors"
	"time"
)

// Key names a deployment of a service: providers and consumers of the same
// Key see each other; other groups and versions are invisible.
type Key struct {
	Service string // full service name, "package.Service"
	Group   string // "" is the default group
	Version string // "" is the default version
}

// String returns "service[group]@version" with empty parts left out.
func (k Key) String() string {
	s := k.Service
	if k.Group != "" {
		s += "[" + k.Group + "]"
	}
	if k.Version != "" {
		s += "@" + k.Version
	}
	return s
}

// Role says whether an Endpoint serves or calls a service.
type Role string

// Roles.
const (
	Provider Role = "provider"
	Consumer Role = "consumer"
)

// Endpoint is one process's presence under a Key: a provider instance that
// serves calls, or a consumer that makes them (listed by `yrpcc ctl ls`).
type Endpoint struct {
	Key  Key  `json:"-"`
	Role Role `json:"-"`
	// Addr is "host:port" for a provider; for a consumer, its host and a
	// unique suffix. Addr identifies the endpoint within Key and Role.
	Addr string `json:"addr"`
	// Weight is the provider's relative share of traffic; 0 means 100.
	Weight int `json:"weight,omitempty"`
	// App names the deployed application (for per-app limits and ctl ls).
	App string `json:"app,omitempty"`
	// Tags are free-form labels used by tag routing ("zone": "hk-1").
	Tags map[string]string `json:"tags,omitempty"`
	// StartTime is when the process started serving (for warm-up).
	StartTime time.Time `json:"start_time"`

	// PayloadVersion is the major version of the payload format that wrote
	// the endpoint (see PayloadVersion, the constant); 0 means a payload
	// of before versioning, read as version 1. Registries stamp it when
	// they store an endpoint. Readers skip endpoints of a newer major
	// version and ignore fields they do not know, so fields added within a
	// major version must be optional.
	PayloadVersion int `json:"payload_version,omitempty"`
	// TLS says the provider accepts only TLS connections: a client
	// without TLS must not send it calls in plaintext.
	TLS bool `json:"tls,omitempty"`
	// Token is the provider's registry token (Dubbo style): a random value
	// the provider publishes here and requires on every call, so that
	// calls that did not come through the registry are refused. It is as
	// secret as the registry is readable (see package zkreg's threat
	// model); LogValue redacts it.
	Token string `json:"token,omitempty"`
	// Methods names the methods of the service the provider serves
	// ("Get"), so that tools (yrpcc ctl) can check method names.
	Methods []string `json:"methods,omitempty"`
	// Protocols names the wire protocols the provider answers on its
	// address ("yrpc", "grpc"); empty means "yrpc" only.
	Protocols []string `json:"protocols,omitempty"`
	// NotServing says the provider reports itself not serving
	// (grpc.health.v1's NOT_SERVING, e.g. while a dependency is down):
	// consumers route no new calls to it until it serves again.
	NotServing bool `json:"not_serving,omitempty"`
}

// Snapshot is the state of one Key: its live providers and its governance
// config. Watchers receive whole snapshots, never diffs.
type Snapshot struct {
	Key       Key
	Providers []Endpoint // sorted by Addr
	Config    Config
}

// Config is the governance config of one Key, written by operators
// (`yrpcc ctl`) and watched by providers and consumers. The zero value means
// no overrides.
type Config struct {
	// RateLimit overrides the schema's per-client-IP limit when Rate > 0.
	RateLimit *RateLimit `json:"rate_limit,omitempty"`
	// Instances holds per-provider overrides keyed by Endpoint.Addr.
	Instances map[string]InstanceConfig `json:"instances,omitempty"`
	// Mocks holds mocks keyed by method name ("Get").
	Mocks map[string]MockConfig `json:"mocks,omitempty"`
}

// RateLimit is a token bucket: Rate tokens per second, Burst at most.
type RateLimit struct {
	Rate  float64 `json:"rate"`
	Burst int     `json:"burst"`
	// PerApp limits each caller instead of each client IP: by its
	// principal (verified certificate or Authenticator) when it has one,
	// else by the app name it claims (rt.WithApp), else by its IP.
	PerApp bool `json:"per_app,omitempty"`
}

// InstanceConfig overrides one provider's settings.
type InstanceConfig struct {
	Weight   int  `json:"weight,omitempty"`   // 0 means keep the provider's own
	Draining bool `json:"draining,omitempty"` // consumers stop sending new calls
}

// MockConfig is a mock set at run time. It stops applying at Expires (the
// zero time means never).
type MockConfig struct {
	Force   bool      `json:"force,omitempty"` // answer every call; else only failed calls
	Action  string    `json:"action"`          // "empty", "value" or "fail"
	Value   []byte    `json:"value,omitempty"` // for "value": the response in wire format
	Code    string    `json:"code,omitempty"`  // for "fail": an rt code name
	Message string    `json:"message,omitempty"`
	Expires time.Time `json:"expires,omitempty"`
}

// Registry is where providers announce themselves and consumers find them.
// Implementations: Memory and Static here, dns.Registry in rt/registry/dns,
// zkreg.Registry for ZooKeeper.
// Methods are safe for concurrent use.
type Registry interface {
	// Register announces e until Deregister or Close. Registering the same
	// Key, Role and Addr again replaces the earlier payload.
	Register(ctx context.Context, e Endpoint) error
	// Deregister removes e; removing an unknown endpoint is not an error.
	Deregister(ctx context.Context, e Endpoint) error
	// Watch calls fn with the snapshot of key as soon as it is known and
	// again after every change, serially, from a goroutine of the registry,
	// until stop is called. A failed or empty listing from the backing store
	// never replaces a non-empty snapshot with an empty one unless the
	// providers really left. stop waits for a running fn to return (so fn
	// must not call it), and fn is not called after stop returns. Snapshots
	// may be shared between watchers: fn must not modify them. A slow fn
	// misses intermediate snapshots, never the latest.
	//
	// Close ends every watch without telling its fn: fn is not called
	// after Close returns, and no snapshot says that the registry closed
	// (watchers keep their last one). A watcher learns it from
	// CloseNotifier's Done, where the registry implements it. Watch after
	// Close returns an error that errors.Is ErrClosed.
	Watch(key Key, fn func(Snapshot)) (stop func(), err error)
	// Close deregisters everything this registry registered and stops all
	// watches.
	Close() error
}

// CloseNotifier is implemented by registries that tell their watchers
// when they close. Implementing it is optional, and a Registry that does
// not is used as before; Memory, MemoryConn, Static, dns.Registry and
// zkreg.Registry implement it. Since Close ends watches without a word (see
// Registry.Watch), a watcher still waiting for its first useful snapshot
// can otherwise not tell "not yet" from "never": rt's calls waiting for a
// service's first providers fail as soon as Done is closed, saying that
// the registry was closed, instead of waiting out their discovery wait. A
// type that wraps a Registry should implement it when the wrapped one does.
type CloseNotifier interface {
	// Done returns a channel that is closed once Close has stopped the
	// registry's watches (for a MemoryConn: once the handle or its Memory
	// is closed), at the latest when Close returns. Every call returns the
	// same channel.
	Done() <-chan struct{}
}

// Governor reads and changes governance config. Memory and zkreg.Registry
// implement it; `yrpcc ctl` uses it.
type Governor interface {
	// Config returns the config of key (the zero Config if none is set).
	Config(ctx context.Context, key Key) (Config, error)
	// UpdateConfig applies fn to the config of key atomically (retrying on
	// concurrent writers) and stores the result.
	UpdateConfig(ctx context.Context, key Key, fn func(*Config) error) error
}

// ErrClosed is returned by registry methods called after Close (the
// error may wrap it: test with errors.Is).
var ErrClosed = errors.New("registry: closed")

// IsZero reports whether c overrides nothing (no rate limit, instance
// overrides or mocks).
func (c Config) IsZero() bool {
	return c.RateLimit == nil && len(c.Instances) == 0 && len(c.Mocks) == 0
}

// Clone returns a deep copy of c, sharing nothing with it, so that a
// Governor.UpdateConfig callback can change the copy freely.
func (c Config) Clone() Config {
	out := Config{}
	if c.RateLimit != nil {
		rl := *c.RateLimit
		out.RateLimit = &rl
	}
	if c.Instances != nil {
		out.Instances = make(map[string]InstanceConfig, len(c.Instances))
		for k, v := range c.Instances {
			out.Instances[k] = v
		}
	}
	if c.Mocks != nil {
		out.Mocks = make(map[string]MockConfig, len(c.Mocks))
		for k, v := range c.Mocks {
			if v.Value != nil {
				v.Value = append([]byte(nil), v.Value...)
			}
			out.Mocks[k] = v
		}
	}
	return out
}
