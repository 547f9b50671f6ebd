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
	burst  int
	perApp bool
	keyed  *limiter.Keyed
}

func newCallLimiter(rate float64, burst int, perApp bool) *callLimiter {
	if burst < 1 {
		burst = max(1, int(rate))
	}
	return &callLimiter{rate: rate, burst: burst, perApp: perApp,
		keyed: limiter.NewKeyed(limiter.KeyedOptions{Rate: rate, Burst: burst})}
}

func (l *callLimiter) same(rate float64, burst int, perApp bool) bool {
	return l.rate == rate && l.burst == burst && l.perApp == perApp
}

func (l *callLimiter) allow(ip, app string, now time.Time) bool {
	key := ip
	if l.perApp && app != "" {
		key = app
	}
	return l.keyed.Allow(key, now)
}
