package rt_test

// The behaviour the seed documents (shared/seeds: Dubbo's mock and service
// degradation, fault modes, retries, weights, filters and routers) centre
// on, through the users example's generated code, as a user of it sees it:
// providers on an in-memory network, found in a Memory registry.

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/memnet"
	"github.com/yrpc/yrpc/rt/registry"
)

// usersProvider serves the users example's methods that the seed tests
// call. Each answers a User named after the provider, fails with
// Unavailable while fail is set, or waits for its context while block is.
type usersProvider struct {
	userrpc.UnimplementedUsersServer
	addr  string
	fail  atomic.Bool
	block atomic.Bool
	calls atomic.Int64
	mds   chan rt.MD // each call's incoming metadata
}

func (p *usersProvider) answer(ctx context.Context) (*userrpc.User, error) {
	p.calls.Add(1)
	p.mds <- slices.Clone(rt.IncomingMetadata(ctx))
	switch {
	case p.block.Load():
		<-ctx.Done()
		return nil, ctx.Err()
	case p.fail.Load():
		return nil, rt.Errorf(rt.Unavailable, "%s is failing", p.addr)
	}
	return &userrpc.User{ID: 1, Name: p.addr}, nil
}

func (p *usersProvider) Get(ctx context.Context, _ *userrpc.GetUser) (*userrpc.User, error) {
	return p.answer(ctx)
}

func (p *usersProvider) Guest(ctx context.Context, _ *userrpc.GetUser) (*userrpc.User, error) {
	return p.answer(ctx)
}

func (p *usersProvider) Create(ctx context.Context, _ *userrpc.CreateUser) (*userrpc.User, error) {
	return p.answer(ctx)
}

func (p *usersProvider) Rename(ctx context.Context, _ *userrpc.CreateUser) (*userrpc.User, error) {
	return p.answer(ctx)
}

func (p *usersProvider) Audit(ctx context.Context, _ *userrpc.TouchUser) (*userrpc.User, error) {
	return p.answer(ctx)
}

// usersFleet is n providers of the users service, registered under the
// schema's group and version by the test (so that a provider that is not
// serving stays listed, as a crashed one does until its session expires),
// and the clients the test makes.
type usersFleet struct {
	t     *testing.T
	net   *memnet.Network
	reg   *registry.Memory
	key   registry.Key
	ps    []*usersProvider
	clock *fakeClock
	obs   *countObserver
}

// newUsersFleet starts n providers; those listed in down are registered but
// never serve (dialing them fails).
func newUsersFleet(t *testing.T, n int, down ...int) *usersFleet {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	sd := &userrpc.UsersServiceDesc
	f := &usersFleet{t: t, net: memnet.New(), reg: registry.NewMemory(), clock: newFakeClock(), obs: &countObserver{},
		key: registry.Key{Service: sd.Name, Group: sd.Group, Version: sd.Version}}
	t.Cleanup(func() { f.reg.Close() })
	for i := range n {
		p := &usersProvider{addr: fmt.Sprintf("users-%d:7001", i), mds: make(chan rt.MD, 1000)}
		f.ps = append(f.ps, p)
		if err := f.reg.Register(context.Background(), registry.Endpoint{Key: f.key, Role: registry.Provider, Addr: p.addr, Weight: 100}); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(down, i) {
			continue
		}
		lis, err := f.net.Listen(p.addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := rt.NewServer()
		userrpc.RegisterUsers(srv, p)
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), lis) }()
		t.Cleanup(func() { srv.Close(); <-done })
	}
	return f
}

// client returns a typed client of the fleet; opts come after the fleet's
// registry, dialer, observer and clock, and may replace them.
func (f *usersFleet) client(opts ...rt.ClientOption) *userrpc.UsersClient {
	_, users := f.clients(opts...)
	return users
}

// clients is client that returns the rt.Client under the typed one too.
func (f *usersFleet) clients(opts ...rt.ClientOption) (*rt.Client, *userrpc.UsersClient) {
	f.t.Helper()
	all := append([]rt.ClientOption{rt.WithRegistry(f.reg.Conn()), rt.WithDialer(f.net.Dial), rt.WithObserver(f.obs), rt.WithClock(f.clock)}, opts...)
	cli, err := rt.NewClient(all...)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cli.Close() })
	return cli, userrpc.NewUsersClient(cli)
}

