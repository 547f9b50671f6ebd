package codec

import "errors"

// Sentinel causes of decoding errors; test them with errors.Is.
var (
	ErrTruncated   = errors.New("unexpected end of input")
	ErrOverflow    = errors.New("varint overflows 64 bits")
	ErrWireType    = errors.New("invalid wire type")
	ErrFieldNumber = errors.New("invalid field number")
	ErrGroup       = errors.New("mismatched group")
	ErrDepth       = errors.New("messages nested too deeply")
	ErrRange       = errors.New("value out of range")
	ErrLength      = errors.New("packed length is not a multiple of the element size")
)

// Error is a decoding error: what went wrong (Err, one of the sentinels) in
// which message ("users.User") and field ("name"; "" when the error is in a
// tag or an unknown field). Its zero value is not meaningful; generated code
// makes it with Err.
type Error struct {
	Message string
	Field   string
	Err     error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return "codec: decode " + e.Message + ": " + e.Err.Error()
	}
	return "codec: decode " + e.Message + "." + e.Field + ": " + e.Err.Error()
}

// Unwrap returns the sentinel cause.
func (e *Error) Unwrap() error { return e.Err }

// Err returns the *Error for a negative code from a Consume function or
// Skip, found while decoding field of message. A nested decoding error
// (already an *Error) is not a code: generated code returns it unchanged.
func Err(message, field string, code int) error {
	return &Error{Message: message, Field: field, Err: cause(code)}
}

func cause(code int) error {
	switch code {
	case codeTruncated:
		return ErrTruncated
	case codeOverflow:
		return ErrOverflow
	case codeWireType:
		return ErrWireType
	case codeFieldNumber:
		return ErrFieldNumber
	case codeGroup:
		return ErrGroup
	case codeDepth:
		return ErrDepth
	case codeRange:
		return ErrRange
	case codeLength:
		return ErrLength
	}
	return errors.New("malformed input")
}

// Codes for generated code that detects these conditions itself.
const (
	CodeTruncated = codeTruncated
	CodeDepth     = codeDepth
	CodeRange     = codeRange
	CodeLength    = codeLength
)

// ValidationError reports a field whose value breaks a schema validator.
// Servers answer it with InvalidArgument. Its zero value is not meaningful;
// generated Validate methods make it with Invalid.
type ValidationError struct {
	Message string // "users.User"
	Field   string // "name"
	Reason  string // "must be at most 64 characters"
}

func (e *ValidationError) Error() string {
	return "codec: invalid " + e.Message + "." + e.Field + ": " + e.Reason
}

// Invalid returns a *ValidationError.
func Invalid(message, field, reason string) error {
	return &ValidationError{Message: message, Field: field, Reason: reason}
}
