package rt_test

import (
	"context"
	"sync"
	"testing"

	"github.com/yrpc/yrpc/rt"
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
