package rpc

import (
	"fmt"
	"slices"
)

// The kinds of method, as gen.MethodKind names them.
const (
	kindUnary        = "unary"
	kindOneway       = "oneway"
	kindServerStream = "server_stream"
	kindClientStream = "client_stream"
	kindBidiStream   = "bidi_stream"
)

// kinds names each kind's constructor and how errors call a method of it.
var kinds = map[string]struct{ ctor, noun string }{
	kindUnary:        {"rpc.Unary", "a unary method"},
	kindOneway:       {"rpc.Oneway", "a oneway method"},
	kindServerStream: {"rpc.ServerStream", "a server stream"},
	kindClientStream: {"rpc.ClientStream", "a client stream"},
	kindBidiStream:   {"rpc.BidiStream", "a bidi stream"},
}

var (
	calls   = []string{kindUnary, kindOneway}
	streams = []string{kindServerStream, kindClientStream, kindBidiStream}
	// sending are the kinds whose client streams its requests: they are
	// not kept once sent, so such a stream is never retried, and its
	// instance is picked before any request exists.
	sending = []string{kindClientStream, kindBidiStream}
)

// refusals are the modifiers that some kinds of method do not take: the
// kinds, and why, after the kind's noun. gen.Check applies the same rules
// to specs built in memory.
var refusals = map[string]struct {
	kinds []string
	why   string
}{
	"Idempotent": {sending, "is never retried, so it has no idempotency to declare"},
	"TryTimeout": {streams, "has no tries to bound: Timeout bounds the whole stream"},
	"Retry":      {sending, "cannot be retried: its requests are not kept once sent (a server stream can, until its first response)"},
	"HashKey":    {sending, "picks its instance before it has a request to hash; pass rt.WithHashKey when opening it"},
	"Hedge":      {streams, "cannot be hedged"},
	"FaultMode":  {streams, "ends with its first error: fault modes apply to unary and oneway methods"},
	"Mock":       {streams, "cannot be mocked"},
	"MaxMessageSize": {calls,
		"has no message size limit of its own: its messages are bounded by the frame size (rt.WithMaxFrameSize)"},
}

// refused fails mod, a call of modifier, and reports true when the
// method's kind does not take that modifier.
func (b *Builder) refused(modifier, mod string) bool {
	r := refusals[modifier]
	if !slices.Contains(r.kinds, b.desc.Kind) {
		return false
	}
	b.fail(mod, "%s %s", kinds[b.desc.Kind].noun, r.why)
	return true
}

// ServerStream declares a method whose client sends one req message and
// receives a stream of resp messages, e.g. a feed or a watch. Its policies:
// Timeout bounds the whole stream; Retry (with Idempotent, Backoff and
// Jitter) retries it on another instance only until its first response
// message reaches the caller; HashKey hashes the one request;
// MaxMessageSize limits each message.
func ServerStream(name string, req, resp any) *Builder {
	return newBuilder(kindServerStream, name, req, resp)
}

// ClientStream declares a method whose client sends a stream of req
// messages and receives one resp message when it closes its side, e.g. an
// upload. Timeout bounds the whole stream and MaxMessageSize limits each
// message. It is never retried, its requests being gone once sent, and
// takes no HashKey: its instance is picked when it opens, before any
// request exists (pass rt.WithHashKey per call instead).
func ClientStream(name string, req, resp any) *Builder {
	return newBuilder(kindClientStream, name, req, resp)
}

// BidiStream declares a method whose client and server each send a stream
// of messages, req one way and resp the other, independently, e.g. a chat.
// It takes the policies of a client stream: Timeout and MaxMessageSize.
func BidiStream(name string, req, resp any) *Builder {
	return newBuilder(kindBidiStream, name, req, resp)
}

// MaxMessageSize limits each message of a stream, request or response, to
// n encoded bytes (n >= 1); a larger one fails the stream with
// ResourceExhausted. It applies to streams only: the messages of unary
// and oneway calls are bounded by the frame size.
func (b *Builder) MaxMessageSize(n int) *Builder {
	mod := fmt.Sprintf("MaxMessageSize(%d)", n)
	switch {
	case b.refused("MaxMessageSize", mod):
		return b
	case n < 1 || n > maxMessageSize:
		return b.fail(mod, "size must be in [1, %d]", maxMessageSize)
	}
	b.desc.MaxMessageSize = n
	return b
}

// maxMessageSize is the largest MaxMessageSize: protobuf's limit on the
// size of a message, 2 GiB - 1.
const maxMessageSize = 1<<31 - 1
