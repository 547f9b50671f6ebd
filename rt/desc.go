package rt

import (
	"context"
	"time"
)

// SupportPackageIsVersion1 is referenced by generated code so that code
// generated for an incompatible runtime fails to compile with a clear name
// instead of misbehaving.
const SupportPackageIsVersion1 = true

// Message is implemented by every generated message. The methods use the
// protobuf binary wire format.
type Message interface {
	// Size returns the encoded size in bytes.
	Size() int
	// MarshalAppend appends the encoding to b and returns the extended slice.
	MarshalAppend(b []byte) []byte
	// Unmarshal resets the message and decodes b into it. The message does
	// not retain b: it keeps at most one private copy of it.
	Unmarshal(b []byte) error
}

// OwnedUnmarshaler is implemented by generated messages: UnmarshalOwned
// decodes b, which the message may keep (its strings and byte slices may
// share b), so it saves Unmarshal's private copy. The client uses it to
// hand a response's bytes to its caller, who decodes them on its own
// goroutine instead of the connection's reader; the server, to decode a
// request of up to 4.5 KiB from a copy it allocates with the call's record.
type OwnedUnmarshaler interface {
	UnmarshalOwned(b []byte) error
}

// Validator is implemented by generated messages; the server calls Validate
// on every request before the handler and answers InvalidArgument on error.
type Validator interface {
	Validate() error
}

// Invoker is what generated client stubs call. *Client implements it; tests
// may supply their own.
type Invoker interface {
	// Invoke calls method m of service sd with req and decodes the answer
	// into resp, which the caller owns (generated XxxInto methods pass
	// their caller's): Invoke replaces resp's contents as resp.Unmarshal
	// does, never touches resp after it returns, and leaves it unspecified
	// on error. For oneway methods resp is nil and Invoke returns once the
	// request is written.
	Invoke(ctx context.Context, sd *ServiceDesc, m int, req, resp Message, opts ...CallOption) error
	// NewStream opens a stream of stream method m of service sd.
	NewStream(ctx context.Context, sd *ServiceDesc, m int, opts ...CallOption) (ClientStreamer, error)
}

// Registrar is what generated Register functions call. *Server implements
// it. A registration error (a duplicate service, a method ID that clashes
// with another service's) is kept and returned by Serve.
type Registrar interface {
	RegisterService(sd *ServiceDesc, impl any)
}

// ServiceDesc describes a generated service: its identity, its policies from
// the schema and its method-index dispatch table. Generated code declares one
// per service as a package-level variable that nothing modifies.
type ServiceDesc struct {
	// Name is the full service name, "package.Service".
	Name string
	// Group and Version isolate deployments of the same service; "" means
	// the default group and version.
	Group   string
	Version string
	// Methods is the dispatch table, indexed by method number.
	Methods []MethodDesc
	// MethodIndex maps a method ID from the wire to its index in Methods, or
	// -1. Generated as a switch.
	MethodIndex func(id uint32) int
	// Policy holds the service-wide defaults from the schema.
	Policy ServicePolicy
	// FileDescriptor is the serialized google.protobuf.FileDescriptorProto
	// of the service's protobuf package (the file that yrpcc proto writes,
	// named "<package>.proto"), for gRPC server reflection; nil when the
	// code was generated without one. Nothing modifies it.
	FileDescriptor []byte
}

// MethodDesc describes one method of a generated service.
type MethodDesc struct {
	Name     string // "Get"
	FullName string // "package.Service/Get"
	ID       uint32 // FNV-1a 32 of FullName; never 0
	Oneway   bool
	Policy   MethodPolicy
	// NewRequest returns a new, empty request message.
	NewRequest func() Message
	// NewResponse returns a new, empty response message; nil for oneway.
	NewResponse func() Message
	// NewResponseWithRoom returns a new, empty response message that
	// implements OwnedUnmarshaler, and room for n bytes allocated with it
	// (generated code sets it to WithRoom): the client copies an answer
	// there and decodes it with UnmarshalOwned, so that the message and
	// the bytes its strings share cost one allocation. Nil for oneway
	// methods; when nil, InvokeNew uses NewResponse.
	NewResponseWithRoom func(n int) (Message, []byte)
	// Handle calls the method on impl (the value given to RegisterService)
	// with a request made by NewRequest. Oneway handlers return a nil
	// message. Nil for stream methods.
	Handle func(impl any, ctx context.Context, req Message) (Message, error)
	// Stream is the method's kind of stream; NotStream for unary and
	// oneway methods.
	Stream StreamKind
	// HandleStream serves a stream of a stream method on impl; nil for
	// other methods.
	HandleStream func(impl any, ss ServerStreamer) error
	// HashKey appends the request's hash-key field to dst, for consistent
	// hashing; nil when the method has no hash key.
	HashKey func(req Message, dst []byte) []byte
}

