package grpcwire

import (
	"errors"
	"strings"
)

// Content types of gRPC and gRPC-Web requests and responses.
const (
	ContentTypeGRPC = "application/grpc"
	ContentTypeWeb  = "application/grpc-web"
)

// Protocol is a request's protocol, as its content type says.
type Protocol uint8

// Protocols.
const (
	Unsupported Protocol = iota // neither, or a codec other than protobuf
	GRPC                        // application/grpc, application/grpc+proto
	Web                         // application/grpc-web, application/grpc-web+proto
)

// ParseContentType tells the protocol of a request by its content type:
// gRPC or gRPC-Web with the protobuf codec (the "+proto" suffix or none),
// parameters after ';' ignored. Other codecs ("+json") and gRPC-Web's
// base64 text form (application/grpc-web-text) are Unsupported.
func ParseContentType(ct string) Protocol {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = strings.TrimSpace(ct[:i])
	}
	p := GRPC
	rest, ok := cutPrefixFold(ct, ContentTypeWeb)
	if ok {
		p = Web
	} else if rest, ok = cutPrefixFold(ct, ContentTypeGRPC); !ok {
		return Unsupported
	}
	if rest == "" || strings.EqualFold(rest, "+proto") {
		return p
	}
	return Unsupported
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// AppendWebTrailers appends a gRPC-Web trailers frame holding kv
// (flattened key, value pairs; keys lowercase).
func AppendWebTrailers(dst []byte, kv []string) []byte {
	n := 0
	for i := 0; i+1 < len(kv); i += 2 {
		n += len(kv[i]) + 2 + len(kv[i+1]) + 2
	}
	dst = AppendHeader(dst, FlagTrailers, n)
	for i := 0; i+1 < len(kv); i += 2 {
		dst = append(dst, kv[i]...)
		dst = append(dst, ':', ' ')
		dst = append(dst, kv[i+1]...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// errWebTrailers is ParseWebTrailers' error.
var errWebTrailers = errors.New("grpcwire: bad gRPC-Web trailers: want \"key: value\" lines")

// ParseWebTrailers parses the body of a gRPC-Web trailers frame into
// flattened key, value pairs, keys in lowercase and values trimmed. Lines
// end in "\r\n" (a bare "\n" is accepted); an empty line is skipped.
func ParseWebTrailers(b []byte) ([]string, error) {
	var kv []string
	for s := string(b); s != ""; {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		k = strings.ToLower(k)
		if !ok || k == "" || !validFieldName(k) {
			return nil, errWebTrailers
		}
		kv = append(kv, k, strings.Trim(v, " \t"))
	}
	return kv, nil
}

// validFieldName reports whether k is a lowercase HTTP field name of token
// characters.
func validFieldName(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