// configure changes the fleet's governance config, as `yrpcc ctl` does.
func (f *usersFleet) configure(fn func(*registry.Config)) {
	f.t.Helper()
	if err := f.reg.UpdateConfig(context.Background(), f.key, func(c *registry.Config) error { fn(c); return nil }); err != nil {
		f.t.Fatal(err)
	}
}

// calls returns each provider's number of executed calls.
func (f *usersFleet) calls() []int64 {
	out := make([]int64, len(f.ps))
	for i, p := range f.ps {
		out[i] = p.calls.Load()
	}
	return out
}

// until calls cond until it holds, failing the test after 5 s: the
// registry delivers config to clients asynchronously.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for stop := time.Now().Add(5 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(stop) {
			t.Fatalf("%s: not within 5s", what)
		}
	}
}

// newUser is a CreateUser that passes validation.
func newUser() *userrpc.CreateUser {
	return &userrpc.CreateUser{Name: "x", Emails: []string{"x@example.com"}, Address: &userrpc.Address{City: "Berlin", Zip: "10115", Country: "DE"}}
}

// Seed 002's service degradation: a method with a mock answers with it
// when the provider fails or does not answer in time, and a mock set in
// the governance config does the same for a method the schema gave none;
// a call that succeeds is never mocked.
func TestSeedFallbackMock(t *testing.T) {
	f := newUsersFleet(t, 1)
	p := f.ps[0]
	users := f.client()
	ctx := ctxT(t)
	var md rt.MD

	// Healthy: the provider's answer, not the mock.
	u, err := users.Guest(ctx, &userrpc.GetUser{ID: 1}, rt.ResponseMetadata(&md))
	if err != nil || u.Name != p.addr || md.Get(rt.MDMock) != "" {
		t.Fatalf("healthy Guest = %+v, %v (md %v), want the provider's answer", u, err, md)
	}

	// Failing: Guest's mock value, Create's empty mock.
	p.fail.Store(true)
	u, err = users.Guest(ctx, &userrpc.GetUser{ID: 1}, rt.ResponseMetadata(&md))
	if err != nil || u.Name != "guest" || md.Get(rt.MDMock) != "fallback" {
		t.Fatalf("Guest on a failing provider = %+v, %v (md %v), want the mock value", u, err, md)
	}
	u, err = users.Create(ctx, newUser())
	if err != nil || !cmp.Equal(u, &userrpc.User{}) {
		t.Fatalf("Create on a failing provider = %+v, %v, want the empty mock", u, err)
	}

	// Timed out: the seed's case (the provider takes longer than the
	// timeout, the consumer gets the mock). The handler sees its context
	// end.
	p.fail.Store(false)
	p.block.Store(true)
	before := p.calls.Load()
	u, err = users.Guest(ctx, &userrpc.GetUser{ID: 1}, rt.WithCallTimeout(50*time.Millisecond), rt.ResponseMetadata(&md))
	if err != nil || u.Name != "guest" || md.Get(rt.MDMock) != "fallback" {
		t.Fatalf("Guest timing out = %+v, %v (md %v), want the mock value", u, err, md)
	}
	if p.calls.Load() != before+1 {
		t.Fatalf("the provider ran %d calls, want 1: the mock answered after the call timed out", p.calls.Load()-before)
	}

	// Rename has no mock: it times out...
	rename := newUser()
	if _, err := users.Rename(ctx, rename, rt.WithCallTimeout(50*time.Millisecond)); rt.CodeOf(err) != rt.DeadlineExceeded {
		t.Fatalf("Rename timing out = %v, want DeadlineExceeded", err)
	}
	// ...until an operator sets an on-failure mock with a value (seed 002's
	// dynamic configuration, not forced).
	cached := &userrpc.User{ID: 7, Name: "cached"}
	f.configure(func(c *registry.Config) {
		c.Mocks = map[string]registry.MockConfig{"Rename": {Action: "value", Value: cached.MarshalAppend(nil)}}
	})
	until(t, "the config mock reaching the client", func() bool {
		u, err := users.Rename(ctx, rename, rt.WithCallTimeout(50*time.Millisecond), rt.ResponseMetadata(&md))
		return err == nil && md.Get(rt.MDMock) == "fallback" && u.Name == cached.Name && u.ID == cached.ID
	})
	// Not forced: once the provider answers again, its answer wins.
	p.block.Store(false)
	if u, err := users.Rename(ctx, rename, rt.ResponseMetadata(&md)); err != nil || u.Name != p.addr || md.Get(rt.MDMock) != "" {
		t.Fatalf("Rename with an on-failure config mock and a healthy provider = %+v, %v (md %v)", u, err, md)
	}
}

