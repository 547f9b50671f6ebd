package rt

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"math"
	"runtime"
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
		if lim.allow("192.0.2.1", nil, nil, now) {
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
	// So is one with a negative burst (registry.RateLimit.Check).
	s, se := limitedEntry(t)
	s.applyConfig(se, registry.Config{RateLimit: &registry.RateLimit{Rate: 100, Burst: -1}})
	if got := admitted(se, now, 10); got != 3 {
		t.Errorf("config burst -1: %d of 10 calls admitted at once, want the schema's burst of 3", got)
	}
	// A good rate still overrides the schema's.
	s, se = limitedEntry(t)
	s.applyConfig(se, registry.Config{RateLimit: &registry.RateLimit{Rate: 1, Burst: 5}})
	if got := admitted(se, now, 10); got != 5 {
		t.Errorf("config rate 1 burst 5: %d of 10 calls admitted at once, want 5", got)
	}
}

// Changing a service's limit at run time keeps every client's bucket, as
// limiter.Keyed.SetLimit does: an operator who tunes the limit of a
// flooded service does not hand every client a fresh burst, and a config
// snapshot that does not change the limit (a provider joins, an instance
// is drained) changes nothing — also with a burst of 0, which means a
// second's worth of calls. Before, every change, and with burst 0 every
// snapshot, made a new limiter with full buckets.
func TestConfigRateLimitChangeKeepsBuckets(t *testing.T) {
	now := time.Now()
	s, se := limitedEntry(t)
	s.applyConfig(se, registry.Config{RateLimit: &registry.RateLimit{Rate: 1, Burst: 3}})
	if got := admitted(se, now, 10); got != 3 {
		t.Fatalf("burst 3: %d of 10 calls admitted, want 3", got)
	}
	// 3 tokens missing of 4: one left.
	s.applyConfig(se, registry.Config{RateLimit: &registry.RateLimit{Rate: 1, Burst: 4}})
	if got := admitted(se, now, 10); got != 1 {
		t.Fatalf("after raising the burst to 4: %d of 10 calls admitted, want 1", got)
	}

	s, se = limitedEntry(t)
	cfg := registry.Config{RateLimit: &registry.RateLimit{Rate: 2, Burst: 0}}
	s.applyConfig(se, cfg)
	if got := admitted(se, now, 10); got != 2 {
		t.Fatalf("rate 2, burst 0: %d of 10 calls admitted, want 2", got)
	}
	cfg.Instances = map[string]registry.InstanceConfig{"10.0.0.1:7001": {Draining: true}}
	s.applyConfig(se, cfg)
	if got := admitted(se, now, 10); got != 0 {
		t.Fatalf("after a snapshot with the same limit: %d of 10 calls admitted, want 0", got)
	}
}

// A per-app limit without authentication keys on the app names clients
// claim; a client sending a fresh name per call must not grow the server's
// memory without bound. Before, the table kept 65536 names of any length
// (up to the 16 KiB of metadata): tens of megabytes per limited service
// here, a gigabyte at worst.
func TestPerAppLimitClaimsBounded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls int
		size  int // bytes per name
	}{
		{"short names", 60_000, 120},
		{"long names", 20_000, 2048},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := newCallLimiter(1, 1, true)
			now := time.Unix(1_700_000_000, 0)
			buf := make([]byte, tc.size)
			before := heapInUse()
			for i := range tc.calls {
				// A fresh name per call, in a fresh string each time.
				binary.BigEndian.PutUint64(buf, uint64(i))
				lim.allow("192.0.2.1", nil, MD{MDApp, string(buf)}, now)
			}
			grown := heapInUse() - before
			runtime.KeepAlive(lim)
			if grown > 4<<20 {
				t.Fatalf("%d claimed app names of %d bytes grew the heap by %.1f MiB, want at most 4", tc.calls, tc.size, float64(grown)/(1<<20))
			}
			t.Logf("heap grew %.2f MiB", float64(grown)/(1<<20))
		})
	}
}

// heapInUse returns the bytes of live heap objects after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// A per-app limit's buckets: a principal's, a claimed app's and an IP's are
// kept apart, so no claim drains an identity's or an IP's bucket; a name
// too long to key on counts against the client's IP.
func TestPerAppLimitKeys(t *testing.T) {
	const ip, id = "192.0.2.1", "spiffe://example.org/A"
	long := string(make([]byte, maxAppKeyLen+1))
	for _, tc := range []struct {
		name           string
		drainP, drainA string // the principal and app of the call that drains a bucket
		principal, app string // those of the next call
		want           bool
	}{
		{"same principal, another app", id, "a", id, "b", false},
		{"claim of the principal's name", id, "", "", id, true},
		{"principal named as a drained claim", "", id, id, "", true},
		{"claim of the IP", "", "", "", ip, true},
		{"same claim", "", "a", "", "a", false},
		{"too long a claim is the IP's", "", "", "", long, false},
		{"no claim is the IP's", "", long, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := newCallLimiter(1, 1, true)
			now := time.Unix(1_700_000_000, 0)
			if !lim.allowAs(ip, tc.drainP, MD{MDApp, tc.drainA}, now) {
				t.Fatal("the first call was refused")
			}
			if got := lim.allowAs(ip, tc.principal, MD{MDApp, tc.app}, now); got != tc.want {
				t.Fatalf("next call allowed = %v, want %v", got, tc.want)
			}
		})
	}
}
