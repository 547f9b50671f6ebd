package rt_test

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/registry"
)

// TestTaggedCallsDuringReweighting makes tagged calls while an operator
// changes weights: the client's view of its providers must not be read
// while the registry's update rewrites it (go test -race).
func TestTaggedCallsDuringReweighting(t *testing.T) {
	c := newCluster(t, 3)
	key := registry.Key{Service: testDesc.Name}
	ctx := ctxT(t)
	if _, err := call(ctx, c.cli, &testDesc, 0, "x"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := c.reg.UpdateConfig(context.Background(), key, func(cfg *registry.Config) error {
				if cfg.Instances == nil {
					cfg.Instances = map[string]registry.InstanceConfig{}
				}
				cfg.Instances[c.addr(0)] = registry.InstanceConfig{Weight: 1 + i%50}
				return nil
			}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < 300; i++ {
		if _, err := call(ctx, c.cli, &testDesc, 0, "x", rt.WithTag("zone", "a")); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

// countSource is a rand.Source that counts its draws.
type countSource struct{ n atomic.Int64 }

func (s *countSource) Uint64() uint64 { return uint64(s.n.Add(1)) * 0x9E3779B97F4A7C15 }

// TestEmptyHashKeyIsAKey calls a method with a hash-key field whose value
// is empty: such a call has a key (the empty one) like any other, so
// consistent_hash places it on the ring, the same provider every time,
// and never draws a random provider, whether or not the client made
// keyed calls before.
func TestEmptyHashKeyIsAKey(t *testing.T) {
	src := &countSource{}
	c := newCluster(t, 3, rt.WithBalancer(balance.NewConsistentHash(balance.Options{Source: src})))
	ctx := ctxT(t)
	for i := 0; i < 20; i++ {
		s := ""
		if i%2 == 1 {
			s = "k"
		}
		if _, err := call(ctx, c.cli, &testDesc, 0, s); err != nil {
			t.Fatal(err)
		}
	}
	if n := src.n.Load(); n != 0 {
		t.Errorf("keyed calls drew %d random numbers; want 0 (an empty key field is a key)", n)
	}
	owners := 0
	for _, impl := range c.impls {
		if impl.calls.Load() > 0 {
			owners++
		}
	}
	if owners > 2 {
		t.Errorf("calls with 2 distinct keys went to %d providers", owners)
	}
}

// waitProviders polls the client's view of testDesc until ok accepts it.
func waitProviders(t *testing.T, c *cluster, ok func([]rt.ProviderStatus) bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(c.cli.Providers(&testDesc)); {
		if time.Now().After(deadline) {
			t.Fatalf("providers never reached the expected state: %+v", c.cli.Providers(&testDesc))
		}
		runtime.Gosched()
	}
}

// split makes n calls and returns how many each provider served.
func split(t *testing.T, c *cluster, n int) []int64 {
	t.Helper()
	before := make([]int64, len(c.impls))
	for i, impl := range c.impls {
		before[i] = impl.calls.Load()
	}
	for i := 0; i < n; i++ {
		if _, err := call(ctxT(t), c.cli, &testDesc, 2, "x"); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]int64, len(c.impls))
	for i, impl := range c.impls {
		out[i] = impl.calls.Load() - before[i]
	}
	return out
}

// TestReweightAtRunTime changes a provider's weight through the
// governance config; weighted_round_robin then splits the calls exactly
// in proportion.
func TestReweightAtRunTime(t *testing.T) {
	c := newCluster(t, 3, rt.WithBalancer(balance.NewWeightedRoundRobin(balance.Options{})))
	if got := split(t, c, 300); !slices.Equal(got, []int64{100, 100, 100}) {
		t.Fatalf("equal weights: split %v", got)
	}
	setWeight := func(w int) {
		if err := c.reg.UpdateConfig(context.Background(), registry.Key{Service: testDesc.Name}, func(cfg *registry.Config) error {
			cfg.Instances = map[string]registry.InstanceConfig{c.addr(0): {Weight: w}}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		waitProviders(t, c, func(ps []rt.ProviderStatus) bool { return len(ps) == 3 && ps[0].Weight == cmp.Or(w, 100) })
	}
	setWeight(300)
	if got := split(t, c, 500); !slices.Equal(got, []int64{300, 100, 100}) {
		t.Fatalf("weight 300 vs 100: split %v", got)
	}
	setWeight(0) // removes the override
	if got := split(t, c, 300); !slices.Equal(got, []int64{100, 100, 100}) {
		t.Fatalf("override removed: split %v", got)
	}
}

// TestWarmUpOnTheClientsClock registers a provider that just started: it
// gets weight*uptime/WarmUp of the calls, as the injected clock moves.
func TestWarmUpOnTheClientsClock(t *testing.T) {
	c := newCluster(t, 2, rt.WithBalancer(balance.NewWeightedRoundRobin(balance.Options{})))
	if _, err := call(ctxT(t), c.cli, &testDesc, 2, "x"); err != nil {
		t.Fatal(err)
	}
	if err := c.reg.Register(context.Background(), registry.Endpoint{Key: registry.Key{Service: testDesc.Name}, Role: registry.Provider,
		Addr: c.addr(1), Weight: 100, StartTime: c.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	// Wait for the new start time: at uptime 0 provider 1 has weight 1.
	for deadline := time.Now().Add(5 * time.Second); ; {
		got := split(t, c, 101)
		if slices.Equal(got, []int64{100, 1}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("uptime 0: split %v", got)
		}
	}
	c.clock.Advance(balance.DefaultWarmUp / 4)
	if got := split(t, c, 125); !slices.Equal(got, []int64{100, 25}) {
		t.Fatalf("uptime WarmUp/4: split %v", got)
	}
	c.clock.Advance(balance.DefaultWarmUp / 4)
	if got := split(t, c, 150); !slices.Equal(got, []int64{100, 50}) {
		t.Fatalf("uptime WarmUp/2: split %v", got)
	}
	c.clock.Advance(balance.DefaultWarmUp)
	if got := split(t, c, 200); !slices.Equal(got, []int64{100, 100}) {
		t.Fatalf("warm: split %v", got)
	}
}

// TestAllDrainingNamesTheService drains every provider: a call fails with
// Unavailable, naming the service and why.
func TestAllDrainingNamesTheService(t *testing.T) {
	c := newCluster(t, 2)
	if err := c.reg.UpdateConfig(context.Background(), registry.Key{Service: testDesc.Name}, func(cfg *registry.Config) error {
		cfg.Instances = map[string]registry.InstanceConfig{c.addr(0): {Draining: true}, c.addr(1): {Draining: true}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := call(ctxT(t), c.cli, &testDesc, 0, "x"); err != nil {
		t.Logf("first call: %v", err)
	}
	waitProviders(t, c, func(ps []rt.ProviderStatus) bool { return len(ps) == 2 && ps[0].Draining && ps[1].Draining })
	_, err := call(ctxT(t), c.cli, &testDesc, 0, "x")
	if rt.CodeOf(err) != rt.Unavailable || !strings.Contains(err.Error(), "test.Echo") || !strings.Contains(err.Error(), "draining") {
		t.Fatalf("all draining: %v", err)
	}
	t.Log(err)
}

// TestTagsWithEqualSigns routes by two tags that read the same when
// joined with "=": key "a=b" value "c", and key "a" value "b=c". Each goes
// to its own provider, whichever was asked for first.
func TestTagsWithEqualSigns(t *testing.T) {
	c := newCluster(t, 2)
	key := registry.Key{Service: testDesc.Name}
	for i, tags := range []map[string]string{{"a=b": "c"}, {"a": "b=c"}} {
		if err := c.reg.Register(context.Background(), registry.Endpoint{Key: key, Role: registry.Provider, Addr: c.addr(i), Weight: 100,
			Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := ctxT(t)
	// Wait until the tags reached the client.
	for deadline := time.Now().Add(5 * time.Second); ; {
		before := c.impls[1].calls.Load()
		if _, err := call(ctx, c.cli, &testDesc, 0, "x", rt.WithTag("a", "b=c")); err != nil {
			t.Fatal(err)
		}
		if c.impls[1].calls.Load() > before && c.cli.Providers(&testDesc) != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tags never reached the client")
		}
	}
	// Re-register to get a fresh view whose tag cache is empty, then
	// ask for "a=b"="c" first.
	if err := c.reg.Register(context.Background(), registry.Endpoint{Key: key, Role: registry.Provider, Addr: c.addr(0), Weight: 50,
		Tags: map[string]string{"a=b": "c"}}); err != nil {
		t.Fatal(err)
	}
	waitProviders(t, c, func(ps []rt.ProviderStatus) bool { return len(ps) == 2 && ps[0].Weight == 50 })
	for _, tc := range []struct {
		k, v string
		want int
	}{{"a=b", "c", 0}, {"a", "b=c", 1}} {
		for range 10 {
			before := c.impls[tc.want].calls.Load()
			if _, err := call(ctx, c.cli, &testDesc, 0, "x", rt.WithTag(tc.k, tc.v)); err != nil {
				t.Fatal(err)
			}
			if c.impls[tc.want].calls.Load() == before {
				t.Fatalf("WithTag(%q, %q) did not go to provider %d", tc.k, tc.v, tc.want)
			}
		}
	}
}
