package rt

import (
	"errors"
	"iter"
	"strconv"

	"github.com/yrpc/yrpc/rt/codec"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// grpcStatus is err as gRPC answers it: its code (Unknown for errors
// without one), its message and the google.rpc.Status for
// grpc-status-details-bin (nil when the error has no details).
func grpcStatus(err error) (Code, string, []byte) {
	code := CodeOf(err)
	if code == OK || int(code) >= len(codeNames) {
		code = Unknown
	}
	msg := errorMessage(err)
	details := errorDetails(err)
	if len(details) == 0 {
		return code, msg, nil
	}
	st := grpcwire.Status{Code: int32(code), Message: msg, Details: make([]grpcwire.Any, len(details))}
	for i, d := range details {
		st.Details[i] = grpcwire.Any{TypeURL: d.TypeURL, Value: d.Value}
	}
	return code, msg, st.MarshalAppend(nil)
}

// errorDetails are the details of err: an *Error's Details, else for a
// failed Validate a google.rpc.BadRequest naming the field.
func errorDetails(err error) []ErrorDetail {
	var e *Error
	if errors.As(err, &e) && len(e.Details) > 0 {
		return e.Details
	}
	var ve *codec.ValidationError
	if errors.As(err, &ve) {
		v := []grpcwire.FieldViolation{{Field: ve.Field, Description: ve.Reason}}
		return []ErrorDetail{{TypeURL: grpcwire.TypeBadRequest, Value: grpcwire.AppendBadRequest(nil, v)}}
	}
	return nil
}

// outgoingMD yields the pairs of the response metadata md that gRPC
// sends: values of "-bin" keys base64-encoded; keys of the transport's
// own headers, keys that are not valid header names and other keys'
// values that are not printable ASCII left out (a control character would
// make the answer malformed HTTP/2, or be dropped on the way).
func outgoingMD(md MD) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i := 0; i+1 < len(md); i += 2 {
			k, v := md[i], md[i+1]
			if !grpcwire.ValidKey(k) || grpcwire.Reserved(k) {
				continue
			}
			if grpcwire.IsBinary(k) {
				v = grpcwire.EncodeBinary(v)
			} else if !grpcwire.ValidValue(v) {
				continue
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

// appendWebTrailers appends gRPC-Web's trailers frame: the status and md.
func (gc *grpcCall) appendWebTrailers(buf []byte, code Code, msg string, details []byte, md MD) []byte {
	kv := make([]string, 0, 6+len(md))
	kv = append(kv, "grpc-status", strconv.Itoa(int(code)))
	if msg != "" {
		kv = append(kv, "grpc-message", grpcwire.EncodeMessage(msg))
	}
	if details != nil {
		kv = append(kv, "grpc-status-details-bin", grpcwire.EncodeBinary(string(details)))
	}
	for k, v := range outgoingMD(md) {
		kv = append(kv, k, v)
	}
	return grpcwire.AppendWebTrailers(buf, kv)
}
