package rt

import (
	"context"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
)

// Attempt is one try of a client call or stream on one provider, as
// OnAttempt reports it once the try has ended.
type Attempt struct {
	// N numbers the call's tries from 1; a retry, a hedge or a fork is
	// 2, 3, ...
	N int
	// Addr is the provider's address as the registry (or WithAddrs)
	// lists it: "host:port", or with its scheme for a gRPC provider
	// ("grpc://host:port", "grpcs://host:port").
	Addr string
	// Protocol is what the try went over: ProtocolYRPC, or ProtocolGRPC
	// for a provider that answers gRPC only.
	Protocol string
	// Err is how the try ended: nil when it succeeded, else an error with
	// a Code (CodeOf), as the call would have returned it; an error the
	// provider answered (NotFound, ...) is a try's end too.
	Err error
	// Start is when the try started and Duration how long it took, by the
	// client's clock (WithClock).
	Start    time.Time
	Duration time.Duration
}

// OnAttempt asks the call or stream that ctx carries, a client
// interceptor's context (or one derived from it), to call f after each of
// its tries on a provider: every try the client's Observer counts
// (Event.Attempt > 0), failed or not, a hedge's or a fork's losers
// included. A call answered by a mock, or that found no provider, makes
// no try. Several interceptors may each give one, before they call next;
// they run in the order given. f must be quick and safe for concurrent
// use: a hedged or forked call's tries end on goroutines of their own,
// and a stream's on its connection's.
//
// A unary call's tries are all reported before the interceptor's next
// returns. A stream's tries that failed to open are reported before next
// returns, and the one that opened when the stream ends: before RecvMsg
// returns its end (a close, an error, the context's end), before SendMsg
// returns an error that the context's end caused, and before the
// stream's Context ends.
//
// OnAttempt reports false, and f is never called, when ctx carries no
// call or stream of an rt.Client (outside an interceptor).
func OnAttempt(ctx context.Context, f func(Attempt)) bool {
	var slot *func(Attempt)
	switch v := ctx.Value(callKey{}).(type) {
	case *call:
		slot = &v.onAttempt
	case *streamHooks:
		slot = &v.onAttempt
	}
	if slot == nil || f == nil {
		return false
	}
	if prev := *slot; prev != nil {
		*slot = func(a Attempt) { prev(a); f(a) }
	} else {
		*slot = f
	}
	return true
}

// streamHooks is what a stream's interceptors ask of it before they open
// it; NewStream puts it in their context under callKey, where a unary
// call's interceptors find their call.
type streamHooks struct {
	onAttempt func(Attempt)
}

// report gives the ended attempt a to the call's OnAttempt functions.
func (a *attempt) report(err error) {
	a.k.onAttempt(Attempt{N: a.n, Addr: a.ep.addr, Protocol: a.ep.protocol(), Err: err, Start: a.start, Duration: a.end.Sub(a.start)})
}

// protocol returns what the endpoint is called over: ProtocolGRPC for a
// grpc:// or grpcs:// target, else ProtocolYRPC.
func (ep *endpoint) protocol() string {
	if strings.HasPrefix(ep.target, registry.SchemeGRPC) || strings.HasPrefix(ep.target, registry.SchemeGRPCS) {
		return ProtocolGRPC
	}
	return ProtocolYRPC
}
