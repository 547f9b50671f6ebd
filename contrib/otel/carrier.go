package otel

import (
	"slices"

	"github.com/yrpc/yrpc/rt"
)

// Carrier is a propagation.TextMapCarrier over call metadata: propagators
// read trace context from it on the server and write it on the client.
//
//	c := otel.Carrier(rt.IncomingMetadata(ctx))
//	ctx = propagation.TraceContext{}.Extract(ctx, &c)
//
// Get returns the last value of a key, so that a traceparent appended by an
// inner interceptor wins over one copied in earlier; Set appends (use Keys
// and Get, not the raw pairs, to read it back). The zero value is empty and
// ready to use. A Carrier is not safe for concurrent mutation.
type Carrier rt.MD

// Get returns the last value of key, or "".
func (c *Carrier) Get(key string) string {
	md := *c
	for i := len(md) - 2; i >= 0; i -= 2 {
		if md[i] == key {
			return md[i+1]
		}
	}
	return ""
}

// Set appends the pair key, value.
func (c *Carrier) Set(key, value string) { *c = append(*c, key, value) }

// Keys returns each key once, in order of first appearance.
func (c *Carrier) Keys() []string {
	md := *c
	keys := make([]string, 0, len(md)/2)
	for i := 0; i+1 < len(md); i += 2 {
		if !slices.Contains(keys, md[i]) {
			keys = append(keys, md[i])
		}
	}
	return keys
}
