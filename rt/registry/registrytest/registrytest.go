package registrytest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
)

// Timeout bounds every wait of the suite for a registry to converge. It is
// an upper bound for failing tests, never a sleep: passing tests return as
// soon as the condition holds.
const Timeout = 15 * time.Second

// Run runs the conformance suite as subtests of t. newRegistry is called one
// or more times per subtest; every registry it returns must share one
// backing store (for ZooKeeper: clients of one ensemble; for
// registry.Memory: handles from one Memory's Conn), because providers and
// consumers are played by different registries, as by different processes.
// Run closes every registry it gets. Each subtest uses its own randomly
// named service, so stores may be reused across runs.
//
// If the registries implement registry.Governor, the governance subtests
// run too.
func Run(t *testing.T, newRegistry func(t *testing.T) registry.Registry) {
	newReg := func(t *testing.T) registry.Registry {
		t.Helper()
		r := newRegistry(t)
		t.Cleanup(func() {
			if err := r.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return r
	}
	tests := []struct {
		name string
		run  func(t *testing.T, newReg func(*testing.T) registry.Registry)
	}{
		{"EmptyKey", testEmptyKey},
		{"RegisterWatchDeregister", testRegisterWatchDeregister},
		{"SortedByAddr", testSorted},
		{"Payload", testPayload},
		{"Isolation", testIsolation},
		{"ReRegisterReplaces", testReRegister},
		{"ConsumersAreNotProviders", testConsumers},
		{"CloseRemovesEverything", testClose},
		{"CloseEndsWatchesSilently", testCloseNotifies},
		{"StopWaitsForFn", testStopWaits},
		{"SlowWatcherGetsLatest", testCoalesce},
		{"BadEndpoints", testBadEndpoints},
		{"Governance", testGovernance},
		{"GovernanceConcurrentWriters", testGovernanceConcurrent},
		{"GovernanceRefusesBadValues", testGovernanceBadValues},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newReg) })
	}
}

// Recorder collects the snapshots a watch delivers. Its Fn is the watch
// callback. Safe for concurrent use; the zero value is not usable (use
// NewRecorder).
type Recorder struct {
	mu     sync.Mutex
	latest registry.Snapshot
	calls  int
	kick   chan struct{}
	onCall func(registry.Snapshot) // optional hook, runs inside Fn
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{kick: make(chan struct{}, 1)} }

