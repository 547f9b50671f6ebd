package rt_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

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
