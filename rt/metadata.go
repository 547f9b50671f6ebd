package rt

import (
	"context"
	"strings"
)

// MD is call metadata: key/value pairs flattened as k1, v1, k2, v2, ...
// Keys are compared case-sensitively and are lowercase by convention; keys
// starting with "yrpc-" are reserved for the runtime. The zero value is empty
// and ready to use. An MD is not safe for concurrent mutation.
type MD []string

// Pairs builds an MD from flattened pairs; an odd trailing key gets "".
func Pairs(kv ...string) MD {
	if len(kv)%2 == 1 {
		kv = append(kv, "")
	}
	return MD(kv)
}

// Get returns the first value of key, or "".
func (md MD) Get(key string) string {
	for i := 0; i+1 < len(md); i += 2 {
		if md[i] == key {
			return md[i+1]
		}
	}
	return ""
}

// Values returns every value of key.
func (md MD) Values(key string) []string {
	var vs []string
	for i := 0; i+1 < len(md); i += 2 {
		if md[i] == key {
			vs = append(vs, md[i+1])
		}
	}
	return vs
}

// Append adds a pair, keeping earlier values of key.
func (md *MD) Append(key, value string) { *md = append(*md, key, value) }

// Set replaces every value of key with value.
func (md *MD) Set(key, value string) {
	out := (*md)[:0]
	for i := 0; i+1 < len(*md); i += 2 {
		if (*md)[i] != key {
			out = append(out, (*md)[i], (*md)[i+1])
		}
	}
	*md = append(out, key, value)
}

// Len returns the number of pairs.
func (md MD) Len() int { return len(md) / 2 }

// String formats md as "k=v, k=v" for logs.
func (md MD) String() string {
	var b strings.Builder
	for i := 0; i+1 < len(md); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(md[i])
		b.WriteByte('=')
		b.WriteString(md[i+1])
	}
	return b.String()
}

// Reserved metadata keys.
const (
	// reservedPrefix starts every key reserved for the runtime.
	reservedPrefix = "yrpc-"
	// MDAttempt carries the attempt number (2, 3, ...) of a retried call.
	MDAttempt = "yrpc-attempt"
	// MDApp carries the calling application's name (per-app rate limits).
	MDApp = "yrpc-app"
	// MDGroup and MDVersion carry the group and version a call is for,
	// when not the default: a server refuses calls for a group or version
	// it does not serve (NotFound), as Dubbo keys its exporters.
	MDGroup   = "yrpc-group"
	MDVersion = "yrpc-version"
)

type outgoingKey struct{}

// WithMetadata returns a context whose calls send kv (flattened pairs) as
// request metadata, after any metadata ctx already carries.
func WithMetadata(ctx context.Context, kv ...string) context.Context {
	old, _ := ctx.Value(outgoingKey{}).(MD)
	md := make(MD, 0, len(old)+len(kv)+1)
	md = append(md, old...)
	md = append(md, Pairs(kv...)...)
	return context.WithValue(ctx, outgoingKey{}, md)
}

// OutgoingMetadata returns the request metadata set on ctx by WithMetadata.
func OutgoingMetadata(ctx context.Context) MD {
	md, _ := ctx.Value(outgoingKey{}).(MD)
	return md
}

// appendUnreserved appends to dst the pairs of md whose keys are not the
// runtime's ("yrpc-..."): a handler's response metadata and trailer must
// not speak for the runtime.
func appendUnreserved(dst, md MD) MD {
	for i := 0; i+1 < len(md); i += 2 {
		if !strings.HasPrefix(md[i], reservedPrefix) {
			dst = append(dst, md[i], md[i+1])
		}
	}
	return dst
}