// Failfast returns the first failure (no other provider is tried, even
// for an idempotent method); failsafe swallows it and answers an empty
// response. Either way each call runs once.
func TestSeedFailfastAndFailsafe(t *testing.T) {
	const n = 10 // calls per provider; below the breaker's minimum volume (20)
	ctx := ctxT(t)
	cases := []struct {
		name     string
		failsafe bool
		call     func(*userrpc.UsersClient) (*userrpc.User, error)
	}{
		{"Rename (schema failfast)", false, func(c *userrpc.UsersClient) (*userrpc.User, error) {
			return c.Rename(ctx, newUser())
		}},
		{"Get with WithFaultMode(FaultFailfast)", false, func(c *userrpc.UsersClient) (*userrpc.User, error) {
			return c.Get(ctx, &userrpc.GetUser{ID: 1}, rt.WithFaultMode(rt.FaultFailfast))
		}},
		{"Audit (schema failsafe)", true, func(c *userrpc.UsersClient) (*userrpc.User, error) {
			return c.Audit(ctx, &userrpc.TouchUser{ID: 1})
		}},
		{"Rename with WithFaultMode(FaultFailsafe)", true, func(c *userrpc.UsersClient) (*userrpc.User, error) {
			return c.Rename(ctx, newUser(), rt.WithFaultMode(rt.FaultFailsafe))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newUsersFleet(t, 2)
			f.ps[0].fail.Store(true)
			// Round robin: every other call goes to the failing provider.
			users := f.client(rt.WithBalancer(balance.NewRoundRobin(balance.Options{})))
			failed, empty := 0, 0
			for range 2 * n {
				u, err := c.call(users)
				switch {
				case err != nil && !c.failsafe && rt.CodeOf(err) == rt.Unavailable && rt.IsRemote(err):
					failed++
				case err != nil:
					t.Fatalf("call failed with %v", err)
				case u == nil:
					t.Fatal("nil response without an error")
				case cmp.Equal(u, &userrpc.User{}):
					empty++
				case u.Name != f.ps[1].addr:
					t.Fatalf("answer %+v from an unexpected provider", u)
				}
			}
			if ran := f.calls(); !slices.Equal(ran, []int64{n, n}) {
				t.Fatalf("providers ran %v calls, want [%d %d]: a failure was retried", ran, n, n)
			}
			if want := map[bool][2]int{false: {n, 0}, true: {0, n}}[c.failsafe]; [2]int{failed, empty} != want {
				t.Fatalf("%d errors and %d empty answers, want %d and %d", failed, empty, want[0], want[1])
			}
		})
	}
}

// A retried call waits the schema's interval between attempts, grown by
// the backoff factor (Get: Retry(3, 50ms).Backoff(2, 1s).Jitter(0.2)),
// on the client's clock; each retry carries its attempt number in the
// "yrpc-attempt" metadata and goes to another provider.
func TestSeedRetryIntervalAndAttemptMetadata(t *testing.T) {
	f := newUsersFleet(t, 3)
	for _, p := range f.ps {
		p.fail.Store(true)
	}
	users := f.client()
	done := make(chan error, 1)
	go func() {
		// A long call timeout: the wall clock must not end the call while
		// the test moves the client's clock.
		_, err := users.Get(context.Background(), &userrpc.GetUser{ID: 1}, rt.WithCallTimeout(time.Minute))
		done <- err
	}()
	total := func() int64 {
		var n int64
		for _, c := range f.calls() {
			n += c
		}
		return n
	}
	waitBackoff := func(attempts int64) {
		t.Helper()
		until(t, fmt.Sprintf("attempt %d and its backoff", attempts), func() bool {
			return total() == attempts && f.clock.Waiters() == 1
		})
	}
	// Each wait lies within ±20 % of its nominal interval: not over before
	// the lower bound, over after the upper one.
	for _, step := range []struct {
		attempts int64
		nominal  time.Duration
	}{{1, 50 * time.Millisecond}, {2, 100 * time.Millisecond}} {
		waitBackoff(step.attempts)
		low, high := step.nominal*8/10, step.nominal*12/10
		f.clock.Advance(low - time.Millisecond)
		if f.clock.Waiters() != 1 || total() != step.attempts {
			t.Fatalf("after attempt %d the retry came before %v", step.attempts, low)
		}
		f.clock.Advance(high - low + 2*time.Millisecond)
	}
	if err := <-done; rt.CodeOf(err) != rt.Unavailable {
		t.Fatalf("Get = %v, want Unavailable after 3 attempts", err)
	}
	if n := total(); n != 3 {
		t.Fatalf("%d attempts ran, want 3", n)
	}
	attempts := map[string]string{} // yrpc-attempt -> provider
	for _, p := range f.ps {
		for len(p.mds) > 0 {
			attempts[(<-p.mds).Get(rt.MDAttempt)] = p.addr
		}
	}
	if len(attempts) != 3 || attempts[""] == "" || attempts["2"] == "" || attempts["3"] == "" {
		t.Fatalf("attempt metadata by provider: %v, want the first without %s, then 2 and 3, each on its own provider", attempts, rt.MDAttempt)
	}
}

