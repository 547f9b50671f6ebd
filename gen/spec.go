package gen

import "time"

// SpecVersion is the version of the JSON spec format that the loader writes
// and the generator reads. It changes only when the format changes in a way
// that an older generator cannot read (version 2: Method.Kind replaced
// the oneway flag).
const SpecVersion = 2

// Spec is everything the generator needs to know about a schema package. The
// loader (package gen/load) builds it by running the schema package; tests
// build it in memory. It is plain data: it marshals to JSON and back without
// loss, and its zero value is an empty schema.
type Spec struct {
	// Version is SpecVersion of the loader that wrote the spec.
	Version int `json:"version"`
	// SchemaPkg is the import path of the schema package ("" when built in
	// memory). Generated code never imports it.
	SchemaPkg string `json:"schema_pkg,omitempty"`
	// Package is the protobuf package name and the method-ID namespace:
	// a method's ID is the hash of "Package.Service/Method". gen/load sets
	// it from schema.Package, else from the schema's import path
	// (names.DefaultPackage); Generate gives an empty one Config.Package.
	Package string `json:"package"`
	// Messages in declaration order; the generator sorts what it emits.
	Messages []*Message `json:"messages"`
	// Services in declaration order.
	Services []*Service `json:"services,omitempty"`
}

// Message describes one schema message (a struct embedding schema.Message).
type Message struct {
	Name    string   `json:"name"`              // Go name of the schema type, e.g. "User"
	Comment string   `json:"comment,omitempty"` // doc comment of the schema type, if any
	Pos     string   `json:"pos,omitempty"`     // "file.go:12" of the type declaration
	Fields  []*Field `json:"fields"`
	// Reserved field numbers that no field may use (schema.Reserved).
	Reserved []int32 `json:"reserved,omitempty"`
}

// Kind is the wire kind of a field (or of a list element or map value).
type Kind string

// Field kinds. Their protobuf equivalents are in the comments.
const (
	KindBool     Kind = "bool"     // bool
	KindInt32    Kind = "int32"    // int32 (varint, sign-extended)
	KindInt64    Kind = "int64"    // int64
	KindUint32   Kind = "uint32"   // uint32
	KindUint64   Kind = "uint64"   // uint64
	KindSint32   Kind = "sint32"   // sint32 (zigzag)
	KindSint64   Kind = "sint64"   // sint64 (zigzag)
	KindFixed32  Kind = "fixed32"  // fixed32
	KindFixed64  Kind = "fixed64"  // fixed64
	KindSfixed32 Kind = "sfixed32" // sfixed32
	KindSfixed64 Kind = "sfixed64" // sfixed64
	KindFloat32  Kind = "float32"  // float
	KindFloat64  Kind = "float64"  // double
	KindString   Kind = "string"   // string (must be valid UTF-8 on decode? see Field.Validate)
	KindBytes    Kind = "bytes"    // bytes
	KindEnum     Kind = "enum"     // enum (varint)
	KindTime     Kind = "time"     // google.protobuf.Timestamp; Go time.Time
	KindDuration Kind = "duration" // google.protobuf.Duration; Go time.Duration
	KindMessage  Kind = "message"  // nested message
)

// Field describes one message field.
//
// A plain field has Kind and no List/MapKey. A list has List set and Kind is
// the element kind. A map has MapKey set (a scalar or string kind) and Kind
// is the value kind. Message and Enum describe the (element/value) type when
// Kind is KindMessage or KindEnum.
type Field struct {
	Name    string `json:"name"`              // schema name, snake_case ("created_at")
	Number  int32  `json:"number"`            // wire number, 1..536870911, not 19000..19999
	Kind    Kind   `json:"kind"`              // kind of the value, element or map value
	List    bool   `json:"list,omitempty"`    // repeated
	MapKey  Kind   `json:"map_key,omitempty"` // map key kind; "" unless a map
	Message string `json:"message,omitempty"` // referenced message name for KindMessage
	Enum    *Enum  `json:"enum,omitempty"`    // enum type for KindEnum
	// Optional gives a scalar field presence (a pointer in Go, proto3
	// "optional"); a message field always has presence (a pointer).
	Optional bool `json:"optional,omitempty"`
	// Unpacked writes a repeated scalar field one tag per element instead of
	// proto3's default packed form. Decoders accept both forms always.
	Unpacked   bool       `json:"unpacked,omitempty"`
	Deprecated bool       `json:"deprecated,omitempty"`
	Comment    string     `json:"comment,omitempty"`
	Validate   Validators `json:"validate,omitempty"`
	Pos        string     `json:"pos,omitempty"` // "file.go:12" of the builder call
}

// Validators are the checks that the generated Validate method performs.
// The zero value checks nothing.
type Validators struct {
	NotEmpty bool     `json:"not_empty,omitempty"` // string/bytes/list/map non-empty; message present
	MinLen   int      `json:"min_len,omitempty"`   // string (in runes), bytes, list, map
	MaxLen   int      `json:"max_len,omitempty"`   // 0 means no limit
	Min      *float64 `json:"min,omitempty"`       // numeric range, inclusive (Range)
	Max      *float64 `json:"max,omitempty"`
	Match    string   `json:"match,omitempty"` // regexp (RE2) that a string must match
}

// Enum is an enum type. Values[0] is the zero value and must have Number 0.
type Enum struct {
	Name   string      `json:"name"` // Go type name, e.g. "UserRole"
	Values []EnumValue `json:"values"`
}

