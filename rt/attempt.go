package rt

import (
	"context"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
)

// Attempt is one try of a unary client call on one provider, as OnAttempt
// reports it once the try has ended.
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

// OnAttempt asks the unary call that ctx carries, a client interceptor's
// context (or one derived from it), to call f after each of its tries on a
// provider: every try the client's Observer counts (Event.Attempt > 0),
// failed or not, a hedge's or a fork's losers included. A call answered
// by a mock, or that found no provider, makes no try. f runs on the
// call's path before the interceptor's next returns, so it must be quick;
// a hedged or forked call's tries end on goroutines of their own, so f
// must be safe for concurrent use. Several interceptors may each give
// one; they run in the order given. OnAttempt reports false, and f is
// never called, when ctx carries no call of an rt.Client: outside an
// interceptor, or in a stream interceptor (streams report their tries to
// the Observer only).
func OnAttempt(ctx context.Context, f func(Attempt)) bool {
	k, _ := ctx.Value(callKey{}).(*call)
	if k == nil || f == nil {
		return false
	}
	if prev := k.onAttempt; prev != nil {
		k.onAttempt = func(a Attempt) { prev(a); f(a) }
	} else {
		k.onAttempt = f
	}
	return true
}

// report gives the ended attempt a to the call's OnAttempt functions.
func (a *attempt) report(err error) {
	p := ProtocolYRPC
	if strings.HasPrefix(a.ep.target, registry.SchemeGRPC) || strings.HasPrefix(a.ep.target, registry.SchemeGRPCS) {
		p = ProtocolGRPC
	}
	a.k.onAttempt(Attempt{N: a.n, Addr: a.ep.addr, Protocol: p, Err: err, Start: a.start, Duration: a.end.Sub(a.start)})
}