// Fn records s; pass it to Registry.Watch.
func (r *Recorder) Fn(s registry.Snapshot) {
	if r.onCall != nil {
		r.onCall(s)
	}
	r.mu.Lock()
	r.latest = s
	r.calls++
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Latest returns the last snapshot and the number of calls so far.
func (r *Recorder) Latest() (registry.Snapshot, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.latest, r.calls
}

// WaitFor waits until the latest snapshot satisfies cond and returns it,
// failing t after Timeout with desc and the last snapshot seen.
func (r *Recorder) WaitFor(t testing.TB, desc string, cond func(registry.Snapshot) bool) registry.Snapshot {
	t.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	for {
		s, n := r.Latest()
		if n > 0 && cond(s) {
			return s
		}
		select {
		case <-r.kick:
		case <-timer.C:
			t.Fatalf("registrytest: timed out after %v waiting for %s; last snapshot (%d calls): %s", Timeout, desc, n, Describe(s))
			return s
		}
	}
}

// Addrs returns the provider addresses of s, in order.
func Addrs(s registry.Snapshot) []string {
	out := make([]string, len(s.Providers))
	for i, p := range s.Providers {
		out[i] = p.Addr
	}
	return out
}

// HasAddrs returns a condition: the providers are exactly addrs, in order.
func HasAddrs(addrs ...string) func(registry.Snapshot) bool {
	return func(s registry.Snapshot) bool { return slices.Equal(Addrs(s), addrs) }
}

// Describe formats s for test failures.
func Describe(s registry.Snapshot) string {
	return fmt.Sprintf("key=%s providers=%v config=%+v", s.Key, Addrs(s), s.Config)
}

// UniqueKey returns a Key with a random service name derived from t's name.
func UniqueKey(t testing.TB) registry.Key {
	name := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	return registry.Key{Service: fmt.Sprintf("registrytest.%s.%08x", name, rand.Uint32())}
}

func provider(k registry.Key, addr string) registry.Endpoint {
	return registry.Endpoint{Key: k, Role: registry.Provider, Addr: addr}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return c
}

func watch(t *testing.T, r registry.Registry, k registry.Key) *Recorder {
	t.Helper()
	rec := NewRecorder()
	stop, err := r.Watch(k, rec.Fn)
	if err != nil {
		t.Fatalf("Watch(%s): %v", k, err)
	}
	t.Cleanup(stop)
	return rec
}

func register(t *testing.T, r registry.Registry, e registry.Endpoint) {
	t.Helper()
	if err := r.Register(ctx(t), e); err != nil {
		t.Fatalf("Register(%s %q): %v", e.Key, e.Addr, err)
	}
}

func testEmptyKey(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	rec := watch(t, newReg(t), k)
	s := rec.WaitFor(t, "a first snapshot", func(registry.Snapshot) bool { return true })
	if len(s.Providers) != 0 || s.Key != k {
		t.Errorf("first snapshot of a new key = %s, want key %s and no providers", Describe(s), k)
	}
}

func testRegisterWatchDeregister(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	p, c := newReg(t), newReg(t)
	rec := watch(t, c, k)
	register(t, p, provider(k, "10.0.0.1:80"))
	register(t, p, provider(k, "10.0.0.2:80"))
	rec.WaitFor(t, "both providers", HasAddrs("10.0.0.1:80", "10.0.0.2:80"))
	if err := p.Deregister(ctx(t), provider(k, "10.0.0.1:80")); err != nil {
		t.Fatalf("Deregister: %v", err)
	}
	rec.WaitFor(t, "one provider left", HasAddrs("10.0.0.2:80"))
	if err := p.Deregister(ctx(t), provider(k, "10.9.9.9:80")); err != nil {
		t.Errorf("Deregister of an unknown endpoint: %v, want nil", err)
	}
}

func testSorted(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	p, c := newReg(t), newReg(t)
	for _, a := range []string{"10.0.0.3:1", "10.0.0.1:1", "10.0.0.2:1"} {
		register(t, p, provider(k, a))
	}
	rec := watch(t, c, k)
	rec.WaitFor(t, "three sorted providers", HasAddrs("10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"))
}

func testPayload(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := registry.Key{Service: UniqueKey(t).Service, Group: "hk", Version: "1.2.0"}
	p, c := newReg(t), newReg(t)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := registry.Endpoint{Key: k, Role: registry.Provider, Addr: "[::1]:8080", Weight: 7,
		App: "users", Tags: map[string]string{"zone": "hk-1"}, StartTime: start}
	register(t, p, e)
	rec := watch(t, c, k)
	s := rec.WaitFor(t, "the provider", HasAddrs("[::1]:8080"))
	got := s.Providers[0]
	if got.Key != k || got.Role != registry.Provider || got.Weight != 7 || got.App != "users" ||
		got.Tags["zone"] != "hk-1" || len(got.Tags) != 1 || !got.StartTime.Equal(start) {
		t.Errorf("provider = %+v, want %+v", got, e)
	}
	if s.Key != k {
		t.Errorf("snapshot key = %s, want %s", s.Key, k)
	}
}

func testIsolation(t *testing.T, newReg func(*testing.T) registry.Registry) {
	svc := UniqueKey(t).Service
	keys := []registry.Key{
		{Service: svc}, {Service: svc, Group: "g"}, {Service: svc, Version: "v1"},
		{Service: svc, Group: "g", Version: "v1"}, {Service: svc + "x"},
	}
	p, c := newReg(t), newReg(t)
	for i, k := range keys {
		register(t, p, provider(k, fmt.Sprintf("10.0.1.%d:80", i)))
	}
	for i, k := range keys {
		rec := watch(t, c, k)
		rec.WaitFor(t, "only its own provider in "+k.String(), HasAddrs(fmt.Sprintf("10.0.1.%d:80", i)))
	}
}

func testReRegister(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	p, c := newReg(t), newReg(t)
	rec := watch(t, c, k)
	e := provider(k, "10.0.0.1:80")
	e.Weight, e.App = 10, "old"
	register(t, p, e)
	rec.WaitFor(t, "the first payload", func(s registry.Snapshot) bool {
		return len(s.Providers) == 1 && s.Providers[0].App == "old"
	})
	e.Weight, e.App = 20, "new"
	register(t, p, e)
	rec.WaitFor(t, "the replaced payload", func(s registry.Snapshot) bool {
		return len(s.Providers) == 1 && s.Providers[0].App == "new" && s.Providers[0].Weight == 20
	})
}

func testConsumers(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	p, c := newReg(t), newReg(t)
	register(t, c, registry.Endpoint{Key: k, Role: registry.Consumer, Addr: "10.0.0.9:c1"})
	register(t, p, provider(k, "10.0.0.1:80"))
	rec := watch(t, c, k)
	rec.WaitFor(t, "the provider only", HasAddrs("10.0.0.1:80"))
}

func testClose(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	p, q, c := newReg(t), newReg(t), newReg(t)
	register(t, p, provider(k, "10.0.0.1:80"))
	register(t, p, provider(k, "10.0.0.2:80"))
	register(t, q, provider(k, "10.0.0.3:80"))
	rec := watch(t, c, k)
	rec.WaitFor(t, "three providers", HasAddrs("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"))

	own := NewRecorder()
	stop, err := p.Watch(k, own.Fn)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	stop() // must not hang after Close
	rec.WaitFor(t, "the closed registry's providers gone", HasAddrs("10.0.0.3:80"))
	if err := p.Register(ctx(t), provider(k, "10.0.0.4:80")); err == nil {
		t.Errorf("Register after Close = nil, want an error")
	}
	if _, err := p.Watch(k, func(registry.Snapshot) {}); !errors.Is(err, registry.ErrClosed) {
		t.Errorf("Watch after Close: %v; want an error that errors.Is %v", err, registry.ErrClosed)
	}
}

// testCloseNotifies: Close ends a watch without a word (its last snapshot
// stands) and, for a registry.CloseNotifier, closes Done by the time it
// returns, and not before.
func testCloseNotifies(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	p, c := newReg(t), newReg(t)
	register(t, p, provider(k, "10.0.0.1:80"))
	rec := watch(t, c, k)
	rec.WaitFor(t, "the provider", HasAddrs("10.0.0.1:80"))
	cn, notifies := c.(registry.CloseNotifier)
	var done <-chan struct{}
	if notifies {
		done = cn.Done()
		if cn.Done() != done {
			t.Errorf("Done returned two different channels")
		}
		select {
		case <-done:
			t.Fatalf("Done is closed before Close")
		default:
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if notifies {
		select {
		case <-done:
		default:
			t.Errorf("Done is not closed when Close returned")
		}
	}
	if s, _ := rec.Latest(); !HasAddrs("10.0.0.1:80")(s) {
		t.Errorf("after Close the watcher's last snapshot is %s; want the provider still (Close must not publish)", Describe(s))
	}
}

func testStopWaits(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	r := newReg(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var inFn, stopped atomic.Bool
	var once, releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before r.Close, which waits for fn, even on failure
	stop, err := r.Watch(k, func(registry.Snapshot) {
		if stopped.Load() {
			t.Errorf("fn called after stop returned")
		}
		inFn.Store(true)
		once.Do(func() { close(entered) })
		<-release
		inFn.Store(false)
	})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	select {
	case <-entered:
	case <-time.After(Timeout):
		t.Fatalf("no first snapshot within %v", Timeout)
	}
	stopDone := make(chan struct{})
	go func() {
		stop()
		stopped.Store(true)
		close(stopDone)
	}()
	select {
	case <-stopDone:
		t.Fatalf("stop returned while fn was running")
	default:
	}
	unblock()
	select {
	case <-stopDone:
	case <-time.After(Timeout):
		t.Fatalf("stop did not return within %v after fn did", Timeout)
	}
	if inFn.Load() {
		t.Errorf("stop returned before fn did")
	}
	// Changes after stop must not reach fn; a second watcher proves the
	// change was published.
	rec := watch(t, newReg(t), k)
	register(t, r, provider(k, "10.0.0.1:80"))
	rec.WaitFor(t, "the provider", HasAddrs("10.0.0.1:80"))
	stop() // idempotent
}

func testCoalesce(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	p, c := newReg(t), newReg(t)
	rec := NewRecorder()
	release := make(chan struct{})
	var first sync.Once
	rec.onCall = func(registry.Snapshot) { first.Do(func() { <-release }) }
	stop, err := c.Watch(k, rec.Fn)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	t.Cleanup(stop)
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before stop, which waits for fn, even on failure
	const n = 20
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf("10.0.2.%02d:80", i)
		register(t, p, provider(k, want[i]))
	}
	unblock()
	rec.WaitFor(t, "all providers", HasAddrs(want...))
	if _, calls := rec.Latest(); calls > n/2 {
		t.Errorf("a blocked watcher got %d snapshots for %d changes; want a coalesced few", calls, n)
	}
}

func testBadEndpoints(t *testing.T, newReg func(*testing.T) registry.Registry) {
	r := newReg(t)
	k := UniqueKey(t)
	for _, e := range []registry.Endpoint{
		{Key: k, Role: registry.Provider},                          // no addr
		{Role: registry.Provider, Addr: "a:1"},                     // no service
		{Key: k, Role: "boss", Addr: "a:1"},                        // bad role
		{Key: k, Role: registry.Provider, Addr: "a:1", Weight: -1}, // bad weight
		{Key: k, Role: registry.Provider, Addr: "a:1", Weight: registry.MaxWeight + 1},
		{Key: k, Role: registry.Provider, Addr: "a"}, // not host:port
		{Key: k, Role: registry.Provider, Addr: "a:1", PayloadVersion: registry.PayloadVersion + 1},
	} {
		if err := r.Register(ctx(t), e); err == nil {
			t.Errorf("Register(%+v) = nil, want an error", e)
		}
	}
	if _, err := r.Watch(registry.Key{}, func(registry.Snapshot) {}); err == nil {
		t.Errorf("Watch of an empty key = nil error, want an error")
	}
}

func governor(t *testing.T, r registry.Registry) registry.Governor {
	g, ok := r.(registry.Governor)
	if !ok {
		t.Skipf("%T does not implement registry.Governor", r)
	}
	return g
}

func testGovernance(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	p, c := newReg(t), newReg(t)
	g := governor(t, p)
	cfg, err := g.Config(ctx(t), k)
	if err != nil || cfg.RateLimit != nil || len(cfg.Instances) != 0 || len(cfg.Mocks) != 0 {
		t.Fatalf("Config of a new key = %+v, %v; want the zero Config", cfg, err)
	}
	register(t, p, provider(k, "10.0.0.1:80"))
	rec := watch(t, c, k)
	rec.WaitFor(t, "the provider", HasAddrs("10.0.0.1:80"))

	err = g.UpdateConfig(ctx(t), k, func(c *registry.Config) error {
		c.RateLimit = &registry.RateLimit{Rate: 300, Burst: 500}
		c.Instances = map[string]registry.InstanceConfig{"10.0.0.1:80": {Draining: true}}
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateConfig: %v", err)
	}
	rec.WaitFor(t, "the new config", func(s registry.Snapshot) bool {
		return s.Config.RateLimit != nil && s.Config.RateLimit.Rate == 300 &&
			s.Config.Instances["10.0.0.1:80"].Draining && len(s.Providers) == 1
	})
	cfg, err = governor(t, c).Config(ctx(t), k)
	if err != nil || cfg.RateLimit == nil || cfg.RateLimit.Burst != 500 {
		t.Errorf("Config from another registry = %+v, %v", cfg, err)
	}

	boom := errors.New("boom")
	err = g.UpdateConfig(ctx(t), k, func(c *registry.Config) error {
		c.RateLimit = nil
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("UpdateConfig with a failing fn = %v, want %v", err, boom)
	}
	if cfg, _ := g.Config(ctx(t), k); cfg.RateLimit == nil {
		t.Errorf("a failed UpdateConfig changed the config: %+v", cfg)
	}
}

func testGovernanceConcurrent(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	const writers, each = 4, 10
	gs := make([]registry.Governor, writers)
	for i := range gs {
		gs[i] = governor(t, newReg(t))
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := gs[i].UpdateConfig(context.Background(), k, func(c *registry.Config) error {
					if c.Instances == nil {
						c.Instances = map[string]registry.InstanceConfig{}
					}
					ic := c.Instances["counter"]
					ic.Weight++
					c.Instances["counter"] = ic
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("UpdateConfig: %v", err)
	}
	cfg, err := gs[0].Config(ctx(t), k)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	if got := cfg.Instances["counter"].Weight; got != writers*each {
		t.Errorf("counter after %d concurrent increments = %d (lost updates)", writers*each, got)
	}
}

// testGovernanceBadValues: UpdateConfig refuses what Config.Check refuses,
// as `yrpcc ctl` does, with an error naming the service, the field and the
// value, and stores nothing.
func testGovernanceBadValues(t *testing.T, newReg func(*testing.T) registry.Registry) {
	k := UniqueKey(t)
	g := governor(t, newReg(t))
	good := &registry.RateLimit{Rate: 5, Burst: 5}
	if err := g.UpdateConfig(ctx(t), k, func(c *registry.Config) error { c.RateLimit = good; return nil }); err != nil {
		t.Fatalf("UpdateConfig: %v", err)
	}
	rate := func(r float64) func(*registry.Config) {
		return func(c *registry.Config) { c.RateLimit = &registry.RateLimit{Rate: r, Burst: 1} }
	}
	weight := func(w int) func(*registry.Config) {
		return func(c *registry.Config) {
			c.Instances = map[string]registry.InstanceConfig{"10.0.0.1:80": {Weight: w}}
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*registry.Config)
		want []string // in the error, with the service
	}{
		{"NaN rate", rate(math.NaN()), []string{"rate limit", "rate NaN"}},
		{"+Inf rate", rate(math.Inf(1)), []string{"rate limit", "rate +Inf"}},
		{"-Inf rate", rate(math.Inf(-1)), []string{"rate limit", "rate -Inf"}},
		{"zero rate", rate(0), []string{"rate limit", "rate 0"}},
		{"negative rate", rate(-1), []string{"rate limit", "rate -1"}},
		{"negative burst", func(c *registry.Config) { c.RateLimit = &registry.RateLimit{Rate: 1, Burst: -1} }, []string{"rate limit", "burst -1"}},
		{"negative weight", weight(-1), []string{`instance "10.0.0.1:80"`, "weight -1"}},
		{"weight over MaxWeight", weight(registry.MaxWeight + 1), []string{`instance "10.0.0.1:80"`, "weight 10001"}},
	} {
		err := g.UpdateConfig(ctx(t), k, func(c *registry.Config) error { tc.edit(c); return nil })
		if err == nil {
			t.Errorf("%s: UpdateConfig stored it, want an error", tc.name)
			continue
		}
		for _, w := range append(tc.want, k.Service) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: UpdateConfig error %q does not say %q", tc.name, err, w)
			}
		}
	}
	cfg, err := g.Config(ctx(t), k)
	if err != nil || cfg.RateLimit == nil || *cfg.RateLimit != *good || len(cfg.Instances) != 0 {
		t.Errorf("config after refused updates = %+v, %v; want the good rate limit alone", cfg, err)
	}
	// A burst of 0 (a second's worth of calls) and a weight of MaxWeight
	// are fine.
	err = g.UpdateConfig(ctx(t), k, func(c *registry.Config) error {
		c.RateLimit = &registry.RateLimit{Rate: 1}
		weight(registry.MaxWeight)(c)
		return nil
	})
	if err != nil {
		t.Errorf("UpdateConfig with burst 0 and weight %d: %v", registry.MaxWeight, err)
	}
}
