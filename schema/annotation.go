package schema

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// Annotation is a schema-wide setting returned by an Annotations method.
// Build one with Group, Version, RateLimit, Breaker, Balance or Package.
type Annotation interface {
	Descriptor() *AnnotationDescriptor
}

// AnnotationDescriptor describes one annotation: exactly one of its setting
// fields is set, named by Kind. The zero value describes nothing.
type AnnotationDescriptor struct {
	Kind      string // "group", "version", "rate_limit", "breaker", "balance", "package" or "allow"
	Call      string // the builder call, e.g. `schema.Group("HK")`
	Pos       string // "/abs/file.go:12" of the call
	Group     string
	Version   string
	Package   string
	Balance   string
	RateLimit *RateLimitPolicy
	Breaker   *BreakerPolicy
	Allow     []string
	Errors    []*BuildError
}

// Descriptor returns d itself, so that *AnnotationDescriptor is an Annotation.
func (d *AnnotationDescriptor) Descriptor() *AnnotationDescriptor { return d }

// RateLimitPolicy mirrors gen.RateLimit.
type RateLimitPolicy struct {
	Rate  float64 `json:"rate"`
	Burst int     `json:"burst"`
}

// BreakerPolicy mirrors gen.Breaker.
type BreakerPolicy struct {
	ErrorRate   float64       `json:"error_rate"`
	MinRequests int           `json:"min_requests"`
	OpenFor     time.Duration `json:"open_for"`
}

// BalanceKind names a load-balancing strategy for Balance. The zero value
// names none (Balance reports it as unknown).
type BalanceKind string

// Balancers. ConsistentHash hashes each method's HashKey field.
const (
	Random             BalanceKind = "random"
	RoundRobin         BalanceKind = "round_robin"
	WeightedRoundRobin BalanceKind = "weighted_round_robin"
	LeastActive        BalanceKind = "least_active"
	P2C                BalanceKind = "p2c"
	ConsistentHash     BalanceKind = "consistent_hash"
	// ConsistentHashBounded is ConsistentHash with bounded loads: a
	// provider with more than its share of the calls in flight (1.25×
	// the average by default) passes its keys on to the next ones.
	ConsistentHashBounded BalanceKind = "consistent_hash_bounded"
)

func newAnnotation(kind, call string) *AnnotationDescriptor {
	d := &AnnotationDescriptor{Kind: kind, Call: call}
	if _, file, line, ok := runtime.Caller(2); ok {
		d.Pos = fmt.Sprintf("%s:%d", file, line)
	}
	return d
}

func (d *AnnotationDescriptor) fail(format string, args ...any) {
	d.Errors = append(d.Errors, &BuildError{Call: d.Call, Msg: fmt.Sprintf(format, args...)})
}

// Group is a service annotation: providers and consumers of the service
// meet only within the same group (e.g. a region or a tenant).
func Group(name string) Annotation {
	d := newAnnotation("group", fmt.Sprintf("schema.Group(%q)", name))
	if name == "" {
		d.fail("group must not be empty")
	}
	d.Group = name
	return d
}

// Version is a service annotation: the service version that providers
// register and consumers ask for.
func Version(v string) Annotation {
	d := newAnnotation("version", fmt.Sprintf("schema.Version(%q)", v))
	if v == "" {
		d.fail("version must not be empty")
	}
	d.Version = v
	return d
}

// RateLimit is a service annotation: the server admits at most rate calls
// per second from each client IP, with bursts of up to burst calls.
func RateLimit(rate float64, burst int) Annotation {
	d := newAnnotation("rate_limit", fmt.Sprintf("schema.RateLimit(%v, %d)", rate, burst))
	switch {
	case !(rate > 0) || rate > 1e9:
		d.fail("rate must be in (0, 1e9] calls per second")
	case burst < 1:
		d.fail("burst must be >= 1")
	default:
		d.RateLimit = &RateLimitPolicy{Rate: rate, Burst: burst}
	}
	return d
}

// Allow is a service annotation: only the given principals may call the
// service's methods (a method's rpc.Allow replaces it for that method).
// A principal is what the server's rt.Authenticator names the caller (by
// default the SPIFFE ID, else the common name, of its verified client
// certificate); "*" is any authenticated caller and a trailing "*" a
// prefix. Others get PermissionDenied; rt.WithAccessRules overrides the
// lists at run time.
func Allow(principals ...string) Annotation {
	d := newAnnotation("allow", fmt.Sprintf("schema.Allow(%q)", principals))
	switch {
	case len(principals) == 0:
		d.fail("name at least one principal")
	case slices.Contains(principals, ""):
		d.fail("an empty principal")
	default:
		d.Allow = slices.Clone(principals)
	}
	return d
}

// Breaker is a service annotation: each client opens a per-instance circuit
// breaker when at least minRequests calls in the window failed at a rate of
// errorRate (0..1] or more, and keeps it open for openFor before probing.
func Breaker(errorRate float64, minRequests int, openFor time.Duration) Annotation {
	d := newAnnotation("breaker", fmt.Sprintf("schema.Breaker(%v, %d, %v)", errorRate, minRequests, openFor))
	switch {
	case !(errorRate > 0 && errorRate <= 1):
		d.fail("error rate must be in (0, 1]")
	case minRequests < 1:
		d.fail("min requests must be >= 1")
	case openFor <= 0:
		d.fail("open duration must be > 0")
	default:
		d.Breaker = &BreakerPolicy{ErrorRate: errorRate, MinRequests: minRequests, OpenFor: openFor}
	}
	return d
}

// Balance is a service annotation: the default load balancer of the
// service's clients.
func Balance(kind BalanceKind) Annotation {
	d := newAnnotation("balance", fmt.Sprintf("schema.Balance(%q)", string(kind)))
	switch kind {
	case Random, RoundRobin, WeightedRoundRobin, LeastActive, P2C, ConsistentHash, ConsistentHashBounded:
		d.Balance = string(kind)
	default:
		d.fail("unknown balancer")
	}
	return d
}

// Package sets the protobuf package of the whole schema, the namespace of
// method IDs ("Package.Service/Method"). It may annotate any message or
// service; all Package annotations of a schema must agree. Without it the
// package comes from the schema package's import path: the element above
// the schema package ("shop" for example.com/shop/schema), never a
// directory name, so every checkout of a module has the same service
// identity.
func Package(name string) Annotation {
	d := newAnnotation("package", fmt.Sprintf("schema.Package(%q)", name))
	if !isProtoPackage(name) {
		d.fail("package must be dot-separated identifiers, like \"acme.users\"")
	}
	d.Package = name
	return d
}

// isProtoPackage reports whether s is a dot-separated list of identifiers.
func isProtoPackage(s string) bool {
	if s == "" {
		return false
	}
	start := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if start {
				return false
			}
			start = true
			continue
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9':
			if start {
				return false
			}
		default:
			return false
		}
		start = false
	}
	return !start
}
