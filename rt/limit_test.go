package rt

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
)

// limitedDesc is a service whose schema limits each client IP to 1 call/s
// with a burst of 3.
var limitedDesc = ServiceDesc{
	Name:   "test.Limited",
	Policy: ServicePolicy{RateLimit: RateLimitPolicy{Rate: 1, Burst: 3}},
	Methods: []MethodDesc{{
		Name: "Get", FullName: "test.Limited/Get", ID: 0x2001,
		NewRequest:  func() Message { return new(copiedMsg) },
		NewResponse: func() Message { return new(copiedMsg) },
		Handle:      func(any, context.Context, Message) (Message, error) { return new(copiedMsg), nil },
	}},
	MethodIndex: func(id uint32) int {
		if id == 0x2001 {
			return 0
		}
		return -1
	},
}

// limitedEntry returns a server's entry of limitedDesc.
func limitedEntry(t *testing.T) (*Server, *serviceEntry) {
	t.Helper()
	s := NewServer(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { s.Close() })
	s.RegisterService(&limitedDesc, struct{}{})
	return s, s.services[len(s.services)-1]
}

// admitted counts the calls of one client IP that se's limit lets through
// at now, out of n.
func admitted(se *serviceEntry, now time.Time, n int) int {
	lim := se.limit.Load()
	if lim == nil {
		return n
	}
	ok := 0
	for range n {
		if lim.allow("192.0.2.1", "", now) {
			ok++
		}
	}
	return ok
}

// A governance rate limit whose rate is not a finite number above 0 —
// `yrpcc ctl limit` refuses them, the Go API (registry.Governor) does not
// — is ignored, as registry.Config says ("overrides the schema's limit
// when Rate > 0"): the schema's limit stays. Before, 0 and negative rates
// lifted the schema's limit and NaN refused every call.
func TestConfigRateLimitNotAboveZeroKeepsTheSchemas(t *testing.T) {
	now := time.Now()
	for _, rate := range []float64{0, -5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		s, se := limitedEntry(t)
		s.applyConfig(se, registry.Config{RateLimit: &registry.RateLimit{Rate: rate, Burst: 100}})
		if got := admitted(se, now, 10); got != 3 {
			t.Errorf("config rate %v: %d of 10 calls admitted at once, want the schema's burst of 3", rate, got)
		}
	}
	// A good rate still overrides the schema's.
	s, se := limitedEntry(t)
	s.applyConfig(se, registry.Config{RateLimit: &registry.RateLimit{Rate: 1, Burst: 5}})
	if got := admitted(se, now, 10); got != 5 {
		t.Errorf("config rate 1 burst 5: %d of 10 calls admitted at once, want 5", got)
	}
}
