package otel

import (
	"strconv"

	"github.com/yrpc/yrpc/rt"
)

// numCodes is the number of status codes rt defines (OK through
// Unauthenticated).
const numCodes = int(rt.Unauthenticated) + 1

// statusNames are the codes' names as gRPC spells them; rt's codes are
// gRPC's, numbers and meanings.
var statusNames = [numCodes]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
	"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// StatusName returns the value of the rpc.response.status_code attribute
// for c: gRPC's name of the code ("OK", "DEADLINE_EXCEEDED", "UNAVAILABLE"),
// or its number for a code rt does not define.
func StatusName(c rt.Code) string {
	if int(c) < numCodes {
		return statusNames[c]
	}
	return strconv.Itoa(int(c))
}

// failed reports whether code c marks a call as failed on side s, as the
// gRPC semantic conventions classify codes: every code but OK fails a
// client call; a server call fails only on a code that says the server
// could not do its part (UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED,
// INTERNAL, UNAVAILABLE, DATA_LOSS), not on one that blames the request
// (NOT_FOUND, INVALID_ARGUMENT, ...).
func failed(s side, c rt.Code) bool {
	if c == rt.OK {
		return false
	}
	if s == clientSide {
		return true
	}
	switch c {
	case rt.Unknown, rt.DeadlineExceeded, rt.Unimplemented, rt.Internal, rt.Unavailable, rt.DataLoss:
		return true
	}
	return int(c) >= numCodes
}