// EnumValue is one named enum value.
type EnumValue struct {
	Name   string `json:"name"`   // schema name, e.g. "admin"
	Number int32  `json:"number"` // wire number
}

// Service describes one schema service (a struct embedding schema.Service).
type Service struct {
	Name      string     `json:"name"` // "Users"
	Comment   string     `json:"comment,omitempty"`
	Pos       string     `json:"pos,omitempty"`
	Group     string     `json:"group,omitempty"`
	Version   string     `json:"version,omitempty"`
	RateLimit *RateLimit `json:"rate_limit,omitempty"`
	Breaker   *Breaker   `json:"breaker,omitempty"`
	Balance   string     `json:"balance,omitempty"` // "", "random", "round_robin", "weighted_round_robin", "least_active", "p2c", "consistent_hash", "consistent_hash_bounded"
	Allow     []string   `json:"allow,omitempty"`   // principals allowed to call the service's methods; nil: anyone
	Methods   []*Method  `json:"methods"`
}

// RateLimit is a token bucket applied per client IP by the server.
type RateLimit struct {
	Rate  float64 `json:"rate"`  // tokens per second
	Burst int     `json:"burst"` // bucket size
}

// Breaker is the per-instance circuit breaker policy of a service's clients.
type Breaker struct {
	ErrorRate   float64       `json:"error_rate"`   // trip at this failure fraction, 0..1
	MinRequests int           `json:"min_requests"` // in the window, before the rate counts
	OpenFor     time.Duration `json:"open_for"`     // open state duration before half-open
}

// MethodKind is how a method's messages flow. The zero value "" means
// MethodUnary.
type MethodKind string

// Method kinds.
const (
	MethodUnary        MethodKind = "unary"         // one request, one response
	MethodOneway       MethodKind = "oneway"        // one request, no response
	MethodServerStream MethodKind = "server_stream" // one request, a stream of responses
	MethodClientStream MethodKind = "client_stream" // a stream of requests, one response
	MethodBidiStream   MethodKind = "bidi_stream"   // a stream each way
)

// String returns k, or "unary" for "".
func (k MethodKind) String() string {
	if k == "" {
		return string(MethodUnary)
	}
	return string(k)
}

// Stream reports whether k is one of the stream kinds.
func (k MethodKind) Stream() bool { return k.ClientStreams() || k.ServerStreams() }

// ClientStreams reports whether the client sends a stream of requests
// (client and bidi streams).
func (k MethodKind) ClientStreams() bool { return k == MethodClientStream || k == MethodBidiStream }

// ServerStreams reports whether the server sends a stream of responses
// (server and bidi streams).
func (k MethodKind) ServerStreams() bool { return k == MethodServerStream || k == MethodBidiStream }

// Method describes one service method.
type Method struct {
	Name       string        `json:"name"`
	Comment    string        `json:"comment,omitempty"`
	Pos        string        `json:"pos,omitempty"`
	Kind       MethodKind    `json:"kind,omitempty"`     // "" means MethodUnary
	Request    string        `json:"request"`            // message name
	Response   string        `json:"response,omitempty"` // message name; "" for oneway
	Idempotent bool          `json:"idempotent,omitempty"`
	Timeout    time.Duration `json:"timeout,omitempty"`
	TryTimeout time.Duration `json:"try_timeout,omitempty"` // per attempt; 0 means the runtime's default
	Retry      *Retry        `json:"retry,omitempty"`
	HashKey    string        `json:"hash_key,omitempty"` // request field name (scalar or string)
	Mock       *Mock         `json:"mock,omitempty"`
	FaultMode  string        `json:"fault_mode,omitempty"` // "", "failover", "failfast", "failsafe", "forking"
	Forks      int           `json:"forks,omitempty"`      // parallel calls in forking mode
	Hedge      time.Duration `json:"hedge,omitempty"`      // hedged request delay (idempotent only)
	// MaxMessageSize limits each message of a stream, in encoded bytes;
	// 0 means the runtime's default. Streams only.
	MaxMessageSize int `json:"max_message_size,omitempty"`
	// Allow lists the principals that may call the method, replacing
	// the service's list; nil: the service's.
	Allow []string `json:"allow,omitempty"`
	// ClientRateLimit caps each client's calls of the method.
	ClientRateLimit *RateLimit `json:"client_rate_limit,omitempty"`
}

// Retry is a method's retry policy.
type Retry struct {
	Tries       int           `json:"tries"`                  // total attempts, including the first
	Interval    time.Duration `json:"interval"`               // wait before the first retry
	Backoff     float64       `json:"backoff,omitempty"`      // interval multiplier per retry; 0 means 1
	MaxInterval time.Duration `json:"max_interval,omitempty"` // cap on the interval; 0 means none
	Jitter      float64       `json:"jitter,omitempty"`       // ± fraction of the interval, 0..1
}

// Mock is a method's mock policy.
type Mock struct {
	Force   bool   `json:"force,omitempty"` // answer every call with the mock; else only failed calls
	Action  string `json:"action"`          // "empty", "value" or "fail"
	Value   string `json:"value,omitempty"` // for "value": JSON object of response field values
	Code    string `json:"code,omitempty"`  // for "fail": an rt.Code name, e.g. "Unavailable"
	Message string `json:"message,omitempty"`
}
