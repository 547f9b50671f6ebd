package rt_test

import (
	"fmt"
	"slices"
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
