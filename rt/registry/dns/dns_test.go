package dns

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.DiscardHandler)

func TestDefaultName(t *testing.T) {
	tests := []struct {
		key  registry.Key
		want string
	}{
		{registry.Key{Service: "shop.Catalog"}, "shop-catalog"},
		{registry.Key{Service: "shop.v1.Catalog", Group: "EU", Version: "1.2.0"}, "shop-v1-catalog-eu-1-2-0"},
		{registry.Key{Service: "shop.Catalog", Version: "2"}, "shop-catalog-2"},
		{registry.Key{Service: "_x.Y_"}, "x-y"},
	}
	for _, tt := range tests {
		if got := DefaultName(tt.key); got != tt.want {
			t.Errorf("DefaultName(%s) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		err  string // "" means no error
	}{
		{"no port", Options{}, "port 0 out of range"},
		{"port too big", Options{Port: 70000}, "port 70000 out of range"},
		{"port", Options{Port: 7000}, ""},
		{"srv needs no port", Options{SRV: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(tt.o)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("New = %v", err)
				}
				if r.o.Period != DefaultPeriod || r.o.LookupTimeout != DefaultLookupTimeout || r.o.Resolver != net.DefaultResolver {
					t.Errorf("defaults not applied: %+v", r.o)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("New = %v, want an error containing %q", err, tt.err)
			}
		})
	}
}

// answer is one lookup's outcome in a test sequence.
type answer struct {
	hosts []string // nil: NXDOMAIN
	err   error
}

func TestRefresh(t *testing.T) {
	down := errors.New("server misbehaving")
	a, b := []string{"10.0.0.2", "10.0.0.1"}, []string{"10.0.0.1", "::1"}
	tests := []struct {
		name    string
		answers []answer
		want    [][]string // per answer: the providers published, or nil for none
	}{
		{"first answer is published even if empty", []answer{{}, {}}, [][]string{{}, nil}},
		{"first failure is published empty", []answer{{err: down}, {hosts: a}}, [][]string{{}, {"10.0.0.1:7000", "10.0.0.2:7000"}}},
		{"identical answers coalesce", []answer{{hosts: a}, {hosts: a}, {hosts: []string{"10.0.0.1", "10.0.0.2", "10.0.0.1"}}},
			[][]string{{"10.0.0.1:7000", "10.0.0.2:7000"}, nil, nil}},
		{"a change is published", []answer{{hosts: a}, {hosts: b}}, [][]string{{"10.0.0.1:7000", "10.0.0.2:7000"}, {"10.0.0.1:7000", "[::1]:7000"}}},
		{"failure keeps the last good", []answer{{hosts: a}, {err: down}, {hosts: a}}, [][]string{{"10.0.0.1:7000", "10.0.0.2:7000"}, nil, nil}},
		{"empty keeps the last good", []answer{{hosts: a}, {}, {hosts: []string{}}, {hosts: b}},
			[][]string{{"10.0.0.1:7000", "10.0.0.2:7000"}, nil, nil, {"10.0.0.1:7000", "[::1]:7000"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &fakeResolver{}
			r, err := New(Options{Resolver: res, Port: 7000, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			key := registry.Key{Service: "shop.Catalog"}
			w := &watch{r: r, key: key, name: "shop-catalog"}
			for i, ans := range tt.answers {
				res.set("shop-catalog", ans.hosts...) // nil: NXDOMAIN; empty: no records
				res.setErr(ans.err)
				s, ok := w.refresh(context.Background())
				want := tt.want[i]
				if ok != (want != nil) {
					t.Fatalf("answer %d: published %v (%s), want %v", i, ok, registrytest.Describe(s), want != nil)
				}
				if ok && (!slices.Equal(registrytest.Addrs(s), want) || s.Key != key) {
					t.Fatalf("answer %d: published %s, want key %s providers %v", i, registrytest.Describe(s), key, want)
				}
			}
		})
	}
}

func TestFromSRV(t *testing.T) {
	key := registry.Key{Service: "shop.Catalog"}
	srv := func(target string, port, prio, weight uint16) *net.SRV {
		return &net.SRV{Target: target, Port: port, Priority: prio, Weight: weight}
	}
	type ep struct {
		addr   string
		weight int
	}
	tests := []struct {
		name string
		srvs []*net.SRV
		want []ep
	}{
		{"weights kept, sorted, trailing dot dropped",
			[]*net.SRV{srv("b.shop.", 7000, 0, 30), srv("a.shop.", 7001, 0, 70)},
			[]ep{{"a.shop:7001", 70}, {"b.shop:7000", 30}}},
		{"all weights 0: equal shares", []*net.SRV{srv("a.", 1, 0, 0), srv("b.", 2, 0, 0)}, []ep{{"a:1", 0}, {"b:2", 0}}},
		{"weight 0 beside others gets the least, not the default", []*net.SRV{srv("a.", 1, 0, 0), srv("b.", 2, 0, 5)}, []ep{{"a:1", 1}, {"b:2", 5}}},
		{"backups left out", []*net.SRV{srv("a.", 1, 10, 5), srv("b.", 2, 20, 5), srv("c.", 3, 10, 5)}, []ep{{"a:1", 5}, {"c:3", 5}}},
		{"no service target", []*net.SRV{srv(".", 0, 0, 0)}, nil},
		{"duplicates merged", []*net.SRV{srv("a.", 1, 0, 5), srv("a.", 1, 0, 9)}, []ep{{"a:1", 9}}},
		{"ipv6 target", []*net.SRV{srv("::1", 7000, 0, 0)}, []ep{{"[::1]:7000", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []ep
			for _, e := range fromSRV(key, tt.srvs) {
				if e.Key != key || e.Role != registry.Provider {
					t.Errorf("endpoint %+v has the wrong key or role", e)
				}
				got = append(got, ep{e.Addr, e.Weight})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("fromSRV = %v, want %v", got, tt.want)
			}
		})
	}
}

// newTicking returns a Registry on res whose watches tick when the test
// sends on the returned channel.
func newTicking(t *testing.T, o Options) (*Registry, *fakeTicks) {
	t.Helper()
	ticks := &fakeTicks{c: make(chan time.Time), stopped: make(chan struct{})}
	o.NewTicker = func(d time.Duration) Ticker { ticks.period = d; return ticks }
	o.Logger = quiet
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, ticks
}

// tick sends one tick. The watch takes it only once it has handled the
// previous one, so tick also waits for that; it fails t if the watch does
// not take the tick.
func (ft *fakeTicks) tick(t *testing.T) {
	t.Helper()
	select {
	case ft.c <- time.Time{}:
	case <-time.After(registrytest.Timeout):
		t.Fatal("the watch did not take a tick")
	}
}

func TestWatch(t *testing.T) {
	res := &fakeResolver{}
	res.set("shop-catalog", "10.0.0.1")
	r, ticks := newTicking(t, Options{Resolver: res, Port: 7000, Period: time.Minute})
	rec := registrytest.NewRecorder()
	stop, err := r.Watch(registry.Key{Service: "shop.Catalog"}, rec.Fn)
	if err != nil {
		t.Fatal(err)
	}
	rec.WaitFor(t, "the first answer", registrytest.HasAddrs("10.0.0.1:7000"))
	if ticks.period != time.Minute {
		t.Errorf("ticker period = %v, want the configured minute", ticks.period)
	}

	res.set("shop-catalog", "10.0.0.2", "10.0.0.1")
	ticks.tick(t)
	rec.WaitFor(t, "a new pod", registrytest.HasAddrs("10.0.0.1:7000", "10.0.0.2:7000"))

	// A tick returns before its lookup runs; the next tick returns after it
	// was handled. So each state below is seen by at least one lookup.
	res.set("shop-catalog") // NXDOMAIN: every pod gone, or DNS trouble
	ticks.tick(t)
	ticks.tick(t)
	res.setErr(errors.New("timeout"))
	ticks.tick(t)
	ticks.tick(t)
	res.setErr(nil)
	res.set("shop-catalog", "10.0.0.3")
	ticks.tick(t)
	s, n := rec.WaitFor(t, "the next good answer", registrytest.HasAddrs("10.0.0.3:7000")), 0
	if _, n = rec.Latest(); n != 3 {
		t.Errorf("fn called %d times, want 3: the failed and empty lookups published something", n)
	}
	if s.Providers[0].Key.Service != "shop.Catalog" || s.Providers[0].Role != registry.Provider {
		t.Errorf("provider = %+v", s.Providers[0])
	}

	stop()
	select {
	case <-ticks.stopped:
	default:
		t.Error("stop did not stop the ticker")
	}
	select {
	case ticks.c <- time.Time{}:
		t.Error("the watch took a tick after stop returned")
	default:
	}
	stop() // idempotent
}

func TestWatchSRVName(t *testing.T) {
	res := &fakeResolver{srvs: map[string][]*net.SRV{
		"_yrpc._tcp.catalog.shop.svc.cluster.local": {{Target: "10-0-0-1.catalog.shop.svc.cluster.local.", Port: 7000, Weight: 10}},
	}}
	r, _ := newTicking(t, Options{Resolver: res, SRV: true, SRVService: "yrpc",
		Name: func(k registry.Key) string {
			return Label(k.Service[strings.IndexByte(k.Service, '.')+1:]) + ".shop.svc.cluster.local"
		}})
	rec := registrytest.NewRecorder()
	stop, err := r.Watch(registry.Key{Service: "shop.Catalog"}, rec.Fn)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s := rec.WaitFor(t, "the SRV answer", registrytest.HasAddrs("10-0-0-1.catalog.shop.svc.cluster.local:7000"))
	if s.Providers[0].Weight != 10 {
		t.Errorf("weight = %d, want the record's 10", s.Providers[0].Weight)
	}
}

func TestCloseAndErrors(t *testing.T) {
	res := &fakeResolver{}
	r, ticks := newTicking(t, Options{Resolver: res, Port: 7000, Name: func(k registry.Key) string {
		if k.Group == "none" {
			return ""
		}
		return DefaultName(k)
	}})
	ctx := context.Background()
	e := registry.Endpoint{Key: registry.Key{Service: "shop.Catalog"}, Role: registry.Provider, Addr: "10.0.0.1:7000"}
	if err := r.Register(ctx, e); err != nil {
		t.Errorf("Register = %v, want nil (a no-op)", err)
	}
	if err := r.Register(ctx, registry.Endpoint{}); err == nil {
		t.Error("Register of an invalid endpoint succeeded")
	}
	if err := r.Deregister(ctx, e); err != nil {
		t.Errorf("Deregister = %v, want nil", err)
	}
	if _, err := r.Watch(registry.Key{}, func(registry.Snapshot) {}); err == nil {
		t.Error("Watch of an empty key succeeded")
	}
	if _, err := r.Watch(registry.Key{Service: "a.B", Group: "none"}, func(registry.Snapshot) {}); err == nil || !strings.Contains(err.Error(), "empty DNS name") {
		t.Errorf("Watch with an empty name = %v", err)
	}

	rec := registrytest.NewRecorder()
	stop, err := r.Watch(registry.Key{Service: "shop.Catalog"}, rec.Fn)
	if err != nil {
		t.Fatal(err)
	}
	rec.WaitFor(t, "the first (empty) answer", registrytest.HasAddrs())
	select {
	case <-r.Done():
		t.Fatal("Done is closed before Close")
	default:
	}
	for range 2 {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-r.Done():
	default:
		t.Error("Done is not closed after Close")
	}
	select {
	case <-ticks.stopped:
	default:
		t.Error("Close did not stop the watch's ticker")
	}
	stop() // after Close: does nothing, returns
	for name, err := range map[string]error{
		"Register":   r.Register(ctx, e),
		"Deregister": r.Deregister(ctx, e),
	} {
		if !errors.Is(err, registry.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
	if _, err := r.Watch(registry.Key{Service: "shop.Catalog"}, rec.Fn); !errors.Is(err, registry.ErrClosed) {
		t.Errorf("Watch after Close = %v, want ErrClosed", err)
	}
}

// blockingResolver blocks every lookup until its context ends, and reports
// each lookup's context on started.
type blockingResolver struct{ started chan context.Context }

func (b blockingResolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	b.started <- ctx
	<-ctx.Done()
	return nil, ctx.Err()
}

func (b blockingResolver) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	_, err := b.LookupHost(ctx, name)
	return "", nil, err
}

func TestLookupContext(t *testing.T) {
	res := blockingResolver{started: make(chan context.Context, 1)}
	r, _ := newTicking(t, Options{Resolver: res, Port: 7000, LookupTimeout: time.Hour})
	rec := registrytest.NewRecorder()
	before := time.Now()
	stop, err := r.Watch(registry.Key{Service: "shop.Catalog"}, rec.Fn)
	if err != nil {
		t.Fatal(err)
	}
	var ctx context.Context
	select {
	case ctx = <-res.started:
	case <-time.After(registrytest.Timeout):
		t.Fatal("no lookup started")
	}
	if d, ok := ctx.Deadline(); !ok || d.Before(before.Add(time.Hour)) || d.After(time.Now().Add(time.Hour)) {
		t.Errorf("lookup deadline = %v (set %v), want LookupTimeout from the start", d, ok)
	}
	stop() // cancels the lookup in flight, or it would block for an hour
	if ctx.Err() == nil {
		t.Error("the lookup's context is still live after stop")
	}
	if _, n := rec.Latest(); n != 0 {
		t.Errorf("fn called %d times for a lookup canceled by stop", n)
	}
}
