package rpc

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/schema"
)

// Builder builds one method declaration; Unary, Oneway, ServerStream,
// ClientStream and BidiStream return it and its modifiers chain. Its zero
// value is not a method: use one of them. A Builder is not safe for
// concurrent use.
type Builder struct {
	desc  schema.MethodDescriptor
	call  string
	done  bool // Descriptor has run its final checks
	retry bool // Retry was called
}

// Unary declares a request-response method: the client sends a req message
// and waits for a resp message. req and resp are Type method expressions,
// e.g. rpc.Unary("Get", GetUser.Type, User.Type).
func Unary(name string, req, resp any) *Builder {
	return newBuilder(kindUnary, name, req, resp)
}

// Oneway declares a fire-and-forget method: the client sends a req message
// and does not wait for an answer.
func Oneway(name string, req any) *Builder {
	return newBuilder(kindOneway, name, req)
}

// newBuilder starts the declaration of a method of kind with the message
// references refs (request, then response), recording the position of the
// constructor's caller.
func newBuilder(kind, name string, refs ...any) *Builder {
	args := []string{strconv.Quote(name)}
	for _, r := range refs {
		args = append(args, schema.RefString(r))
	}
	b := &Builder{call: kinds[kind].ctor + "(" + strings.Join(args, ", ") + ")"}
	b.desc.Name, b.desc.Kind = name, kind
	if _, file, line, ok := runtime.Caller(2); ok {
		b.desc.Pos = fmt.Sprintf("%s:%d", file, line)
	}
	if !isExported(name) {
		b.fail("", "method name must be an exported Go identifier like \"Get\"")
	}
	b.desc.Request, b.desc.RequestPkg = b.ref(refs[0])
	if len(refs) > 1 {
		b.desc.Response, b.desc.ResponsePkg = b.ref(refs[1])
	}
	return b
}

func (b *Builder) ref(r any) (name, pkg string) {
	name, pkg, err := schema.Ref(r)
	if err != nil {
		b.fail("", "%v", err)
	}
	return name, pkg
}

func (b *Builder) fail(mod, format string, args ...any) *Builder {
	call := b.call
	if mod != "" {
		call += "." + mod
	}
	b.desc.Errors = append(b.desc.Errors, &schema.BuildError{Call: call, Msg: fmt.Sprintf(format, args...)})
	return b
}

// Descriptor returns the method's descriptor, with the mistakes found in
// Errors.
func (b *Builder) Descriptor() *schema.MethodDescriptor {
	if !b.done {
		b.done = true
		if r := b.desc.Retry; r != nil && !b.retry {
			if r.Backoff != 0 || r.MaxInterval != 0 {
				b.fail(fmt.Sprintf("Backoff(%v, %v)", r.Backoff, r.MaxInterval), "backoff needs Retry(tries, interval)")
			}
			if r.Jitter != 0 {
				b.fail(fmt.Sprintf("Jitter(%v)", r.Jitter), "jitter needs Retry(tries, interval)")
			}
		}
		if t := b.desc.TryTimeout; t > 0 && b.desc.Timeout > 0 && t > b.desc.Timeout {
			b.fail(fmt.Sprintf("TryTimeout(%v)", t), "the try timeout is longer than the timeout %v", b.desc.Timeout)
		}
		if b.desc.Hedge > 0 && !b.desc.Idempotent {
			b.fail(fmt.Sprintf("Hedge(%v)", b.desc.Hedge), "hedging needs an Idempotent method")
		}
		if b.desc.FaultMode == "forking" && !b.desc.Idempotent {
			b.fail(fmt.Sprintf("FaultMode(rpc.Forking(%d))", b.desc.Forks), "forking needs an Idempotent method")
		}
	}
	return &b.desc
}

// Comment sets the method's doc comment in generated code.
func (b *Builder) Comment(text string) *Builder {
	b.desc.Comment = text
	return b
}

// Idempotent marks the method safe to call more than once with the same
// request: clients may retry it after any failure and hedge it.
func (b *Builder) Idempotent() *Builder {
	if b.refused("Idempotent", "Idempotent()") {
		return b
	}
	b.desc.Idempotent = true
	return b
}

// Timeout sets the default deadline of one call, retries included; of a
// stream, from its opening to its end.
func (b *Builder) Timeout(d time.Duration) *Builder {
	if b.positive("Timeout", d, "timeout") {
		b.desc.Timeout = d
	}
	return b
}

// positive reports whether modifier may set the duration d: the method's
// kind takes modifier and d > 0. If not, it records the mistake; what
// names d in it.
func (b *Builder) positive(modifier string, d time.Duration, what string) bool {
	mod := fmt.Sprintf("%s(%v)", modifier, d)
	switch {
	case b.refused(modifier, mod):
		return false
	case d <= 0:
		b.fail(mod, "%s must be > 0", what)
		return false
	}
	return true
}