// A weight set in the governance config (`yrpcc ctl weight`) replaces the
// provider's own and moves its share of the traffic.
func TestSeedWeightOverride(t *testing.T) {
	f := newUsersFleet(t, 2)
	rc, cli := f.clients(rt.WithBalancer(balance.NewWeightedRoundRobin(balance.Options{})))
	ctx := ctxT(t)
	share := func(calls int) []int64 {
		t.Helper()
		before := f.calls()
		for range calls {
			if _, err := cli.Get(ctx, &userrpc.GetUser{ID: 1}); err != nil {
				t.Fatal(err)
			}
		}
		after := f.calls()
		return []int64{after[0] - before[0], after[1] - before[1]}
	}
	if got := share(40); !slices.Equal(got, []int64{20, 20}) {
		t.Fatalf("equal weights: providers served %v of 40 calls, want [20 20]", got)
	}
	f.configure(func(c *registry.Config) {
		c.Instances = map[string]registry.InstanceConfig{f.ps[0].addr: {Weight: 300}}
	})
	until(t, "the weight reaching the client", func() bool {
		ps := rc.Providers(&userrpc.UsersServiceDesc)
		return len(ps) == 2 && ps[0].Weight == 300
	})
	if got := share(40); !slices.Equal(got, []int64{30, 10}) {
		t.Fatalf("weights 300 and 100: providers served %v of 40 calls, want [30 10]", got)
	}
}

