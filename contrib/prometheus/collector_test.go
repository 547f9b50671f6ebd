package prometheus

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/memnet"
	"github.com/yrpc/yrpc/rt/registry"
)

// text is a message whose wire form is its string's bytes.
type text struct{ S string }

func (m *text) Size() int                     { return len(m.S) }
func (m *text) MarshalAppend(b []byte) []byte { return append(b, m.S...) }
func (m *text) Unmarshal(b []byte) error      { m.S = string(b); return nil }

// echo serves echoDesc: it fails every call when failing; a "hold" call
// signals held and waits for release or its context.
type echo struct {
	failing bool
	held    chan struct{}
	release chan struct{}
}

func (e *echo) call(ctx context.Context, req *text) (*text, error) {
	if e.failing {
		return nil, rt.Errorf(rt.Internal, "echo: failing")
	}
	if req.S == "hold" {
		e.held <- struct{}{}
		select {
		case <-e.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return req, nil
}

// openFor is how long echoDesc's breakers stay open.
const openFor = time.Minute

// echoDesc is a one-method service whose breakers trip after two failed
// results out of two.
var echoDesc = rt.ServiceDesc{
	Name: "test.Echo",
	Methods: []rt.MethodDesc{{
		Name: "Echo", FullName: "test.Echo/Echo", ID: 0x1001,
		NewRequest:  func() rt.Message { return new(text) },
		NewResponse: func() rt.Message { return new(text) },
		Handle: func(impl any, ctx context.Context, req rt.Message) (rt.Message, error) {
			return impl.(*echo).call(ctx, req.(*text))
		},
	}},
	MethodIndex: func(id uint32) int {
		if id == 0x1001 {
			return 0
		}
		return -1
	},
	Policy: rt.ServicePolicy{Breaker: rt.BreakerPolicy{MinRequests: 2, ErrorRate: 0.5, OpenFor: openFor}},
}

// fakeClock is an rt.Clock whose Now moves only when told, for the
// breakers; its After is the system's (these tests make no retries, the
// only waits the client makes on its clock).
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// session is a RegistrySource whose state the test sets.
type session struct{ up atomic.Bool }

func (s *session) Connected() bool { return s.up.Load() }

// startProvider serves impl at addr on network, registered in reg as
// serving or not.
func startProvider(t *testing.T, network *memnet.Network, reg registry.Registry, addr string, impl *echo, serving bool) *rt.Server {
	t.Helper()
	lis, err := network.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := rt.NewServer(rt.WithRegistry(reg), rt.WithAdvertiseAddr(addr), rt.WithObserver(nil))
	srv.RegisterService(&echoDesc, impl)
	srv.SetServing(serving)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), lis) }()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	select {
	case <-srv.Ready():
	case err := <-served:
		t.Fatalf("serve %s: %v", addr, err)
	}
	return srv
}

func call(cli *rt.Client, s string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cli.Invoke(ctx, &echoDesc, 0, &text{S: s}, new(text))
}

