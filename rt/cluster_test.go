package rt_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/memnet"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
)

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []clockWaiter
}

type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After fires once Advance has moved the clock d on.
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, clockWaiter{c.now.Add(d), ch})
	return ch
}

// Waiters returns how many After channels wait for the clock to move.
func (c *fakeClock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// countObserver counts attempts and calls.
type countObserver struct {
	attempts, calls atomic.Int64
	mu              sync.Mutex
	byInstance      map[string]int
}

func (o *countObserver) Observe(e metrics.Event) {
	if e.Attempt == 0 {
		o.calls.Add(1)
		return
	}
	o.attempts.Add(1)
	o.mu.Lock()
	if o.byInstance == nil {
		o.byInstance = map[string]int{}
	}
	o.byInstance[e.Instance]++
	o.mu.Unlock()
}

// cluster is n providers of the test service on an in-memory network, all
// registered in one Memory registry, and a client.
type cluster struct {
	t     *testing.T
	net   *memnet.Network
	reg   *registry.Memory
	impls []*testImpl
	feeds []*feedImpl // test.Feed, served beside test.Echo
	srvs  []*rt.Server
	done  []chan error
	cli   *rt.Client
	obs   *countObserver
	clock *fakeClock
	// srvOpts gives provider i's options; nil: none.
	srvOpts func(i int) []rt.ServerOption
}

func newCluster(t *testing.T, n int, cliOpts ...rt.ClientOption) *cluster {
	return newClusterWith(t, n, func(int, *testImpl) {}, cliOpts...)
}

// newClusterWith lets setup change each provider's behaviour before it
// starts.
func newClusterWith(t *testing.T, n int, setup func(i int, impl *testImpl), cliOpts ...rt.ClientOption) *cluster {
	t.Helper()
	return newClusterServing(t, n, setup, nil, cliOpts...)
}

// newClusterServing is newClusterWith with each provider's options
// (srvOpts nil: none).
func newClusterServing(t *testing.T, n int, setup func(i int, impl *testImpl), srvOpts func(i int) []rt.ServerOption, cliOpts ...rt.ClientOption) *cluster {
	t.Helper()
	checkLeaks(t)
	c := &cluster{t: t, net: memnet.New(), reg: registry.NewMemory(), obs: &countObserver{}, clock: newFakeClock(), srvOpts: srvOpts}
	for i := 0; i < n; i++ {
		c.impls = append(c.impls, newTestImpl())
		c.feeds = append(c.feeds, newFeedImpl())
		setup(i, c.impls[i])
		c.srvs = append(c.srvs, nil)
		c.done = append(c.done, nil)
		c.start(i)
		// Registered by the test, not the server, so that killing a
		// server leaves its entry behind, as a crashed process does until
		// its session expires.
		for _, svc := range []string{testDesc.Name, feedDesc.Name} {
			if err := c.reg.Register(context.Background(), registry.Endpoint{
				Key: registry.Key{Service: svc}, Role: registry.Provider, Addr: c.addr(i), Weight: 100,
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	opts := append([]rt.ClientOption{rt.WithRegistry(c.reg.Conn()), rt.WithDialer(c.net.Dial), rt.WithObserver(c.obs), rt.WithClock(c.clock)}, cliOpts...)
	cli, err := rt.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	c.cli = cli
	t.Cleanup(func() {
		cli.Close()
		for i := range c.srvs {
			c.kill(i)
		}
		c.reg.Close()
	})
	return c
}

func (c *cluster) addr(i int) string { return fmt.Sprintf("provider-%d:9000", i) }

func (c *cluster) start(i int) {
	lis, err := c.net.Listen(c.addr(i))
	if err != nil {
		c.t.Fatal(err)
	}
	var opts []rt.ServerOption
	if c.srvOpts != nil {
		opts = c.srvOpts(i)
	}
	srv := rt.NewServer(opts...)
	srv.RegisterService(&testDesc, c.impls[i])
	srv.RegisterService(&feedDesc, c.feeds[i])
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	c.srvs[i], c.done[i] = srv, done
}

// kill stops provider i at once, leaving its registry entry.
func (c *cluster) kill(i int) {
	if c.srvs[i] == nil {
		return
	}
	c.srvs[i].Close()
	<-c.done[i]
	c.srvs[i] = nil
}

func (c *cluster) executions() int64 {
	var n int64
	for _, impl := range c.impls {
		n += impl.calls.Load()
	}
	return n
}

func TestFailoverWithOneDeadProvider(t *testing.T) {
	c := newCluster(t, 3)
	ctx := ctxT(t)
	// Warm every connection, then kill one provider.
	for i := 0; i < 30; i++ {
		if _, err := call(ctx, c.cli, &testDesc, 2, "warm"); err != nil {
			t.Fatal(err)
		}
	}
	c.kill(1)
	before := c.obs.attempts.Load()
	const calls = 10_000
	var failed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 10; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls/10; i++ {
				// A deadline per call, not one for all 10,000: under -race
				// on a loaded machine they may take longer than one's.
				cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := call(cctx, c.cli, &testDesc, 2, "x")
				cancel()
				if err != nil {
					failed.Add(1)
					t.Errorf("call failed: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	attempts := c.obs.attempts.Load() - before
	t.Logf("%d calls, %d attempts (%d to the dead provider)", calls, attempts, c.obs.byInstance[c.addr(1)])
	if failed.Load() > 0 {
		t.Fatalf("%d idempotent calls failed with one provider dead", failed.Load())
	}
	// Budget: 10 % of the calls plus a floor of 10/s over the window.
	if limit := int64(calls + calls/10 + 100); attempts > limit {
		t.Fatalf("%d attempts for %d calls, over the retry budget (%d)", attempts, calls, limit)
	}
}

func TestNonIdempotentNeverSentTwice(t *testing.T) {
	c := newCluster(t, 3)
	ctx := ctxT(t)
	errc := make(chan error, 1)
	go func() {
		_, err := call(ctx, c.cli, &testDesc, 0, "sleep")
		errc <- err
	}()
	// Find the provider running the call and kill it mid-call.
	var victim int
	select {
	case <-c.impls[0].started:
		victim = 0
	case <-c.impls[1].started:
		victim = 1
	case <-c.impls[2].started:
		victim = 2
	case <-time.After(5 * time.Second):
		t.Fatal("call never started")
	}
	c.kill(victim)
	if err := <-errc; rt.CodeOf(err) != rt.Unavailable {
		t.Fatalf("err = %v, want Unavailable", err)
	}
	if n := c.executions(); n != 1 {
		t.Fatalf("non-idempotent call executed %d times, want 1", n)
	}
}

func TestAllDeadFailFastThenRecover(t *testing.T) {
	c := newCluster(t, 3)
	ctx := ctxT(t)
	for i := 0; i < 30; i++ {
		if _, err := call(ctx, c.cli, &testDesc, 2, "warm"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range c.srvs {
		c.kill(i)
	}
	// Trip every breaker.
	for i := 0; i < 100; i++ {
		if _, err := call(ctx, c.cli, &testDesc, 2, "x"); rt.CodeOf(err) != rt.Unavailable {
			t.Fatalf("call %d with all providers dead: %v, want Unavailable", i, err)
		}
	}
	// Now calls fail fast: no attempt leaves the client (the time it
	// takes is measured by BenchmarkFailFast).
	attempts := c.obs.attempts.Load()
	const n = 200
	start := time.Now()
	for i := 0; i < n; i++ {
		_, err := call(ctx, c.cli, &testDesc, 2, "x")
		if rt.CodeOf(err) != rt.Unavailable {
			t.Fatalf("err = %v, want Unavailable", err)
		}
	}
	t.Logf("fail-fast call with every breaker open: %v", time.Since(start)/n)
	if extra := c.obs.attempts.Load() - attempts; extra != 0 {
		t.Fatalf("%d attempts reached providers whose breakers are open", extra)
	}
	// Providers come back; after the breakers' open period they recover.
	for i := range c.srvs {
		c.start(i)
	}
	c.clock.Advance(time.Minute)
	ok := 0
	for i := 0; i < 50; i++ {
		if _, err := call(ctx, c.cli, &testDesc, 2, "back"); err == nil {
			ok++
		}
	}
	if ok < 45 {
		t.Fatalf("only %d of 50 calls succeeded after the providers returned", ok)
	}
}

// wallClock is the system's clock, for tests of a cluster (whose clients
// have a fakeClock otherwise) that need time to pass by itself.
type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func TestHedgedCallsAvoidASlowProvider(t *testing.T) {
	// Hedges spend the retry budget: a generous one lets every call that
	// starts on the slow provider hedge (TestHedgesSpendTheRetryBudget
	// tests the budget).
	c := newClusterWith(t, 2, func(i int, impl *testImpl) {
		if i == 0 {
			impl.slow = time.Minute
		}
	}, rt.WithClock(wallClock{}), rt.WithRetryBudget(1, 1000))
	// Without hedging, the calls that go to provider 0 would hit the
	// deadline; the hedge after 20ms sends them to provider 1.
	for i := 0; i < 20; i++ {
		ctx, cancel := context.WithTimeout(ctxT(t), 3*time.Second)
		got, err := call(ctx, c.cli, &testDesc, 3, "h")
		cancel()
		if err != nil || got != "h" {
			t.Fatalf("hedged call %d: %q, %v", i, got, err)
		}
	}
	if n := c.impls[1].calls.Load(); n != 20 {
		t.Fatalf("fast provider served %d of 20 calls", n)
	}
}

func TestForkingFirstSuccessWins(t *testing.T) {
	c := newClusterWith(t, 3, func(i int, impl *testImpl) { impl.fail = i != 2 })
	for i := 0; i < 20; i++ {
		if got, err := call(ctxT(t), c.cli, &testDesc, 4, "f"); err != nil || got != "f" {
			t.Fatalf("forking call %d: %q, %v", i, got, err)
		}
	}
	if n := c.impls[2].calls.Load(); n != 20 {
		t.Fatalf("healthy provider got %d of 20 forks", n)
	}
}

// TestRateLimit floods a provider limited to 100 calls/s with burst 10 for
// two seconds of (fake) time: 10 + 2 × 100 = 210 calls get through; another
// app's client is not affected by the flood.
func TestRateLimit(t *testing.T) {
	checkLeaks(t)
	clock := newFakeClock()
	n := memnet.New()
	reg := registry.NewMemory()
	t.Cleanup(func() { reg.Close() })
	key := registry.Key{Service: testDesc.Name}
	if err := reg.UpdateConfig(context.Background(), key, func(c *registry.Config) error {
		c.RateLimit = &registry.RateLimit{Rate: 100, Burst: 10, PerApp: true}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	lis, _ := n.Listen("limited:1")
	srv := rt.NewServer(rt.WithRegistry(reg.Conn()), rt.WithAdvertiseAddr("limited:1"), rt.WithClock(clock))
	srv.RegisterService(&testDesc, newTestImpl())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	t.Cleanup(func() { srv.Close(); <-done })

	newCli := func(app string) *rt.Client {
		c, err := rt.NewClient(rt.WithRegistry(reg.Conn()), rt.WithDialer(n.Dial), rt.WithApp(app))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	flood, quiet := newCli("flood"), newCli("quiet")
	ctx := ctxT(t)
	// The server learns the config through its watch: wait until the
	// limit bites before counting.
	for i := 0; ; i++ {
		if _, err := call(ctx, flood, &testDesc, 0, "x"); rt.CodeOf(err) == rt.ResourceExhausted {
			break
		}
		if i > 10_000 {
			t.Fatal("rate limit never applied")
		}
	}
	clock.Advance(time.Hour) // refill to the burst

	accepted, rejected := 0, 0
	for step := 0; step < 200; step++ { // 200 steps of 10ms = 2s
		for i := 0; i < 5; i++ {
			_, err := call(ctx, flood, &testDesc, 0, "x")
			switch rt.CodeOf(err) {
			case rt.OK:
				accepted++
			case rt.ResourceExhausted:
				rejected++
			default:
				t.Fatalf("flood call: %v", err)
			}
		}
		if _, err := call(ctx, quiet, &testDesc, 0, "q"); err != nil {
			t.Fatalf("the quiet app's call failed during the flood: %v", err)
		}
		clock.Advance(10 * time.Millisecond)
	}
	t.Logf("flood: %d accepted, %d rejected", accepted, rejected)
	if accepted < 178 || accepted > 242 {
		t.Fatalf("%d flood calls accepted in 2s, want 210 ± 15%%", accepted)
	}
}

func TestMaxConcurrent(t *testing.T) {
	e := newEnv(t, []rt.ServerOption{rt.WithLimits(rt.Limits{MaxCalls: 1})})
	errc := make(chan error, 1)
	go func() {
		_, err := call(ctxT(t), e.cli, &testDesc, 0, "sleep")
		errc <- err
	}()
	<-e.impl.started
	_, err := call(ctxT(t), e.cli, &testDesc, 0, "second")
	if rt.CodeOf(err) != rt.ResourceExhausted {
		t.Fatalf("second call: %v, want ResourceExhausted", err)
	}
	e.srv.Close()
	<-errc
	<-e.impl.ended
}

func TestTagRouting(t *testing.T) {
	c := newCluster(t, 3)
	// Re-register provider 1 with a tag, as a gray release would.
	key := registry.Key{Service: testDesc.Name}
	if err := c.reg.Register(context.Background(), registry.Endpoint{Key: key, Role: registry.Provider, Addr: c.addr(1), Weight: 100,
		Tags: map[string]string{"release": "gray"}}); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	// The registry delivers the new tags asynchronously: wait until a
	// tagged call lands on provider 1.
	for deadline := time.Now().Add(5 * time.Second); ; {
		before := c.impls[1].calls.Load()
		if _, err := call(ctx, c.cli, &testDesc, 0, "gray", rt.WithTag("release", "gray")); err != nil {
			t.Fatal(err)
		}
		if c.impls[1].calls.Load() > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tag never reached the client")
		}
	}
	before := c.impls[1].calls.Load()
	for i := 0; i < 50; i++ {
		if _, err := call(ctx, c.cli, &testDesc, 0, "gray", rt.WithTag("release", "gray")); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.impls[1].calls.Load() - before; got != 50 {
		t.Fatalf("tagged provider served %d of 50 tagged calls", got)
	}
	// A tag no provider has falls back to every provider.
	if _, err := call(ctx, c.cli, &testDesc, 0, "x", rt.WithTag("release", "none")); err != nil {
		t.Fatal(err)
	}
}

func TestConfigMockExpires(t *testing.T) {
	c := newCluster(t, 1)
	ctx := ctxT(t)
	if _, err := call(ctx, c.cli, &testDesc, 0, "warm"); err != nil {
		t.Fatal(err)
	}
	key := registry.Key{Service: testDesc.Name}
	expires := c.clock.Now().Add(time.Minute)
	if err := c.reg.UpdateConfig(ctx, key, func(cfg *registry.Config) error {
		cfg.Mocks = map[string]registry.MockConfig{"Echo": {Force: true, Action: "fail", Code: "Unavailable", Message: "maintenance", Expires: expires}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mocked := func() bool {
		_, err := call(ctx, c.cli, &testDesc, 0, "x")
		return err != nil && strings.Contains(err.Error(), "maintenance")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !mocked() {
		if time.Now().After(deadline) {
			t.Fatal("config mock never applied")
		}
	}
	served := c.impls[0].calls.Load()
	for i := 0; i < 10; i++ {
		if !mocked() {
			t.Fatal("forced mock stopped before its expiry")
		}
	}
	if c.impls[0].calls.Load() != served {
		t.Fatal("a forced mock let calls reach the provider")
	}
	c.clock.Advance(2 * time.Minute)
	if got, err := call(ctx, c.cli, &testDesc, 0, "after"); err != nil || got != "after" {
		t.Fatalf("after the mock expired: %q, %v", got, err)
	}
}

// The first call after the only provider restarted finds its connection
// lost before the request left: it goes to the same provider on a new
// connection, and runs once, even for a method that is not idempotent.
func TestFirstCallAfterARestart(t *testing.T) {
	c := newCluster(t, 1)
	ctx := ctxT(t)
	for round := range 5 {
		if got, err := call(ctx, c.cli, &testDesc, 0, "before"); err != nil || got != "before" {
			t.Fatalf("round %d, before the restart: %q, %v", round, got, err)
		}
		c.kill(0)
		c.start(0)
		before := c.executions()
		if got, err := call(ctx, c.cli, &testDesc, 0, "after"); err != nil || got != "after" {
			t.Fatalf("round %d, first call after the restart: %q, %v", round, got, err)
		}
		if n := c.executions() - before; n != 1 {
			t.Fatalf("round %d: the call ran %d times, want 1", round, n)
		}
		c.kill(0)
		c.start(0)
		s, err := stream(ctx, c.cli, 0) // Count: "1" sends one message
		if err == nil {
			err = s.Send(&msg{S: "1"})
		}
		if err == nil {
			_, err = s.Recv()
		}
		if err != nil {
			t.Fatalf("round %d, first stream after the restart: %v", round, err)
		}
	}
}

// A provider list that is empty for a moment (the only provider
// restarting) costs an idempotent call a try, not the call: it waits its
// retry interval on the client's clock and picks again.
func TestNoProviderForAMoment(t *testing.T) {
	c := newCluster(t, 1)
	ctx := ctxT(t)
	if _, err := call(ctx, c.cli, &testDesc, 2, "discover"); err != nil {
		t.Fatal(err)
	}
	ep := registry.Endpoint{Key: registry.Key{Service: testDesc.Name}, Role: registry.Provider, Addr: c.addr(0), Weight: 100}
	if err := c.reg.Deregister(ctx, ep); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { _, err := call(ctx, c.cli, &testDesc, 0, "x"); return rt.CodeOf(err) == rt.Unavailable })
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, c.cli, &testDesc, 2, "y") // idempotent, 3 tries
		done <- err
	}()
	stop := time.Now().Add(10 * time.Second) // bounded: the call reaches its wait at once
	for c.clock.Waiters() == 0 {
		if time.Now().After(stop) {
			t.Fatal("the call did not wait for a provider")
		}
		runtime.Gosched()
	}
	if err := c.reg.Register(ctx, ep); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { _, err := call(ctx, c.cli, &testDesc, 0, "x"); return err == nil })
	c.clock.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatalf("the call failed: %v", err)
	}
}

// The hedge delay is on the client's clock: a hedge an hour away is sent
// once the clock says the hour has passed, and not before.
func TestHedgeWaitsOnTheClientsClock(t *testing.T) {
	c := newClusterWith(t, 2, func(_ int, impl *testImpl) { impl.slow = time.Hour })
	sd := testDesc
	sd.Methods = slices.Clone(testDesc.Methods)
	sd.Methods[3].Policy.Hedge = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, c.cli, &sd, 3, "x")
		done <- err
	}()
	// Bounded: the call reaches its hedge wait within moments.
	stop := time.Now().Add(10 * time.Second)
	for c.clock.Waiters() == 0 {
		if time.Now().After(stop) {
			cancel()
			t.Fatal("the hedge never waited on the client's clock")
		}
		runtime.Gosched()
	}
	if n := c.impls[0].calls.Load() + c.impls[1].calls.Load(); n > 1 {
		t.Errorf("%d attempts before the clock moved, want 1", n)
	}
	c.clock.Advance(time.Hour)
	waitUntil(t, func() bool { return c.impls[0].calls.Load() == 1 && c.impls[1].calls.Load() == 1 })
	cancel()
	if err := <-done; rt.CodeOf(err) != rt.Canceled {
		t.Errorf("the canceled call: %v", err)
	}
}

// The wait between retries is on the client's clock: a retry an hour away
// happens once the clock says the hour has passed, and not before.
func TestRetryBackoffWaitsOnTheClientsClock(t *testing.T) {
	c := newClusterWith(t, 2, func(_ int, impl *testImpl) { impl.fail = true })
	sd := testDesc
	sd.Methods = slices.Clone(testDesc.Methods)
	sd.Methods[2].Policy.Retry = rt.RetryPolicy{Tries: 2, Interval: time.Hour}
	done := make(chan error, 1)
	go func() {
		_, err := call(context.Background(), c.cli, &sd, 2, "x")
		done <- err
	}()
	// Bounded: the call reaches its backoff within moments.
	stop := time.Now().Add(10 * time.Second)
	for c.clock.Waiters() == 0 {
		if time.Now().After(stop) {
			t.Fatal("the call never waited on the clock")
		}
		runtime.Gosched()
	}
	if n := c.obs.attempts.Load(); n != 1 {
		t.Fatalf("%d attempts before the backoff, want 1", n)
	}
	select {
	case err := <-done:
		t.Fatalf("the call returned during its backoff: %v", err)
	default:
	}
	c.clock.Advance(time.Hour)
	err := <-done
	if rt.CodeOf(err) != rt.Unavailable || c.obs.attempts.Load() != 2 {
		t.Fatalf("after the backoff: %v, %d attempts; want Unavailable after 2", err, c.obs.attempts.Load())
	}
}

// A provider that hangs costs an idempotent call one try, not the call:
// with the default try deadlines (half the time left, the last try all of
// it) every call succeeds on another provider.
func TestHungProviderCostsOneTry(t *testing.T) {
	c := newClusterWith(t, 3, func(i int, impl *testImpl) {
		if i == 1 {
			impl.slow = time.Hour // answers only when its call's deadline passes
		}
	})
	const callers, calls = 8, 6
	var failed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < callers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				// A try on the hung provider takes half of this; the
				// next, on a live one, has half the rest (750 ms: ample
				// for an echo on a loaded machine).
				if _, err := call(context.Background(), c.cli, &testDesc, 2, "x", rt.WithCallTimeout(3*time.Second)); err != nil {
					failed.Add(1)
					t.Errorf("call failed: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d calls failed", failed.Load(), callers*calls)
	}
	if c.impls[1].calls.Load() == 0 {
		t.Fatal("no call tried the hung provider: the test proved nothing")
	}
}

// The README's sample, a hundred times: a server started with `go
// srv.Serve` and a client created at once. The first call waits for the
// provider to be registered and discovered instead of failing with "no
// provider".
func TestReadyOnStart(t *testing.T) {
	checkLeaks(t)
	for i := range 100 {
		reg := registry.NewMemory()
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := rt.NewServer(rt.WithRegistry(reg.Conn()))
		srv.RegisterService(&testDesc, newTestImpl())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), lis) }()
		cli, err := rt.NewClient(rt.WithRegistry(reg.Conn()))
		if err != nil {
			t.Fatal(err)
		}
		_, err = call(ctxT(t), cli, &testDesc, 0, "x")
		cli.Close()
		srv.Close()
		<-done
		reg.Close()
		if err != nil {
			t.Fatalf("run %d: the first call failed: %v", i, err)
		}
	}
}

// A balancer of one's own, given as a value: every call goes where it
// says.
func TestPluggedBalancer(t *testing.T) {
	c := newCluster(t, 3, rt.WithBalancer(lastNode{}))
	for range 20 {
		if _, err := call(ctxT(t), c.cli, &testDesc, 0, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if n0, n1, n2 := c.impls[0].calls.Load(), c.impls[1].calls.Load(), c.impls[2].calls.Load(); n0 != 0 || n1 != 0 || n2 != 20 {
		t.Fatalf("calls by provider: %d %d %d, want all 20 on the last", n0, n1, n2)
	}
}

// A call that a busy provider refuses (Limits.MaxCalls) did not run:
// even a non-idempotent one goes on to another provider.
func TestRefusedCallsGoElsewhere(t *testing.T) {
	// Only provider 1 is limited: provider 0 may still hold the slot of
	// the call before while it takes the next.
	limit1 := func(i int) []rt.ServerOption {
		if i == 1 {
			return []rt.ServerOption{rt.WithLimits(rt.Limits{MaxCalls: 1})}
		}
		return nil
	}
	c := newClusterServing(t, 2, func(int, *testImpl) {}, limit1, rt.WithBalancer(lastNode{}))
	ctx, cancel := context.WithCancel(ctxT(t))
	held := make(chan error, 1)
	go func() {
		_, err := call(ctx, c.cli, &testDesc, 0, "sleep") // fills provider 1
		held <- err
	}()
	<-c.impls[1].started
	const n = 10
	for i := range n {
		if _, err := call(ctxT(t), c.cli, &testDesc, 0, "x"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	cancel()
	<-held
	if got0, got1 := c.impls[0].calls.Load(), c.impls[1].calls.Load(); got0 != n || got1 != 1 {
		t.Fatalf("calls run by provider 0 and 1: %d and %d, want %d and 1", got0, got1, n)
	}
	c.obs.mu.Lock()
	tried := c.obs.byInstance[c.addr(1)]
	c.obs.mu.Unlock()
	if tried < n+1 {
		t.Fatalf("attempts on the busy provider: %d, want %d (each call tried it first)", tried, n+1)
	}
}

// lastNode is a Builder whose picker always picks the last node not tried.
type lastNode struct{}

func (lastNode) Name() string { return "last" }
func (lastNode) Build(nodes []balance.Node, _ time.Time) balance.Picker {
	return lastPicker(len(nodes))
}

type lastPicker int

func (n lastPicker) Pick(info *balance.Info) int {
	for i := int(n) - 1; i >= 0; i-- {
		if info == nil || !slices.Contains(info.Tried, i) {
			return i
		}
	}
	return -1
}

// Bounded-load consistent hashing spreads a hot key: at every pick, the
// provider picked has fewer than ceil(c·(in flight+1)/n) of the calls in
// flight (c = 1.25, hashring's default load factor). The calls are made
// one at a time and held, so that every pick sees the counts it is
// checked against.
func TestBoundedLoadHotKey(t *testing.T) {
	checker := &boundChecker{inner: balance.NewConsistentHash(balance.Options{BoundedLoad: true})}
	c := newCluster(t, 3, rt.WithBalancer(checker))
	ctx, cancel := context.WithCancel(ctxT(t))
	var wg sync.WaitGroup
	const calls = 30
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call(ctx, c.cli, &testDesc, 0, "sleep", rt.WithHashKey("the same key"))
		}()
		// Held by its handler before the next pick.
		select {
		case <-c.impls[0].started:
		case <-c.impls[1].started:
		case <-c.impls[2].started:
		case <-ctx.Done():
			t.Fatalf("call %d never started", i)
		}
	}
	cancel()
	wg.Wait()
	if v := checker.violations.Load(); v > 0 || checker.picks.Load() < calls {
		t.Fatalf("%d of %d picks went to a provider at or over its bound", v, checker.picks.Load())
	}
	var held []int64
	for _, impl := range c.impls {
		held = append(held, impl.calls.Load())
	}
	if slices.Max(held) > int64(math.Ceil(1.25*calls/3)) {
		t.Fatalf("calls held by provider: %v; a hot key should spread", held)
	}
}

// boundChecker wraps a balancer and checks each pick against the
// bounded-load capacity.
type boundChecker struct {
	inner             balance.Builder
	picks, violations atomic.Int64
}

func (b *boundChecker) Name() string { return b.inner.Name() }
func (b *boundChecker) Build(nodes []balance.Node, now time.Time) balance.Picker {
	return &boundPicker{b: b, inner: b.inner.Build(nodes, now), nodes: slices.Clone(nodes)}
}

type boundPicker struct {
	b     *boundChecker
	inner balance.Picker
	nodes []balance.Node
}

func (p *boundPicker) Pick(info *balance.Info) int {
	i := p.inner.Pick(info)
	if i < 0 {
		return i
	}
	var total int64
	for _, n := range p.nodes {
		total += n.Active.Load()
	}
	bound := int64(math.Ceil(1.25 * float64(total+1) / float64(len(p.nodes))))
	p.b.picks.Add(1)
	if p.nodes[i].Active.Load() >= bound {
		p.b.violations.Add(1)
	}
	return i
}

// A provider that reports itself not serving (Server.SetServing) gets no
// new calls once its consumers hear it from the registry (the Memory
// registry's watch pushes it; the time it took is logged, not checked,
// so that a loaded machine cannot fail the test); and calls come back
// when it serves again.
func TestNotServingProviderGetsNoCalls(t *testing.T) {
	checkLeaks(t)
	reg := registry.NewMemory()
	defer reg.Close()
	var srvs []*rt.Server
	var impls []*testImpl
	for range 2 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv, impl := rt.NewServer(rt.WithRegistry(reg.Conn())), newTestImpl()
		srv.RegisterService(&testDesc, impl)
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), lis) }()
		defer func() { srv.Close(); <-done }()
		<-srv.Ready()
		srvs, impls = append(srvs, srv), append(impls, impl)
	}
	cli, err := rt.NewClient(rt.WithRegistry(reg.Conn()), rt.WithBalancer(balance.NewRoundRobin(balance.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	calls := func(n int) {
		for range n {
			if _, err := call(ctxT(t), cli, &testDesc, 0, "x"); err != nil {
				t.Fatal(err)
			}
		}
	}
	calls(10)
	notServing := func(want bool) func() bool {
		return func() bool {
			for _, p := range cli.Providers(&testDesc) {
				if p.NotServing {
					return want
				}
			}
			return !want
		}
	}
	srvs[0].SetServing(false)
	start := time.Now()
	waitUntil(t, notServing(true))
	t.Logf("the consumer heard of NOT_SERVING after %v", time.Since(start))
	before := impls[0].calls.Load()
	calls(20)
	if got := impls[0].calls.Load() - before; got != 0 {
		t.Fatalf("the NOT_SERVING provider got %d new calls", got)
	}
	srvs[0].SetServing(true)
	waitUntil(t, notServing(false))
	before = impls[0].calls.Load()
	calls(20)
	if impls[0].calls.Load() == before {
		t.Fatal("the provider serves again but gets no calls")
	}
}

// A client-side rate limit refuses calls beyond it locally, with
// ResourceExhausted: they never reach a provider, nor its breaker.
func TestClientRateLimit(t *testing.T) {
	c := newCluster(t, 1, rt.WithMethodRateLimit("test.Echo/Echo", 1, 2))
	got := map[rt.Code]int{}
	for range 5 {
		_, err := call(ctxT(t), c.cli, &testDesc, 0, "x")
		got[rt.CodeOf(err)]++
	}
	if got[rt.OK] != 2 || got[rt.ResourceExhausted] != 3 || c.impls[0].calls.Load() != 2 {
		t.Fatalf("codes %v, %d calls served; want 2 OK (the burst) and 3 refused locally", got, c.impls[0].calls.Load())
	}
	c.clock.Advance(time.Second) // one more token
	if _, err := call(ctxT(t), c.cli, &testDesc, 0, "x"); err != nil {
		t.Fatalf("a second later: %v", err)
	}
	if ps := c.cli.Providers(&testDesc); ps[0].Breaker != "closed" {
		t.Fatalf("breaker %q after local refusals, want closed", ps[0].Breaker)
	}
	// Another method is not limited.
	for range 5 {
		if _, err := call(ctxT(t), c.cli, &testDesc, 2, "x"); err != nil {
			t.Fatal(err)
		}
	}
}
