package grpcwire

import (
	"encoding/base64"
	"strings"
)

// BinarySuffix ends the keys of metadata whose values are bytes, sent in
// base64.
const BinarySuffix = "-bin"

// IsBinary reports whether key names binary metadata.
func IsBinary(key string) bool { return strings.HasSuffix(key, BinarySuffix) }

// EncodeBinary encodes a binary metadata value: base64 without padding, as
// gRPC implementations send it.
func EncodeBinary(v string) string { return base64.RawStdEncoding.EncodeToString([]byte(v)) }

// DecodeBinary decodes a binary metadata value, padded or not (receivers
// must accept both).
func DecodeBinary(s string) (string, error) {
	enc := base64.RawStdEncoding
	if strings.HasSuffix(s, "=") {
		enc = base64.StdEncoding
	}
	b, err := enc.DecodeString(s)
	return string(b), err
}

// Reserved reports whether the lowercase header key belongs to the
// transport (HTTP/2, gRPC's own headers) rather than to the call's
// metadata.
func Reserved(key string) bool {
	switch key {
	case "content-type", "te", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding",
		"grpc-status", "grpc-message", "grpc-status-details-bin",
		"content-length", "connection", "transfer-encoding", "trailer", "host",
		"accept-encoding", "keep-alive", "upgrade", "proxy-connection", "x-grpc-web":
		return true
	}
	return strings.HasPrefix(key, ":")
}
