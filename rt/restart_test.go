package rt_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// crashedRegistry is a process's registry handle whose deregistration
// never arrives, as when the process crashed: its entry stays listed, as
// a ZooKeeper ephemeral node stays until the session expires (and as
// zkreg keeps the only provider listed for its EmptyGrace).
type crashedRegistry struct{ registry.Registry }

func (crashedRegistry) Deregister(context.Context, registry.Endpoint) error { return nil }

// restartProvider is one provider process on a fixed loopback address.
type restartProvider struct {
	srv  *rt.Server
	done chan error
}

// startProvider serves testDesc with impl on addr ("127.0.0.1:0": a free
// port), registered in reg, and waits until it is registered.
func startProvider(t *testing.T, addr string, reg registry.Registry, impl *testImpl) (*restartProvider, string) {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := rt.NewServer(rt.WithRegistry(reg))
	srv.RegisterService(&testDesc, impl)
	p := &restartProvider{srv: srv, done: make(chan error, 1)}
	go func() { p.done <- srv.Serve(context.Background(), lis) }()
	select {
	case <-srv.Ready():
	case err := <-p.done:
		t.Fatalf("serve: %v", err)
	}
	return p, lis.Addr().String()
}

func (p *restartProvider) stop() {
	p.srv.Close()
	<-p.done
}

// tripBreaker calls until the client's breaker of the only provider is
// open (bounded: the breaker trips after a few failures in a row).
func tripBreaker(t *testing.T, ctx context.Context, cli *rt.Client, s string) {
	t.Helper()
	for i := 0; ; i++ {
		_, err := call(ctx, cli, &testDesc, 0, s)
		if err == nil {
			t.Fatalf("call %d succeeded; want a failure", i)
		}
		if ps := cli.Providers(&testDesc); len(ps) == 1 && ps[0].Breaker == "open" {
			return
		}
		if i == 100 {
			t.Fatalf("the breaker did not open after %d failed calls (last: %v)", i, err)
		}
	}
}

// A provider process that restarts on the same address and registers
// again (a new registration: a new start time) takes calls at once, even
// though its breaker opened while it was down: the client's clock does not
// move, so the breaker's open period never ends by itself.
func TestRestartedProviderTakesCallsAtOnce(t *testing.T) {
	checkLeaks(t)
	reg := registry.NewMemory()
	defer reg.Close()
	old, addr := startProvider(t, "127.0.0.1:0", crashedRegistry{reg.Conn()}, newTestImpl())
	clock := newFakeClock()
	cli, err := rt.NewClient(rt.WithRegistry(reg.Conn()), rt.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := ctxT(t)
	if _, err := call(ctx, cli, &testDesc, 0, "before"); err != nil {
		t.Fatal(err)
	}
	old.stop() // its entry stays: calls are refused, the breaker opens
	tripBreaker(t, ctx, cli, "down")
	_, err = call(ctx, cli, &testDesc, 0, "down")
	if rt.CodeOf(err) != rt.Unavailable || !strings.Contains(err.Error(), "open breakers") {
		t.Fatalf("with the provider down: %v, want Unavailable, breaker open", err)
	}

	// The new process starts at once: the client's clock stays where the
	// connection refusals left it, so neither the breaker's open period
	// nor the connection pool's redial backoff ends by itself.
	p, _ := startProvider(t, addr, reg.Conn(), newTestImpl())
	defer p.stop()
	back := time.Now()
	// The client learns of the new registration through its watch: poll
	// (bounded) until it has, then the call must succeed.
	stop := time.Now().Add(10 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		got, err := call(cctx, cli, &testDesc, 0, "back")
		cancel()
		if err == nil && got == "back" {
			t.Logf("first call served %v after the new registration", time.Since(back))
			break
		}
		if time.Now().After(stop) {
			t.Fatalf("the provider registered again 10s ago; calls still fail: %v", err)
		}
		time.Sleep(time.Millisecond) // polls the client's view; the test does not wait for time
	}
	if ps := cli.Providers(&testDesc); len(ps) != 1 || ps[0].Breaker != "closed" {
		t.Fatalf("providers %+v, want one with a closed breaker", ps)
	}
}

// The breaker still protects the client from a provider that is up but
// failing: registry updates of its registration (a new weight, the same
// entry written again) keep its breaker open; only a new registration (a
// new start time) starts it over.
func TestBreakerKeptAcrossUpdatesOfOneRegistration(t *testing.T) {
	checkLeaks(t)
	reg := registry.NewMemory()
	defer reg.Close()
	impl := newTestImpl()
	impl.fail = true
	p, _ := startProvider(t, "127.0.0.1:0", reg.Conn(), impl)
	defer p.stop()
	cli, err := rt.NewClient(rt.WithRegistry(reg.Conn()), rt.WithClock(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := ctxT(t)
	tripBreaker(t, ctx, cli, "x")
	entry := registryProviders(t, reg, testDesc.Name)[0]
	key := registry.Key{Service: testDesc.Name}
	// reregister writes entry again with weight w (no config override
	// hides it) and start time entry's plus later.
	reregister := func(w int, later time.Duration) error {
		if err := reg.UpdateConfig(ctx, key, func(c *registry.Config) error { c.Instances = nil; return nil }); err != nil {
			return err
		}
		e := entry
		e.Weight, e.StartTime = w, entry.StartTime.Add(later)
		return reg.Register(ctx, e)
	}
	tests := []struct {
		name   string
		update func(weight int) error
		want   string // the breaker's state once the client saw the update
	}{
		{"weight set by governance config", func(w int) error {
			return reg.UpdateConfig(ctx, key, func(c *registry.Config) error {
				c.Instances = map[string]registry.InstanceConfig{entry.Addr: {Weight: w}}
				return nil
			})
		}, "open"},
		{"entry written again with a new weight", func(w int) error { return reregister(w, 0) }, "open"},
		{"new registration", func(w int) error { return reregister(w, time.Second) }, "closed"},
	}
	for i, tc := range tests {
		weight := 200 + i // tells when the client has seen the update
		if err := tc.update(weight); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var ps []rt.ProviderStatus
		waitUntil(t, func() bool { ps = cli.Providers(&testDesc); return len(ps) == 1 && ps[0].Weight == weight })
		if ps[0].Breaker != tc.want {
			t.Fatalf("%s: breaker %s, want %s", tc.name, ps[0].Breaker, tc.want)
		}
	}
}
