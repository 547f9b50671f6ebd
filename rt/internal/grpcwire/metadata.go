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

// ValidKey reports whether k can be a gRPC metadata key: lowercase
// letters, digits, '-', '_' and '.'.
func ValidKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// ValidValue reports whether v can be the value of a metadata key that is
// not binary: printable ASCII.
func ValidValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