// ServicePolicy is a service's policy from the schema; zero fields mean the
// runtime defaults.
type ServicePolicy struct {
	RateLimit RateLimitPolicy
	Breaker   BreakerPolicy
	Balance   string // balancer name; "" means the client's default
	// Allow lists the principals allowed to call the service's methods
	// (patterns as AccessRules take them); nil: no restriction.
	Allow []string
}

// RateLimitPolicy is a token bucket's rate and burst; Rate 0 means no
// limit. What each bucket counts depends on where it is given: a
// service's RateLimit has one per client IP (or per caller, PerApp
// governance), a method's ClientRateLimit one per client, and
// StreamRecvLimit and StreamSendLimit one per stream.
type RateLimitPolicy struct {
	Rate  float64 // tokens per second
	Burst int
}

// BreakerPolicy configures the per-instance circuit breaker; zero fields
// take the breaker's defaults.
type BreakerPolicy struct {
	ErrorRate   float64
	MinRequests int
	OpenFor     time.Duration
}

// MethodPolicy is a method's policy from the schema; the client may override
// any of it per call or through the registry's governance config.
type MethodPolicy struct {
	Timeout    time.Duration // 0 means the client's default
	TryTimeout time.Duration // bounds each attempt; 0 means the runtime's default: half the time left while a retry may follow (see WithTryTimeout)
	Idempotent bool
	Retry      RetryPolicy
	Mock       MockPolicy
	FaultMode  FaultMode
	Forks      int           // parallel attempts for FaultForking
	Hedge      time.Duration // send a hedged attempt after this delay; 0 means off
	// Allow lists the principals allowed to call the method, replacing
	// the service's list; nil: the service's.
	Allow []string
	// MaxMessageSize bounds each message of a stream method, both ways;
	// 0 means the connection's max frame size.
	MaxMessageSize int
	// ClientRateLimit caps the calls each client sends of the method
	// (ResourceExhausted locally beyond it); Rate 0 means none.
	// WithMethodRateLimit overrides it.
	ClientRateLimit RateLimitPolicy
}

// RetryPolicy says how often and how fast a method is retried. Tries counts
// all attempts, the first included: 1 means no retry, and 0 (no Retry in
// the schema) means 3 attempts for a call that fails over (an idempotent
// method, or FaultFailover) and 1 for any other.
type RetryPolicy struct {
	Tries       int
	Interval    time.Duration
	Backoff     float64 // multiplier per retry; 0 means 1
	MaxInterval time.Duration
	Jitter      float64 // ± fraction of the interval
}

// FaultMode is what the client does when a call fails.
type FaultMode uint8

// Fault modes.
const (
	FaultDefault  FaultMode = iota // failover for idempotent methods, failfast otherwise
	FaultFailover                  // retry on another instance
	FaultFailfast                  // return the error at once
	FaultFailsafe                  // swallow the error, return an empty response
	FaultForking                   // send to Forks instances at once, first success wins
)

// MockMode says when a mock answers.
type MockMode uint8

// Mock modes.
const (
	MockOff       MockMode = iota
	MockOnFailure          // answer with the mock when the call fails
	MockForce              // answer every call with the mock, never calling out
)

// MockAction is what a mock answers.
type MockAction uint8

// Mock actions.
const (
	MockReturnEmpty MockAction = iota // an empty response message
	MockReturnValue                   // the message built by Value
	MockFail                          // the error Code/Message
)

// MockPolicy is a method's mock.
type MockPolicy struct {
	Mode    MockMode
	Action  MockAction
	Value   func() Message // for MockReturnValue
	Code    Code           // for MockFail
	Message string         // for MockFail
}
