package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

var storeKey = registry.Key{Service: tourrpc.StoreServiceDesc.Name}

func (t *tour) provider(name string) *provider {
	for _, p := range t.providers {
		if p.name == name {
			return p
		}
	}
	panic("tour: no provider " + name)
}

// status returns what the consumer knows of the provider named name.
func (t *tour) status(name string) (rt.ProviderStatus, bool) {
	addr := t.provider(name).addr
	for _, ps := range t.cli.Providers(&tourrpc.StoreServiceDesc) {
		if ps.Addr == addr {
			return ps, true
		}
	}
	return rt.ProviderStatus{}, false
}

func (t *tour) govern(ctx context.Context, fn func(*registry.Config)) error {
	return t.reg.governor().UpdateConfig(ctx, storeKey, func(c *registry.Config) error {
		fn(c)
		return nil
	})
}

// placement shows which provider serves which key on the hash ring, and
// that the mapping is stable.
func (t *tour) placement(ctx context.Context) error {
	t.section("1. Consistent-hash placement (Store.Get hashes on its key's id)")
	if err := t.govern(ctx, func(c *registry.Config) { *c = registry.Config{} }); err != nil {
		return err
	}
	// Wait until the consumer sees all three providers.
	if _, ok := waitFor(ctx, 10*time.Second, func() bool {
		_, err := t.store.Get(ctx, &tourrpc.Key{ID: 1})
		return err == nil && len(t.cli.Providers(&tourrpc.StoreServiceDesc)) == 3
	}); !ok {
		return fmt.Errorf("the consumer never saw three providers")
	}
	first := map[int64]string{}
	var calls, errs int64
	var line strings.Builder
	for id := int64(1); id <= 12; id++ {
		e, err := t.store.Get(ctx, &tourrpc.Key{ID: id})
		calls++
		if err != nil {
			errs++
			continue
		}
		first[id] = e.ServedBy
		fmt.Fprintf(&line, " %2d→%s", id, e.ServedBy)
		if id%6 == 0 {
			t.printf("  key→provider:%s\n", line.String())
			line.Reset()
		}
	}
	stable := true
	for id := int64(1); id <= 12; id++ {
		e, err := t.store.Get(ctx, &tourrpc.Key{ID: id})
		calls++
		if err != nil {
			errs++
		} else if e.ServedBy != first[id] {
			stable = false
		}
	}
	used := map[string]bool{}
	for _, p := range first {
		used[p] = true
	}
	t.record(result{section: "consistent-hash placement", calls: calls, errors: errs, ok: errs == 0 && stable && len(used) > 1,
		note: fmt.Sprintf("12 keys spread over %d providers; asked again, every key went to the same provider: %v", len(used), stable)})
	return nil
}

// killProvider crashes p2 under load: its breaker opens, calls fail over,
// no caller sees an error.
func (t *tour) killProvider(ctx context.Context) error {
	t.section("2. Provider p2 killed under load (breaker, failover retries)")
	l := startLoad(ctx, t.store, 4)
	stop := t.progress(ctx, l)
	time.Sleep(500 * time.Millisecond)
	t.provider("p2").crash()
	openAfter, opened := waitFor(ctx, 5*time.Second, func() bool {
		ps, ok := t.status("p2")
		return ok && ps.Breaker == "open"
	})
	time.Sleep(time.Second)
	l.stop()
	stop()
	before := l.servedBy("p2")
	note := fmt.Sprintf("p2's breaker opened %v after the kill; %d calls, %d served by p1 and p3 after failover",
		openAfter.Round(time.Millisecond), l.calls(), l.ok.Load()-before)
	if !opened {
		note = "p2's breaker never opened"
	}
	if e, _ := l.lastErr.Load().(string); e != "" {
		note += "; last caller error: " + e
	}
	t.record(result{section: "provider killed", calls: l.calls(), errors: l.errs.Load(), ok: opened && l.errs.Load() == 0, note: note})
	// Its registry session expires: consumers drop it.
	t.provider("p2").expire()
	return nil
}

// rateLimit sets a per-client-IP limit through the governance config and
// floods the providers.
func (t *tour) rateLimit(ctx context.Context) error {
	t.section("3. Rate limit set at run time: 100 calls/s, burst 10, per client IP, per provider")
	if err := t.govern(ctx, func(c *registry.Config) { c.RateLimit = &registry.RateLimit{Rate: 100, Burst: 10} }); err != nil {
		return err
	}
	if _, ok := waitFor(ctx, 5*time.Second, func() bool {
		var err error
		for range 50 {
			if _, err = t.store.Get(ctx, &tourrpc.Key{ID: 7}); err != nil {
				break
			}
		}
		return rt.CodeOf(err) == rt.ResourceExhausted
	}); !ok {
		return fmt.Errorf("the rate limit never applied")
	}
	time.Sleep(100 * time.Millisecond) // let the buckets refill
	l := startLoad(ctx, t.store, 4)
	stop := t.progress(ctx, l)
	time.Sleep(time.Second)
	l.stop()
	stop()
	secs := time.Since(l.start).Seconds()
	ok := l.ok.Load()
	// Two providers left, each allowing 100/s + a burst of 10 to this IP.
	limitOK := l.limited.Load() > 0 && float64(ok) <= 2*(100*secs+10)*1.2
	t.record(result{section: "rate limiting", calls: l.calls(), errors: l.errs.Load(), ok: limitOK && l.errs.Load() == 0,
		note: fmt.Sprintf("%.0f calls/s accepted by 2 providers, %d refused with ResourceExhausted", float64(ok)/secs, l.limited.Load())})
	return t.govern(ctx, func(c *registry.Config) { c.RateLimit = nil })
}

