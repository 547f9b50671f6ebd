package gen

import "hash/fnv"

// model is a spec resolved for emission: references followed, Go names,
// method IDs and file names computed, everything sorted. Only check builds
// it (check.go and the files named check_*.go), and only a model without
// problems reaches the emitting files, which read it and never check.
type model struct {
	pkg      string // protobuf package: the method-ID namespace
	msgs     []*msgModel
	enums    []*enumModel
	services []*svcModel
}

type msgModel struct {
	*Message
	full      string        // protobuf full name "users.User", in errors of generated code
	file      string        // "user.yrpc.go"
	fields    []*fieldModel // declaration order
	byNumber  []*fieldModel // wire order
	copies    bool          // Unmarshal keeps a private copy of its input
	validates bool          // Validate checks something
}

type fieldModel struct {
	*Field
	goName string
	msg    *msgModel  // element/value message for KindMessage
	enum   *enumModel // element/value enum for KindEnum
}

type enumModel struct {
	*Enum
	file   string   // "user_role_enum.yrpc.go"
	consts []string // Go constant name per value
}

type svcModel struct {
	*Service
	full    string // "users.Users"
	lower   string // prefix of unexported helpers: "users"
	file    string // "users_service.yrpc.go"
	methods []*methodModel
}

type methodModel struct {
	*Method
	kind      MethodKind // Kind, MethodUnary for ""
	full      string     // "users.Users/Get"
	id        uint32
	req, resp *msgModel
	hashKey   *fieldModel
	mock      *mockValue // the response of Mock.Value; nil unless Action "value"
}

// oneway reports whether the method is a oneway call.
func (mm *methodModel) oneway() bool { return mm.kind == MethodOneway }

// into returns the name of the client method that decodes the response
// into a message the caller owns ("GetInto"), or "" for a method without
// one (oneway and stream methods).
func (mm *methodModel) into() string {
	if mm.kind != MethodUnary {
		return ""
	}
	return mm.Name + "Into"
}

// MethodID returns the wire ID of a method: FNV-1a 32 of its full name
// "package.Service/Method".
func MethodID(fullName string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(fullName))
	return h.Sum32()
}
