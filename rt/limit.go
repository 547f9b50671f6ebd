package rt

import (
	"time"

	"github.com/yrpc/yrpc/limiter"
	"github.com/yrpc/yrpc/rt/internal/conn"
)

// Bounds of a per-app limit's table of claimed app names (see callLimiter):
// a client may claim any name, so the names it can make the server hold
// are bounded in number and in length.
const (
	// maxAppKeys is how many claimed app names a per-app limit tracks;
	// beyond it a new name evicts an idle or rarely seen one
	// (limiter.Keyed).
	maxAppKeys = 4096
	// maxAppKeyLen is the longest app name a per-app limit keys on: a
	// longer claim counts against its client's IP.
	maxAppKeyLen = 128
)

// callLimiter is a service's server-side rate limit: a token bucket per
// client IP, or, per app, a token bucket per caller:
//
//   - the call's authenticated principal — the verified client
//     certificate's SPIFFE ID or common name, or what the server's
//     Authenticator returned — when it has one, whatever app it claims;
//   - else the app it claims (the MDApp metadata, which the client sets
//     with WithApp): a claim, which a client may change at will;
//   - else its IP, as are claims longer than maxAppKeyLen bytes.
//
// Each kind of key has its own table, so that no claim can share the
// bucket of an identity or an IP. Every table is bounded (limiter.Keyed's
// MaxKeys; maxAppKeys for claimed names), so random names cannot grow the
// server's memory.
type callLimiter struct {
	rate   float64
	burst  int // as configured; see effectiveBurst
	perApp bool
	ips    *limiter.Keyed
	ids    *limiter.Keyed // principals; nil unless perApp
	apps   *limiter.Keyed // claimed app names; nil unless perApp
}

func newCallLimiter(rate float64, burst int, perApp bool) *callLimiter {
	o := limiter.KeyedOptions{Rate: rate, Burst: effectiveBurst(rate, burst)}
	l := &callLimiter{rate: rate, burst: burst, perApp: perApp, ips: limiter.NewKeyed(o)}
	if perApp {
		l.ids = limiter.NewKeyed(o)
		o.MaxKeys = maxAppKeys
		l.apps = limiter.NewKeyed(o)
	}
	return l
}

// effectiveBurst is the bucket size of a limit configured with burst: a
// burst below 1 means a second's worth of calls (at least 1).
func effectiveBurst(rate float64, burst int) int {
	if burst < 1 {
		return max(1, int(rate))
	}
	return burst
}

// same reports whether l is the limit configured with rate, burst and
// perApp.
func (l *callLimiter) same(rate float64, burst int, perApp bool) bool {
	return l.rate == rate && l.burst == burst && l.perApp == perApp
}

// withLimit returns l with a new rate and burst from now on, keeping every
// client's bucket and the tokens it is missing (limiter.Keyed.SetLimit):
// tuning the limit hands no one a fresh burst. l must not be used after.
func (l *callLimiter) withLimit(rate float64, burst int, now time.Time) *callLimiter {
	for _, k := range []*limiter.Keyed{l.ips, l.ids, l.apps} {
		if k != nil {
			k.SetLimit(rate, effectiveBurst(rate, burst), now)
		}
	}
	return &callLimiter{rate: rate, burst: burst, perApp: l.perApp, ips: l.ips, ids: l.ids, apps: l.apps}
}

// afterAuth reports whether l is checked once the call is authenticated
// (authorize, with allowAs) instead of when it arrives (admission, with
// allow): a per-app limit on a server whose Authenticator gives the
// principal it keys on.
func (l *callLimiter) afterAuth(auth Authenticator) bool {
	return l.perApp && auth != nil
}

// allow reports whether a call from a client at ip, connected as p, with
// request metadata md may run at now, and takes a token if so. A per-app
// limit keys it on p's certificate identity (see defaultPrincipal).
func (l *callLimiter) allow(ip string, p *Peer, md MD, now time.Time) bool {
	if !l.perApp {
		return l.ips.Allow(ip, now)
	}
	principal := ""
	if p != nil {
		principal = defaultPrincipal(p)
	}
	return l.allowAs(ip, principal, md, now)
}

// allowAs is a per-app limit's allow for a call whose principal is known
// ("" for none).
func (l *callLimiter) allowAs(ip, principal string, md MD, now time.Time) bool {
	if principal != "" {
		return l.ids.Allow(principal, now)
	}
	if app := md.Get(MDApp); app != "" && len(app) <= maxAppKeyLen {
		return l.apps.Allow(app, now)
	}
	return l.ips.Allow(ip, now)
}

// rateLimited is the refusal of a call over its service's rate limit.
func rateLimited(method string) *Error {
	return &Error{Code: ResourceExhausted, Message: method + ": rate limit exceeded"}
}

// refusedAfterAuth is rateLimited for a call that its limit refused once
// authenticated (see callLimiter.afterAuth): its handler context's
// response metadata marks it refused, as admission's refusals are, so that
// the client knows it did not run and may try another provider.
func refusedAfterAuth(ctx *callCtx, method string) *Error {
	ctx.mu.Lock()
	ctx.respMD = append(ctx.respMD, conn.MDRefused, "1")
	ctx.mu.Unlock()
	return rateLimited(method)
}