// forcedMock switches a forced mock on and off at run time.
func (t *tour) forcedMock(ctx context.Context) error {
	t.section("4. Forced mock on Store.Get, switched on and off at run time")
	value := (&tourrpc.Entry{Value: "maintenance", ServedBy: "mock"}).MarshalAppend(nil)
	if err := t.govern(ctx, func(c *registry.Config) {
		c.Mocks = map[string]registry.MockConfig{"Get": {Force: true, Action: "value", Value: value, Expires: time.Now().Add(time.Minute)}}
	}); err != nil {
		return err
	}
	isMocked := func() bool {
		e, err := t.store.Get(ctx, &tourrpc.Key{ID: 3})
		return err == nil && e.ServedBy == "mock"
	}
	on, okOn := waitFor(ctx, 5*time.Second, isMocked)
	l := startLoad(ctx, t.store, 2)
	time.Sleep(300 * time.Millisecond)
	l.stop()
	if err := t.govern(ctx, func(c *registry.Config) { c.Mocks = nil }); err != nil {
		return err
	}
	off, okOff := waitFor(ctx, 5*time.Second, func() bool { return !isMocked() })
	t.printf("  %s\n", strings.TrimSpace(l.line()))
	allMocked := l.mocked.Load() > 0 && l.ok.Load() == 0
	t.record(result{section: "forced mock on/off", calls: l.calls(), errors: l.errs.Load(), ok: okOn && okOff && allMocked && l.errs.Load() == 0,
		note: fmt.Sprintf("mock took effect in %v; %d calls answered by it, none reached a provider; off again in %v",
			on.Round(time.Millisecond), l.mocked.Load(), off.Round(time.Millisecond))})
	return nil
}

// drain marks p1 draining: consumers stop sending it calls.
func (t *tour) drain(ctx context.Context) error {
	t.section("5. Provider p1 drained through the governance config")
	p1 := t.provider("p1")
	if err := t.govern(ctx, func(c *registry.Config) {
		c.Instances = map[string]registry.InstanceConfig{p1.addr: {Draining: true}}
	}); err != nil {
		return err
	}
	took, seen := waitFor(ctx, 5*time.Second, func() bool {
		ps, ok := t.status("p1")
		return ok && ps.Draining
	})
	l := startLoad(ctx, t.store, 4)
	stop := t.progress(ctx, l)
	time.Sleep(time.Second)
	l.stop()
	stop()
	got := l.servedBy("p1")
	t.record(result{section: "draining provider", calls: l.calls(), errors: l.errs.Load(), ok: seen && took < time.Second && got == 0 && l.errs.Load() == 0,
		note: fmt.Sprintf("the consumer saw the drain after %v; p1 then served %d of %d calls", took.Round(time.Millisecond), got, l.calls())})
	return t.govern(ctx, func(c *registry.Config) { c.Instances = nil })
}

// gracefulShutdown stops p3 gracefully under load: no caller sees an error.
func (t *tour) gracefulShutdown(ctx context.Context) error {
	t.section("7. Provider p3 shut down gracefully under load")
	if err := t.undrained(ctx, "p1"); err != nil {
		return err
	}
	l := startLoad(ctx, t.store, 4)
	stop := t.progress(ctx, l)
	time.Sleep(300 * time.Millisecond)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	start := time.Now()
	err := t.provider("p3").srv.Shutdown(sctx)
	cancel()
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	l.stop()
	stop()
	note := fmt.Sprintf("shutdown took %v (deregister, wait, GOAWAY, drain); p1 served the rest", took.Round(time.Millisecond))
	if err != nil {
		note = "shutdown: " + err.Error()
	}
	t.record(result{section: "graceful shutdown", calls: l.calls(), errors: l.errs.Load(), ok: err == nil && l.errs.Load() == 0, note: note})
	return nil
}

// undrained waits until the consumer sees that the provider named name is
// no longer draining.
func (t *tour) undrained(ctx context.Context, name string) error {
	if _, ok := waitFor(ctx, 5*time.Second, func() bool {
		ps, ok := t.status(name)
		return ok && !ps.Draining
	}); !ok {
		return fmt.Errorf("%s never came back from draining", name)
	}
	return nil
}
