package rt

import (
	"time"

	"github.com/yrpc/yrpc/limiter"
)

// callLimiter is a service's server-side rate limit: a token bucket per
// client IP, or per calling app (the MDApp metadata; callers that send none
// share the bucket of their IP).
type callLimiter struct {
	rate   float64
	burst  int // as configured; see effectiveBurst
	perApp bool
	keyed  *limiter.Keyed
}

func newCallLimiter(rate float64, burst int, perApp bool) *callLimiter {
	return &callLimiter{rate: rate, burst: burst, perApp: perApp,
		keyed: limiter.NewKeyed(limiter.KeyedOptions{Rate: rate, Burst: effectiveBurst(rate, burst)})}
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
	l.keyed.SetLimit(rate, effectiveBurst(rate, burst), now)
	return &callLimiter{rate: rate, burst: burst, perApp: l.perApp, keyed: l.keyed}
}

func (l *callLimiter) allow(ip, app string, now time.Time) bool {
	key := ip
	if l.perApp && app != "" {
		key = app
	}
	return l.keyed.Allow(key, now)
}
