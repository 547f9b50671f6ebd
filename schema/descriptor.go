package schema

import "time"

// The descriptors below are what builders produce and what the loader's
// temporary program encodes as JSON. Their JSON form is the field, method and
// enum part of gen.Spec's JSON form (gen.SpecVersion), so the loader decodes
// it straight into gen types. Users do not need them.

// FieldDescriptor describes one field. The zero value describes nothing.
type FieldDescriptor struct {
	Name       string          `json:"name"`
	Number     int32           `json:"number"`
	Kind       string          `json:"kind"` // gen.Kind of the value, element or map value
	List       bool            `json:"list,omitempty"`
	MapKey     string          `json:"map_key,omitempty"`
	Message    string          `json:"message,omitempty"` // name of the referenced message type
	MessagePkg string          `json:"-"`                 // import path of the referenced type
	Enum       *EnumDescriptor `json:"enum,omitempty"`
	Optional   bool            `json:"optional,omitempty"`
	Unpacked   bool            `json:"unpacked,omitempty"`
	Deprecated bool            `json:"deprecated,omitempty"`
	Comment    string          `json:"comment,omitempty"`
	Validate   Validators      `json:"validate,omitzero"`
	Pos        string          `json:"pos,omitempty"` // "/abs/file.go:12" of the builder call
	Errors     []*BuildError   `json:"-"`
}

// Validators mirrors gen.Validators. The zero value checks nothing.
type Validators struct {
	NotEmpty bool     `json:"not_empty,omitempty"`
	MinLen   int      `json:"min_len,omitempty"`
	MaxLen   int      `json:"max_len,omitempty"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	Match    string   `json:"match,omitempty"`
}

// EnumDescriptor describes an enum type; Name "" asks for the default name
// <Message><Field>.
type EnumDescriptor struct {
	Name   string                `json:"name"`
	Values []EnumValueDescriptor `json:"values"`
}

// EnumValueDescriptor is one enum value.
type EnumValueDescriptor struct {
	Name   string `json:"name"`
	Number int32  `json:"number"`
}

// MethodDescriptor describes one method.
type MethodDescriptor struct {
	Name        string `json:"name"`
	Comment     string `json:"comment,omitempty"`
	Pos         string `json:"pos,omitempty"`
	Request     string `json:"request"`
	RequestPkg  string `json:"-"`
	Response    string `json:"response,omitempty"`
	ResponsePkg string `json:"-"`
	// Kind is the gen.MethodKind: "unary", "oneway", "server_stream",
	// "client_stream" or "bidi_stream".
	Kind           string        `json:"kind"`
	Idempotent     bool          `json:"idempotent,omitempty"`
	Timeout        time.Duration `json:"timeout,omitempty"`
	TryTimeout     time.Duration `json:"try_timeout,omitempty"`
	Retry          *RetryPolicy  `json:"retry,omitempty"`
	HashKey        string        `json:"hash_key,omitempty"`
	Mock           *MockPolicy   `json:"mock,omitempty"`
	FaultMode      string        `json:"fault_mode,omitempty"`
	Forks          int           `json:"forks,omitempty"`
	Hedge          time.Duration `json:"hedge,omitempty"`
	MaxMessageSize int           `json:"max_message_size,omitempty"` // bytes; streams only
	// Allow lists the principals that may call the method (rpc.Allow).
	Allow []string `json:"allow,omitempty"`
	// ClientRateLimit caps each client's calls (rpc.ClientRateLimit).
	ClientRateLimit *RateLimitPolicy `json:"client_rate_limit,omitempty"`
	Errors          []*BuildError    `json:"-"`
}

// RetryPolicy mirrors gen.Retry.
type RetryPolicy struct {
	Tries       int           `json:"tries"`
	Interval    time.Duration `json:"interval"`
	Backoff     float64       `json:"backoff,omitempty"`
	MaxInterval time.Duration `json:"max_interval,omitempty"`
	Jitter      float64       `json:"jitter,omitempty"`
}

// MockPolicy mirrors gen.Mock.
type MockPolicy struct {
	Force   bool   `json:"force,omitempty"`
	Action  string `json:"action"`
	Value   string `json:"value,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// BuildError is a mistake in a builder call. The zero value is an empty
// error.
type BuildError struct {
	// Call is the builder call, e.g. `field.String("name", 2).MaxLen(-1)`.
	Call string
	// Msg says what is wrong, e.g. "max length must be >= 1".
	Msg string
}

func (e *BuildError) Error() string { return e.Call + ": " + e.Msg }