// TestCollectorLive scrapes a real client, server and registry session:
// a healthy provider with a call held in flight, a failing one whose
// breaker opens and then half-opens, a drained one and one not serving.
func TestCollectorLive(t *testing.T) {
	network, reg := memnet.New(), registry.NewMemory()
	t.Cleanup(func() { reg.Close() }) // after the providers' cleanups
	key := registry.Key{Service: echoDesc.Name}
	if err := reg.UpdateConfig(context.Background(), key, func(c *registry.Config) error {
		c.Instances = map[string]registry.InstanceConfig{"drained:1": {Draining: true}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	good := &echo{held: make(chan struct{}, 1), release: make(chan struct{})}
	srv := startProvider(t, network, reg, "good:1", good, true)
	startProvider(t, network, reg, "bad:1", &echo{failing: true}, true)
	startProvider(t, network, reg, "drained:1", &echo{}, true)
	startProvider(t, network, reg, "off:1", &echo{}, false)

	clock := &fakeClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	cli, err := rt.NewClient(rt.WithRegistry(reg), rt.WithDialer(network.Dial), rt.WithClock(clock), rt.WithObserver(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	sess := new(session)
	sess.up.Store(true)
	c, err := NewCollector(CollectorOptions{Client: cli, Server: srv, Registry: sess})
	if err != nil {
		t.Fatal(err)
	}
	promReg := prom.NewPedanticRegistry()
	promReg.MustRegister(c)

	// Call until the failing provider's breaker is open; p2c sends calls
	// to both routable providers.
	open := func() bool {
		for _, s := range cli.Stats().Services {
			for _, p := range s.Providers {
				if p.Addr == "bad:1" && p.Breaker == "open" {
					return true
				}
			}
		}
		return false
	}
	var ok, failed int
	for i := 0; i < 1000 && (!open() || ok == 0); i++ {
		if err := call(cli, "x"); err != nil {
			failed++
		} else {
			ok++
		}
	}
	if !open() || ok == 0 || failed == 0 {
		t.Fatalf("after %d good and %d failed calls: %+v, want bad:1 open", ok, failed, cli.Stats())
	}

	held := make(chan error, 1)
	go func() { held <- call(cli, "hold") }()
	<-good.held

	const head = `
yrpc_client_connections 2
yrpc_client_provider_in_flight{instance="bad:1",service="test.Echo"} 0
yrpc_client_provider_in_flight{instance="good:1",service="test.Echo"} %d
yrpc_client_providers{service="test.Echo",state="draining"} 1
yrpc_client_providers{service="test.Echo",state="not_serving"} 1
yrpc_client_providers{service="test.Echo",state="routable"} 2
yrpc_registry_connected %d
yrpc_server_connections 1
yrpc_server_in_flight %d
yrpc_server_serving 1
`
	const breakers = `
yrpc_client_provider_breaker_state{instance="bad:1",service="test.Echo"} %d
yrpc_client_provider_breaker_state{instance="good:1",service="test.Echo"} 0
`
	expect := func(want string) {
		t.Helper()
		if err := testutil.GatherAndCompare(promReg, strings.NewReader(exposition(want))); err != nil {
			t.Error(err)
		}
	}
	expect(fmt.Sprintf(head, 1, 1, 1) + fmt.Sprintf(breakers, BreakerOpen))

	clock.Advance(openFor)
	sess.up.Store(false)
	expect(fmt.Sprintf(head, 1, 0, 1) + fmt.Sprintf(breakers, BreakerHalfOpen))

	close(good.release)
	if err := <-held; err != nil {
		t.Fatalf("held call: %v", err)
	}
	// The server counts the call done once its answer is written, which
	// may come after the client has it.
	for i := 0; i < 1000 && srv.Stats().InFlight > 0; i++ {
		<-time.After(time.Millisecond)
	}
	expect(fmt.Sprintf(head, 0, 0, 0) + fmt.Sprintf(breakers, BreakerHalfOpen))
}

// help is each gauge's help text, by its name without the namespace.
var help = map[string]string{
	"client_provider_breaker_state": "State of the client's circuit breaker of a routable provider: 0 closed, 1 half-open, 2 open.",
	"client_provider_in_flight":     "Calls in flight from the client to a routable provider.",
	"client_providers":              "Providers the client knows of a service, by state (routable, draining, not_serving).",
	"client_connections":            "Open connections from the client to providers.",
	"server_connections":            "Open connections to the server.",
	"server_in_flight":              "Calls and streams in flight on the server.",
	"server_serving":                "1 if the server is serving (not shut down, drained or set not serving), else 0.",
	"registry_connected":            "1 if the registry has a session (ZooKeeper: a live session), else 0.",
}

// exposition adds the HELP and TYPE lines of the gauges to series, one
// per line and grouped by metric name, as the text format has them.
func exposition(series string) string {
	var b strings.Builder
	last := ""
	for line := range strings.Lines(series) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name, _, _ := strings.Cut(f[0], "{")
		if name != last {
			_, short, _ := strings.Cut(name, "_")
			fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help[short], name)
			last = name
		}
		b.WriteString(line)
	}
	return b.String()
}

// clientStats and serverStats are fixed snapshots, for the Collector's
// rules.
type clientStats rt.ClientStats

func (s clientStats) Stats() rt.ClientStats { return rt.ClientStats(s) }

type serverStats rt.ServerStats

func (s serverStats) Stats() rt.ServerStats { return rt.ServerStats(s) }

// providerGauges are the client's gauges of providers.
var providerGauges = []string{"yrpc_client_providers", "yrpc_client_provider_breaker_state", "yrpc_client_provider_in_flight"}

func TestCollectorRules(t *testing.T) {
	type ps = rt.ProviderStatus
	svc := func(name, key string, providers ...ps) rt.ServiceStats {
		return rt.ServiceStats{Name: name, Key: key, Providers: providers}
	}
	tests := []struct {
		name  string
		opts  CollectorOptions
		names []string // metrics compared; none: all
		want  string
	}{
		{
			name: "no sources",
		},
		{
			name: "server not serving, registry without session, namespace and const labels",
			opts: CollectorOptions{Server: serverStats{Conns: 3, InFlight: 7}, Registry: new(session),
				Namespace: "app", ConstLabels: prom.Labels{"zone": "eu"}},
			want: `
app_registry_connected{zone="eu"} 0
app_server_connections{zone="eu"} 3
app_server_in_flight{zone="eu"} 7
app_server_serving{zone="eu"} 0
`,
		},
		{
			name: "a service with no providers has zero counts",
			opts: CollectorOptions{Client: clientStats{Services: []rt.ServiceStats{svc("a.A", "a.A")}}},
			want: `
yrpc_client_connections 0
yrpc_client_providers{service="a.A",state="draining"} 0
yrpc_client_providers{service="a.A",state="not_serving"} 0
yrpc_client_providers{service="a.A",state="routable"} 0
`,
		},
		{
			name: "draining wins over not serving; neither has per-provider series",
			opts: CollectorOptions{Client: clientStats{Services: []rt.ServiceStats{svc("a.A", "a.A",
				ps{Addr: "h:1", Draining: true, NotServing: true},
				ps{Addr: "h:2", NotServing: true},
				ps{Addr: "h:3", Breaker: "half-open", Active: 4},
			)}}},
			names: providerGauges,
			want: `
yrpc_client_provider_breaker_state{instance="h:3",service="a.A"} 1
yrpc_client_provider_in_flight{instance="h:3",service="a.A"} 4
yrpc_client_providers{service="a.A",state="draining"} 1
yrpc_client_providers{service="a.A",state="not_serving"} 1
yrpc_client_providers{service="a.A",state="routable"} 1
`,
		},
		{
			name: "one service under two keys merges: calls add up, worst breaker, distinct addresses",
			opts: CollectorOptions{Client: clientStats{Services: []rt.ServiceStats{
				svc("a.A", "a.A[blue]", ps{Addr: "h:1", Breaker: "closed", Active: 2}, ps{Addr: "h:2", Breaker: "open"}),
				svc("b.B", "b.B", ps{Addr: "h:1", Breaker: "open", Active: 9}),
				svc("a.A", "a.A[green]", ps{Addr: "h:1", Breaker: "half-open", Active: 3}, ps{Addr: "h:3", Breaker: "closed"},
					ps{Addr: "h:2", Draining: true}),
			}}},
			names: providerGauges,
			want: `
yrpc_client_provider_breaker_state{instance="h:1",service="a.A"} 1
yrpc_client_provider_breaker_state{instance="h:1",service="b.B"} 2
yrpc_client_provider_breaker_state{instance="h:2",service="a.A"} 2
yrpc_client_provider_breaker_state{instance="h:3",service="a.A"} 0
yrpc_client_provider_in_flight{instance="h:1",service="a.A"} 5
yrpc_client_provider_in_flight{instance="h:1",service="b.B"} 9
yrpc_client_provider_in_flight{instance="h:2",service="a.A"} 0
yrpc_client_provider_in_flight{instance="h:3",service="a.A"} 0
yrpc_client_providers{service="a.A",state="draining"} 1
yrpc_client_providers{service="a.A",state="not_serving"} 0
yrpc_client_providers{service="a.A",state="routable"} 3
yrpc_client_providers{service="b.B",state="draining"} 0
yrpc_client_providers{service="b.B",state="not_serving"} 0
yrpc_client_providers{service="b.B",state="routable"} 1
`,
		},
		{
			name: "a breaker state this package does not know has no breaker series",
			opts: CollectorOptions{Client: clientStats{Services: []rt.ServiceStats{
				svc("a.A", "a.A", ps{Addr: "h:1", Breaker: "sideways", Active: 1})}}},
			names: []string{"yrpc_client_provider_breaker_state", "yrpc_client_provider_in_flight"},
			want: `
yrpc_client_provider_in_flight{instance="h:1",service="a.A"} 1
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCollector(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			reg := prom.NewPedanticRegistry()
			reg.MustRegister(c)
			if err := testutil.GatherAndCompare(reg, strings.NewReader(exposition(tt.want)), tt.names...); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestNewCollectorErrors(t *testing.T) {
	tests := []struct {
		name string
		opts CollectorOptions
		want string
	}{
		{"const label named like a variable one", CollectorOptions{ConstLabels: prom.Labels{"service": "x"}}, `duplicate label names`},
		{"namespace not UTF-8", CollectorOptions{Namespace: "a\xff"}, `is not a valid metric name`},
		{"const label name not UTF-8", CollectorOptions{ConstLabels: prom.Labels{"a\xff": "x"}}, `is not a valid label name`},
		{"const label value not UTF-8", CollectorOptions{ConstLabels: prom.Labels{"a": "\xff"}}, `is not valid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCollector(tt.opts)
			if err == nil || !strings.HasPrefix(err.Error(), "prometheus: yrpc collector: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewCollector: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestCollectorInvalidLabel: a label value that is not UTF-8 fails the
// scrape with an error instead of panicking.
func TestCollectorInvalidLabel(t *testing.T) {
	c, err := NewCollector(CollectorOptions{Client: clientStats{Services: []rt.ServiceStats{{Name: "a.A\xff"}}}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prom.NewRegistry()
	reg.MustRegister(c)
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("Gather: %v, want an invalid UTF-8 error", err)
	}
}

// TestCollectorConcurrent scrapes a live client from several goroutines
// while it makes calls; run it with -race.
func TestCollectorConcurrent(t *testing.T) {
	network, reg := memnet.New(), registry.NewMemory()
	t.Cleanup(func() { reg.Close() })
	srv := startProvider(t, network, reg, "p:1", &echo{}, true)
	cli, err := rt.NewClient(rt.WithRegistry(reg), rt.WithDialer(network.Dial), rt.WithObserver(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	c, err := NewCollector(CollectorOptions{Client: cli, Server: srv})
	if err != nil {
		t.Fatal(err)
	}
	promReg := prom.NewRegistry()
	promReg.MustRegister(c)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 50 {
				if err := call(cli, "x"); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				if _, err := promReg.Gather(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n, err := testutil.GatherAndCount(promReg, "yrpc_client_provider_in_flight"); n != 1 || err != nil {
		t.Errorf("in-flight series: %d, %v; want 1", n, err)
	}
}