// TryTimeout bounds each attempt of a call to d, so that a hung provider
// costs one try, not the whole call: when an attempt runs out of time the
// client retries (under the method's Retry policy) while the call's
// Timeout lasts. It is meant for methods with retries but allowed on any
// unary or oneway method (not on streams); d must be > 0 and, when Timeout
// is set, not longer than it.
func (b *Builder) TryTimeout(d time.Duration) *Builder {
	if b.positive("TryTimeout", d, "try timeout") {
		b.desc.TryTimeout = d
	}
	return b
}

// Retry makes the client try a failed call up to tries times in all (the
// first attempt included), each time on another instance, waiting interval
// before the first retry. Non-idempotent methods are retried only when the
// error proves the call did not run. A server stream is retried only until
// its first response message reaches the caller; client and bidi streams
// are never retried.
func (b *Builder) Retry(tries int, interval time.Duration) *Builder {
	mod := fmt.Sprintf("Retry(%d, %v)", tries, interval)
	switch {
	case b.refused("Retry", mod):
		return b
	case tries < 1:
		return b.fail(mod, "tries must be >= 1 (the first attempt counts)")
	case interval < 0:
		return b.fail(mod, "interval must be >= 0")
	}
	b.retry = true
	r := b.retryPolicy()
	r.Tries, r.Interval = tries, interval
	return b
}

func (b *Builder) retryPolicy() *schema.RetryPolicy {
	if b.desc.Retry == nil {
		b.desc.Retry = &schema.RetryPolicy{}
	}
	return b.desc.Retry
}

// Backoff multiplies the retry interval by mult (>= 1) after each retry, up
// to max (0 means no cap). It needs Retry.
func (b *Builder) Backoff(mult float64, max time.Duration) *Builder {
	mod := fmt.Sprintf("Backoff(%v, %v)", mult, max)
	switch {
	case b.refused("Retry", mod):
		return b
	case !(mult >= 1) || mult > 1000:
		return b.fail(mod, "multiplier must be in [1, 1000]")
	case max < 0:
		return b.fail(mod, "max interval must be >= 0")
	}
	r := b.retryPolicy()
	r.Backoff, r.MaxInterval = mult, max
	return b
}

// Jitter randomizes each retry interval by ± f of itself (0 <= f <= 1). It
// needs Retry.
func (b *Builder) Jitter(f float64) *Builder {
	mod := fmt.Sprintf("Jitter(%v)", f)
	switch {
	case b.refused("Retry", mod):
		return b
	case !(f >= 0 && f <= 1):
		return b.fail(mod, "jitter must be in [0, 1]")
	}
	b.retryPolicy().Jitter = f
	return b
}

// HashKey names the request field (a scalar or string) whose value picks the
// instance under consistent-hash balancing; of a server stream, the field
// of its one request. Client and bidi streams take none: they pick their
// instance before sending a request.
func (b *Builder) HashKey(field string) *Builder {
	switch {
	case b.refused("HashKey", fmt.Sprintf("HashKey(%q)", field)):
		return b
	case field == "":
		return b.fail(`HashKey("")`, "hash key must name a request field")
	}
	b.desc.HashKey = field
	return b
}

// Hedge sends a second attempt to another instance when the first has not
// answered after d; the first answer wins. It needs Idempotent, and does
// not apply to streams.
func (b *Builder) Hedge(d time.Duration) *Builder {
	if b.positive("Hedge", d, "hedge delay") {
		b.desc.Hedge = d
	}
	return b
}

// Allow lets only the given principals call the method, replacing the
// service's schema.Allow list for it. A principal is what the server's
// rt.Authenticator names the caller (by default the SPIFFE ID, else the
// common name, of its verified client certificate); "*" is any
// authenticated caller and a trailing "*" a prefix
// ("spiffe://example.org/ns/shop/*"). Others get PermissionDenied.
func (b *Builder) Allow(principals ...string) *Builder {
	mod := fmt.Sprintf("Allow(%q)", principals)
	if len(principals) == 0 {
		return b.fail(mod, "name at least one principal")
	}
	for _, p := range principals {
		if p == "" {
			return b.fail(mod, "an empty principal")
		}
	}
	b.desc.Allow = append([]string(nil), principals...)
	return b
}

// ClientRateLimit makes each client send at most rate calls per second of
// the method, with bursts of up to burst: the calls beyond fail locally
// with ResourceExhausted before they leave the client (and do not count
// against any provider's breaker). rt.WithMethodRateLimit overrides it at
// run time.
func (b *Builder) ClientRateLimit(rate float64, burst int) *Builder {
	mod := fmt.Sprintf("ClientRateLimit(%v, %d)", rate, burst)
	switch {
	case !(rate > 0) || rate > 1e9:
		return b.fail(mod, "rate must be in (0, 1e9] calls per second")
	case burst < 1:
		return b.fail(mod, "burst must be >= 1")
	}
	b.desc.ClientRateLimit = &schema.RateLimitPolicy{Rate: rate, Burst: burst}
	return b
}

func isExported(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
