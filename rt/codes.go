package rt

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Code is a call's status code. The set and the numbers are gRPC's.
type Code uint8

// Status codes.
const (
	OK                 Code = 0
	Canceled           Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	DeadlineExceeded   Code = 4
	NotFound           Code = 5
	AlreadyExists      Code = 6
	PermissionDenied   Code = 7
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	OutOfRange         Code = 11
	Unimplemented      Code = 12
	Internal           Code = 13
	Unavailable        Code = 14
	DataLoss           Code = 15
	Unauthenticated    Code = 16
)

var codeNames = [...]string{
	"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded",
	"NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted",
	"FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
	"Internal", "Unavailable", "DataLoss", "Unauthenticated",
}

// String returns the code's name, e.g. "Unavailable".
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// ParseCode returns the code named s (as String prints it).
func ParseCode(s string) (Code, error) {
	for i, n := range codeNames {
		if n == s {
			return Code(i), nil
		}
	}
	return Unknown, fmt.Errorf("rt: unknown status code %q", s)
}

// Error is an error with a status code. Errors from handlers reach the
// caller as an *Error with Remote set.
type Error struct {
	Code    Code
	Message string
	// Remote reports that the error came over the wire from the peer.
	Remote bool
	// Cause is the local error behind it, if any (never sent on the wire).
	Cause error
	// Details are structured details, as google.rpc.Status carries them:
	// messages with their type URLs, e.g. a google.rpc.BadRequest or a
	// google.rpc.RetryInfo encoded with package rt/codec's primitives.
	// gRPC callers read them from grpc-status-details-bin. nil: none
	// (Validate's failures then carry a google.rpc.BadRequest naming the
	// field, see WithGRPC).
	Details []ErrorDetail
}

// ErrorDetail is one detail of an Error: a google.protobuf.Any.
type ErrorDetail struct {
	// TypeURL is "type.googleapis.com/" and the message's full name,
	// e.g. "type.googleapis.com/google.rpc.BadRequest".
	TypeURL string
	// Value is the message's protobuf encoding.
	Value []byte
}

// Errorf returns an *Error with code c and a formatted message.
func Errorf(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	origin := ""
	if e.Remote {
		origin = " (remote)"
	}
	if e.Message == "" {
		return "rt: " + e.Code.String() + origin
	}
	return "rt: " + e.Code.String() + origin + ": " + e.Message
}

// Unwrap returns the local cause.
func (e *Error) Unwrap() error { return e.Cause }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, rt.ErrUnavailable) matches any Unavailable error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Sentinels for errors.Is; they match any error of their code.
var (
	ErrCanceled          = &Error{Code: Canceled}
	ErrDeadlineExceeded  = &Error{Code: DeadlineExceeded}
	ErrResourceExhausted = &Error{Code: ResourceExhausted}
	ErrUnimplemented     = &Error{Code: Unimplemented}
	ErrUnavailable       = &Error{Code: Unavailable}
	ErrInternal          = &Error{Code: Internal}
)

// CodeOf returns the code of err: OK for nil, the code of an *Error in its
// chain, Canceled or DeadlineExceeded for the context errors, else Unknown.
func CodeOf(err error) Code {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return DeadlineExceeded
	}
	return Unknown
}

// IsRemote reports whether err came over the wire from the peer.
func IsRemote(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Remote
}
