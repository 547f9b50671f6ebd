package rpc

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/yrpc/yrpc/schema"
)

// FaultMode is what a client does when a call fails: Failover, Failfast,
// Failsafe or Forking(n). The zero value is the default: failover for
// idempotent methods, failfast otherwise.
type FaultMode uint32

// Fault modes.
const (
	Failover FaultMode = iota + 1 // retry on another instance
	Failfast                      // return the error at once
	Failsafe                      // swallow the error, answer an empty response
)

const (
	forkingFlag FaultMode = 1 << 16
	maxForks              = 1<<16 - 1
)

// Forking sends each call to n instances at once (n >= 2); the first
// success wins. It needs an Idempotent method.
func Forking(n int) FaultMode {
	if n < 0 || n > maxForks {
		n = 0
	}
	return forkingFlag | FaultMode(n)
}

func (f FaultMode) String() string {
	switch {
	case f == Failover:
		return "rpc.Failover"
	case f == Failfast:
		return "rpc.Failfast"
	case f == Failsafe:
		return "rpc.Failsafe"
	case f&forkingFlag != 0:
		return "rpc.Forking(" + strconv.Itoa(int(f&^forkingFlag)) + ")"
	}
	return "rpc.FaultMode(" + strconv.Itoa(int(f)) + ")"
}

// FaultMode sets what the client does when a call fails. It does not apply
// to streams.
func (b *Builder) FaultMode(f FaultMode) *Builder {
	mod := "FaultMode(" + f.String() + ")"
	if b.refused("FaultMode", mod) {
		return b
	}
	switch {
	case f == Failover:
		b.desc.FaultMode, b.desc.Forks = "failover", 0
	case f == Failfast:
		b.desc.FaultMode, b.desc.Forks = "failfast", 0
	case f == Failsafe:
		b.desc.FaultMode, b.desc.Forks = "failsafe", 0
	case f&forkingFlag != 0:
		n := int(f &^ forkingFlag)
		if n < 2 {
			return b.fail(mod, "forking needs at least 2 parallel calls")
		}
		b.desc.FaultMode, b.desc.Forks = "forking", n
	default:
		return b.fail(mod, "unknown fault mode")
	}
	return b
}

// Values are response field values for ReturnValue, keyed by schema field
// name, as JSON would encode them (nested messages as maps). A nil Values
// is an empty response.
type Values map[string]any

// Mock is a method's mock answer: ReturnEmpty, ReturnValue or Fail. By
// default it answers only calls that failed; Force makes it answer every
// call without calling out. The zero value is not a valid mock.
type Mock struct {
	action, value, code, msg string
	force                    bool
	call                     string
	err                      string
}

// ReturnEmpty answers with an empty response message.
func ReturnEmpty() Mock { return Mock{action: "empty", call: "rpc.ReturnEmpty()"} }

// ReturnValue answers with a response holding v.
func ReturnValue(v Values) Mock {
	m := Mock{action: "value", call: "rpc.ReturnValue(...)"}
	if v == nil {
		v = Values{}
	}
	data, err := json.Marshal(v)
	if err != nil {
		m.err = fmt.Sprintf("values do not encode as JSON: %v", err)
	}
	m.value = string(data)
	m.call = "rpc.ReturnValue(" + m.value + ")"
	return m
}

// Fail answers with an error of the given status code, named as rt.Code
// prints it ("Unavailable", "NotFound", ...), and message.
func Fail(code, message string) Mock {
	m := Mock{action: "fail", code: code, msg: message, call: fmt.Sprintf("rpc.Fail(%q, %q)", code, message)}
	if !knownCode(code) {
		m.err = fmt.Sprintf("unknown status code %q", code)
	}
	return m
}

// Force returns m in forced mode: it answers every call, never calling out.
func (m Mock) Force() Mock {
	m.force = true
	m.call += ".Force()"
	return m
}

// Mock sets the method's mock answer. Streams cannot be mocked.
func (b *Builder) Mock(m Mock) *Builder {
	mod := "Mock(" + m.call + ")"
	if m.action == "" {
		mod = "Mock(rpc.Mock{})"
	}
	switch {
	case b.refused("Mock", mod):
		return b
	case m.action == "":
		return b.fail(mod, "use rpc.ReturnEmpty, rpc.ReturnValue or rpc.Fail")
	case m.err != "":
		return b.fail(mod, "%s", m.err)
	case b.desc.Kind == kindOneway && m.action == "value":
		return b.fail(mod, "a oneway method has no response to return")
	}
	b.desc.Mock = &schema.MockPolicy{Force: m.force, Action: m.action, Value: m.value, Code: m.code, Message: m.msg}
	return b
}

// knownCode reports whether s names an rt.Code other than OK; the names are
// gRPC's status codes.
func knownCode(s string) bool {
	switch s {
	case "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
		"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
		"Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable",
		"DataLoss", "Unauthenticated":
		return true
	}
	return false
}