// Client interceptors (Dubbo's filters) run in the order given, across
// WithClientInterceptors options, the first outermost; they wrap the whole
// call (once per call, however many attempts, and around a forced mock);
// metadata they add reaches the provider; one may answer by itself.
func TestSeedClientInterceptorOrder(t *testing.T) {
	f := newUsersFleet(t, 2, 1) // provider 1 is listed but down
	var mu sync.Mutex
	var trace []string
	record := func(s string) {
		mu.Lock()
		trace = append(trace, s)
		mu.Unlock()
	}
	named := func(name string) rt.ClientInterceptor {
		return func(ctx context.Context, info *rt.CallInfo, req, resp rt.Message, next rt.InvokeFunc) error {
			record(name + ">" + info.Method.Name)
			if name == "c" && req.(*userrpc.GetUser).ID == 42 {
				resp.(*userrpc.User).Name = "answered by c"
				record("<" + name)
				return nil
			}
			err := next(rt.WithMetadata(ctx, "via", name), info, req, resp)
			record("<" + name)
			return err
		}
	}
	users := f.client(rt.WithBalancer(balance.NewRoundRobin(balance.Options{})),
		rt.WithClientInterceptors(named("a"), named("b")), rt.WithClientInterceptors(named("c")))
	ctx := ctxT(t)
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := trace
		trace = nil
		return out
	}

	// Round robin sends every other call to the dead provider first: those
	// are retried on the live one, still inside one pass of the chain.
	attempts := f.obs.attempts.Load()
	for i := range 4 {
		if _, err := users.Get(ctx, &userrpc.GetUser{ID: 1}); err != nil {
			t.Fatal(err)
		}
		want := []string{"a>Get", "b>Get", "c>Get", "<c", "<b", "<a"}
		if got := take(); !slices.Equal(got, want) {
			t.Fatalf("call %d: interceptors ran %v, want %v", i, got, want)
		}
		if md := <-f.ps[0].mds; !slices.Equal(md.Values("via"), []string{"a", "b", "c"}) {
			t.Fatalf("call %d: the provider saw via=%v, want [a b c]", i, md.Values("via"))
		}
	}
	if n := f.obs.attempts.Load() - attempts; n <= 4 {
		t.Fatalf("4 calls made %d attempts: none was retried, the test proves nothing", n)
	}

	// c answers ID 42 itself: the provider never sees it.
	before := f.ps[0].calls.Load()
	u, err := users.Get(ctx, &userrpc.GetUser{ID: 42})
	if err != nil || u.Name != "answered by c" || f.ps[0].calls.Load() != before {
		t.Fatalf("Get(42) = %+v, %v; provider calls %d -> %d", u, err, before, f.ps[0].calls.Load())
	}
	if got, want := take(), []string{"a>Get", "b>Get", "c>Get", "<c", "<b", "<a"}; !slices.Equal(got, want) {
		t.Fatalf("short-circuited call: interceptors ran %v, want %v", got, want)
	}

	// Delete's forced mock answers under the interceptors.
	if _, err := users.Delete(ctx, &userrpc.GetUser{ID: 1}); !strings.Contains(fmt.Sprint(err), "deletes are disabled") {
		t.Fatalf("Delete = %v, want the forced mock's error", err)
	}
	if got, want := take(), []string{"a>Delete", "b>Delete", "c>Delete", "<c", "<b", "<a"}; !slices.Equal(got, want) {
		t.Fatalf("forced mock: interceptors ran %v, want %v", got, want)
	}
}

// logSink is a slog.Handler that keeps every record's message and
// attributes, for tests that read what the runtime logged.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s *logSink) WithGroup(string) slog.Handler            { return s }

func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	s.mu.Lock()
	s.lines = append(s.lines, line)
	s.mu.Unlock()
	return nil
}

// matching returns the lines that contain every one of parts.
func (s *logSink) matching(parts ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lines {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(l, p) }) {
			out = append(out, l)
		}
	}
	return out
}

// WithDebug(true) logs, at debug level, why each provider was left out of
// a call: draining by config, an open breaker, a failed attempt. Without
// it the same logger gets none of that.
func TestSeedDebugExclusionTrace(t *testing.T) {
	for _, debug := range []bool{true, false} {
		t.Run(fmt.Sprintf("debug=%v", debug), func(t *testing.T) {
			f := newUsersFleet(t, 3, 1) // 1 is dead
			f.configure(func(c *registry.Config) {
				c.Instances = map[string]registry.InstanceConfig{f.ps[2].addr: {Draining: true}}
			})
			sink := &logSink{}
			users := f.client(rt.WithLogger(slog.New(sink)), rt.WithDebug(debug),
				rt.WithBalancer(balance.NewRoundRobin(balance.Options{})))
			ctx := ctxT(t)
			dead, draining := "addr="+f.ps[1].addr, "addr="+f.ps[2].addr
			// Every call succeeds on provider 0; the dead one's breaker
			// opens after 5 failed connections in a row.
			until(t, "the dead provider's breaker opening", func() bool {
				if _, err := users.Get(ctx, &userrpc.GetUser{ID: 1}); err != nil {
					t.Fatal(err)
				}
				return len(sink.matching("breaker state changed", dead, "to=open")) > 0
			})
			if _, err := users.Get(ctx, &userrpc.GetUser{ID: 1}); err != nil {
				t.Fatal(err)
			}
			traces := [][]string{
				{"DEBUG rt: provider excluded: draining", draining},
				{"DEBUG rt: attempt failed", dead, "attempt=1", "method=users.Users/Get"},
				{"DEBUG rt: provider excluded: breaker open", dead},
			}
			for _, tr := range traces {
				got := len(sink.matching(tr...)) > 0
				if got != debug {
					t.Errorf("log has a line with %q: %v, want %v; log:\n%s", tr, got, debug, strings.Join(sink.matching(), "\n"))
				}
			}
			if n := f.ps[2].calls.Load(); n != 0 {
				t.Fatalf("the draining provider served %d calls", n)
			}
		})
	}
}
