package rt_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/yrpc/yrpc/rt"
)

// The schema's client rate limit (rpc.ClientRateLimit, carried in the
// descriptor's MethodPolicy) caps what a client sends of the method, and
// rt.WithMethodRateLimit replaces it at run time (rate 0 lifts it).
func TestClientRateLimitFromSchema(t *testing.T) {
	sd := testDesc
	sd.Methods = slices.Clone(testDesc.Methods)
	sd.Methods[0].Policy.ClientRateLimit = rt.RateLimitPolicy{Rate: 1, Burst: 2}
	for _, tc := range []struct {
		name string
		opts []rt.ClientOption
		ok   int // of 5 calls at once
	}{
		{"schema", nil, 2},
		{"option replaces it", []rt.ClientOption{rt.WithMethodRateLimit("test.Echo/Echo", 1, 3)}, 3},
		{"option lifts it", []rt.ClientOption{rt.WithMethodRateLimit("test.Echo/Echo", 0, 0)}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 1, tc.opts...)
			got := map[rt.Code]int{}
			for range 5 {
				_, err := call(ctxT(t), c.cli, &sd, 0, "x")
				got[rt.CodeOf(err)]++
			}
			want := map[rt.Code]int{rt.OK: tc.ok}
			if tc.ok < 5 {
				want[rt.ResourceExhausted] = 5 - tc.ok
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || c.impls[0].calls.Load() != int64(tc.ok) {
				t.Fatalf("codes %v with %d calls served; want %v", got, c.impls[0].calls.Load(), want)
			}
		})
	}
}

// WithMethodRateLimit's settings that can only be mistakes fail NewClient,
// naming the method.
func TestMethodRateLimitMisuse(t *testing.T) {
	for _, tc := range []struct {
		method      string
		rate        float64
		burst       int
		wantInError string
	}{
		{"Echo", 1, 1, "package.Service/Method"},
		{"/test.Echo/Echo", 1, 1, "package.Service/Method"},
		{"test.Echo/", 1, 1, "package.Service/Method"},
		{"test.Echo/Echo/x", 1, 1, "package.Service/Method"},
		{"test.Echo/Echo", math.NaN(), 1, "rate NaN"},
		{"test.Echo/Echo", -1, 1, "rate -1"},
		{"test.Echo/Echo", math.Inf(1), 1, "rate +Inf"},
		{"test.Echo/Echo", 1, -1, "burst -1"},
	} {
		_, err := rt.NewClient(rt.WithAddrs("127.0.0.1:1"), rt.WithMethodRateLimit(tc.method, tc.rate, tc.burst))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.method)) || !strings.Contains(err.Error(), tc.wantInError) {
			t.Errorf("WithMethodRateLimit(%q, %v, %d): NewClient error %v; want one naming the method and %q", tc.method, tc.rate, tc.burst, err, tc.wantInError)
		}
	}
}

// A rate limit for a method its service does not have (a typo) is
// reported when the client first uses the service.
func TestMethodRateLimitUnknownMethodWarns(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	c := newCluster(t, 1, rt.WithMethodRateLimit("test.Echo/echo", 1, 1),
		rt.WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&logs, &mu}, nil))))
	if _, err := call(ctxT(t), c.cli, &testDesc, 0, "x"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "test.Echo/echo") {
		t.Errorf("no warning naming test.Echo/echo:\n%s", out)
	}
}
