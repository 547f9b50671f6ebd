package zkreg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testSession is the session timeout of the tests: short, so expiry tests
// finish quickly, and long enough for a loaded 2-core machine.
const testSession = 3 * time.Second

// env is one test's world: a ZooKeeper address and a fresh root.
type env struct {
	t    *testing.T
	zk   string
	root string
	raw  *zk.Conn // a plain client for inspecting and tampering
}

func newEnv(t *testing.T) *env {
	t.Helper()
	addr := zktest.Addr(t)
	e := &env{t: t, zk: addr, root: fmt.Sprintf("/yrpctest-%08x", rand.Uint32())}
	conn, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(zkLogger{slog.New(slog.DiscardHandler)}))
	if err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		for range events {
		}
		close(drained)
	}()
	e.raw = conn
	t.Cleanup(func() {
		deleteAll(conn, e.root)
		conn.Close()
		<-drained
	})
	waitFor(t, "the raw client's session", func() bool { return conn.State() == zk.StateHasSession })
	return e
}

func deleteAll(c *zk.Conn, path string) {
	kids, _, _ := c.Children(path)
	for _, k := range kids {
		deleteAll(c, path+"/"+k)
	}
	c.Delete(path, -1)
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// options returns Options for this env; servers default to the real server.
func (e *env) options(servers ...string) Options {
	if len(servers) == 0 {
		servers = []string{e.zk}
	}
	return Options{Servers: servers, Root: e.root, SessionTimeout: testSession}
}

func (e *env) open(o Options) *Registry {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := New(ctx, o)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() { r.Close() })
	return r
}

// waitFor polls cond every 5ms for up to 15s (a bound for failures, not a
// sleep: it returns as soon as cond holds).
func waitFor(t testing.TB, desc string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(registrytest.Timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", desc)
		}
		<-tick.C
	}
}

// history records the provider lists a watcher saw, to detect flaps.
type history struct {
	*registrytest.Recorder
	mu   sync.Mutex
	seen [][]string
}

func watchHistory(t *testing.T, r registry.Registry, k registry.Key) *history {
	t.Helper()
	h := &history{Recorder: registrytest.NewRecorder()}
	stop, err := r.Watch(k, func(s registry.Snapshot) {
		h.mu.Lock()
		h.seen = append(h.seen, registrytest.Addrs(s))
		h.mu.Unlock()
		h.Fn(s)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return h
}

func (h *history) lists() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

func prov(k registry.Key, addr string) registry.Endpoint {
	return registry.Endpoint{Key: k, Role: registry.Provider, Addr: addr, Weight: 100, App: "test",
		StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func mustRegister(t *testing.T, r *Registry, e registry.Endpoint) {
	t.Helper()
	if err := r.Register(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}

func TestConformance(t *testing.T) {
	e := newEnv(t)
	registrytest.Run(t, func(t *testing.T) registry.Registry {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := New(ctx, e.options())
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return r
	})
}

func TestNewFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	for _, o := range []Options{
		{},
		{Servers: []string{"127.0.0.1:1"}, Root: "no-slash"},
		{Servers: []string{"127.0.0.1:1"}, Root: "/a/../b"},
		{Servers: []string{"127.0.0.1:1"}, Root: "/zookeeper/yrpc"},
		{Servers: []string{"127.0.0.1:1"}}, // nothing listens: no session before ctx ends
	} {
		if r, err := New(ctx, o); err == nil {
			r.Close()
			t.Errorf("New(%+v) = nil error", o)
		}
	}
	// An empty server address is named as such, at once, not left to a
	// DNS lookup of "" until ctx ends.
	bounded, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	_, err := New(bounded, Options{Servers: []string{"127.0.0.1:1", " "}})
	if err == nil || !strings.Contains(err.Error(), "zkreg: Servers[1] is empty: want host:port") {
		t.Errorf("New with an empty server: %v", err)
	}
	// A ZooKeeper connect string's chroot is named as such, not left to
	// the dialer ("lookup tcp/2181/yrpc: unknown port").
	_, err = New(bounded, Options{Servers: []string{"127.0.0.1:1/yrpc"}})
	if err == nil || !strings.Contains(err.Error(), `zkreg: Servers[0] "127.0.0.1:1/yrpc" has a path: want host:port (a chroot goes in Options.Root)`) {
		t.Errorf("New with a chroot: %v", err)
	}
}

// TestClosedRegistry: a registry closed (twice) has no session, its Done
// channel is closed (and was not before), and every method says it is
// closed.
func TestClosedRegistry(t *testing.T) {
	e := newEnv(t)
	r := e.open(e.options())
	if r.SessionID() == 0 || !r.Connected() {
		t.Fatalf("open: session %#x, connected %v", r.SessionID(), r.Connected())
	}
	// A watch that has answered, as an rt client's would be.
	h := watchHistory(t, r, registry.Key{Service: "a.Watched"})
	h.WaitFor(t, "the first snapshot", func(registry.Snapshot) bool { return true })
	done := r.Done()
	select {
	case <-done:
		t.Fatalf("Done is closed before Close")
	default:
	}
	for i := range 2 {
		if err := r.Close(); err != nil {
			t.Errorf("Close #%d: %v", i+1, err)
		}
	}
	select {
	case <-done:
	default:
		t.Errorf("Done is not closed after Close")
	}
	if sid := r.SessionID(); sid != 0 || r.Connected() {
		t.Errorf("closed: session %#x, connected %v; want 0, false", sid, r.Connected())
	}
	ctx, k := context.Background(), registry.Key{Service: "a.B"}
	_, watchErr := r.Watch(k, func(registry.Snapshot) {})
	_, listErr := r.List(ctx)
	_, configErr := r.Config(ctx, k)
	for name, err := range map[string]error{
		"Register":     r.Register(ctx, prov(k, "10.0.0.1:80")),
		"Deregister":   r.Deregister(ctx, prov(k, "10.0.0.1:80")),
		"Watch":        watchErr,
		"List":         listErr,
		"Config":       configErr,
		"UpdateConfig": r.UpdateConfig(ctx, k, func(*registry.Config) error { return nil }),
	} {
		if !errors.Is(err, registry.ErrClosed) {
			t.Errorf("%s after Close: %v; want %v", name, err, registry.ErrClosed)
		}
	}
}

func TestEmptyListingKeepsProviders(t *testing.T) {
	e := newEnv(t)
	p := e.open(e.options())
	o := e.options()
	o.EmptyGrace = time.Hour
	listed := make(chan int, 100)
	o.hookList = func(_ registry.Key, n int, err error) {
		if err == nil {
			select {
			case listed <- n:
			default:
			}
		}
	}
	c := e.open(o)
	k := registry.Key{Service: "pkg.Empty"}
	ep := prov(k, "10.0.0.1:80")
	mustRegister(t, p, ep)
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))

	// The last provider leaves (as when its session expired); ZooKeeper
	// confirms an empty list.
	for len(listed) > 0 { // forget the listings so far
		<-listed
	}
	if err := p.Deregister(context.Background(), ep); err != nil {
		t.Fatal(err)
	}
	for n := -1; n != 0; {
		select {
		case n = <-listed:
		case <-time.After(registrytest.Timeout):
			t.Fatal("no empty listing after the node was deleted")
		}
	}
	if s, _ := h.Latest(); len(s.Providers) != 1 {
		t.Fatalf("an empty listing wiped the cache: %s", registrytest.Describe(s))
	}
	// The provider comes back (as after re-registering): no flap.
	mustRegister(t, p, prov(k, "10.0.0.2:80"))
	h.WaitFor(t, "the returned provider", registrytest.HasAddrs("10.0.0.2:80"))
	for _, l := range h.lists() {
		if len(l) == 0 {
			t.Errorf("watcher saw an empty list: %v", h.lists())
		}
	}
}

func TestProvidersReallyLeave(t *testing.T) {
	e := newEnv(t)
	p := e.open(e.options())
	o := e.options()
	o.EmptyGrace = 200 * time.Millisecond
	c := e.open(o)
	k := registry.Key{Service: "pkg.Leave"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))
	start := time.Now()
	if err := p.Deregister(context.Background(), prov(k, "10.0.0.1:80")); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, "no providers after the grace period", registrytest.HasAddrs())
	if took := time.Since(start); took < o.EmptyGrace {
		t.Errorf("empty list published after %v, before the %v grace", took, o.EmptyGrace)
	}
}

func TestThreeProvidersOneStops(t *testing.T) {
	e := newEnv(t)
	k := registry.Key{Service: "pkg.Three", Version: "1.0"}
	var ps []*Registry
	for i := range 3 {
		p := e.open(e.options())
		mustRegister(t, p, prov(k, fmt.Sprintf("10.0.0.%d:80", i+1)))
		ps = append(ps, p)
	}
	var hs []*history
	for range 2 {
		hs = append(hs, watchHistory(t, e.open(e.options()), k))
	}
	for _, h := range hs {
		h.WaitFor(t, "three providers", registrytest.HasAddrs("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"))
	}
	ps[1].Close()
	for _, h := range hs {
		h.WaitFor(t, "the stopped provider gone", registrytest.HasAddrs("10.0.0.1:80", "10.0.0.3:80"))
	}
}

func TestConfigChangeReachesWatchers(t *testing.T) {
	e := newEnv(t)
	g := e.open(e.options())
	c := e.open(e.options())
	k := registry.Key{Service: "pkg.Config"}
	mustRegister(t, g, prov(k, "10.0.0.1:80"))
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))
	for i, rate := range []float64{10, 20, 30} {
		start := time.Now()
		err := g.UpdateConfig(context.Background(), k, func(cfg *registry.Config) error {
			cfg.RateLimit = &registry.RateLimit{Rate: rate, Burst: 1}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		h.WaitFor(t, "the new rate", func(s registry.Snapshot) bool {
			return s.Config.RateLimit != nil && s.Config.RateLimit.Rate == rate
		})
		took := time.Since(start)
		t.Logf("config change %d seen after %v", i, took)
		if took > time.Second {
			t.Errorf("config change seen after %v, want well under 1s", took)
		}
	}
}

// TestOverlongKeyRefused: a key whose requests ZooKeeper would refuse (it
// drops the connection of a request over its jute.maxbuffer) is an error
// that says so, at once, and the connection that every watch and
// registration shares is never cut.
func TestOverlongKeyRefused(t *testing.T) {
	e := newEnv(t)
	r := e.open(e.options())
	ctx := context.Background()
	want := fmt.Sprintf("exceeds %d (service, group or version too long)", maxKeyPath)
	for _, k := range []registry.Key{
		{Service: strings.Repeat("s", 1200<<10)},
		{Service: "a.B", Group: strings.Repeat("g", maxKeyPath)},
	} {
		errs := map[string]error{"Register": r.Register(ctx, prov(k, "10.0.0.1:80"))}
		stop, err := r.Watch(k, func(registry.Snapshot) {})
		if err == nil {
			stop()
		}
		errs["Watch"] = err
		_, errs["Config"] = r.Config(ctx, k)
		errs["UpdateConfig"] = r.UpdateConfig(ctx, k, func(c *registry.Config) error {
			c.RateLimit = &registry.RateLimit{Rate: 1, Burst: 1}
			return nil
		})
		for op, err := range errs {
			if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 300 {
				t.Errorf("%s of a key of %d bytes: %.300v; want an error with %q", op, len(k.Service)+len(k.Group), err, want)
			}
		}
		if err := r.Deregister(ctx, prov(k, "10.0.0.1:80")); err != nil {
			t.Errorf("Deregister: %.300v", err)
		}
	}
	if n := r.connects.Load(); n != 1 {
		t.Errorf("the connection was cut: %d sessions", n)
	}
}

func TestBadPayloadsSkipped(t *testing.T) {
	e := newEnv(t)
	var logs logBuf
	o := e.options()
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	c := e.open(o)
	p := e.open(e.options())
	k := registry.Key{Service: "pkg.Bad"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	dir := p.paths.providers(k)
	for name, data := range map[string]string{
		"10.0.0.2:80": `{not json`,
		"10.0.0.3:80": `{"addr":"10.9.9.9:80"}`,
		"10.0.0.4:80": `{"addr":"10.0.0.4:80","weight":-5}`,
		"10.0.0.5:80": `{"addr":"10.0.0.5:80","weight":10001}`,
		"10.0.0.6":    `{"addr":"10.0.0.6"}`,
		"10.0.0.7:0":  `{"addr":"10.0.0.7:0"}`,
		"10.0.0.8:80": `{"addr":"10.0.0.8:80","payload_version":2,"new":"shape"}`,
		"10.0.0.9:80": `{"addr":"10.0.0.9:80","tags":{"pad":"` + strings.Repeat("x", registry.MaxPayloadSize) + `"}}`,
		// Unknown fields of the current version are ignored: accepted.
		"10.0.1.1:80": `{"addr":"10.0.1.1:80","payload_version":1,"later_field":{"x":1}}`,
	} {
		if _, err := e.raw.Create(dir+"/"+name, []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.raw.Set(p.paths.config(k), []byte(`{bad`), -1); err != nil { // created with the key
		t.Fatal(err)
	}
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the good providers only", registrytest.HasAddrs("10.0.0.1:80", "10.0.1.1:80"))
	for _, want := range []string{"bad JSON payload", "does not match node name", "weight -5 is out of range 0..10000",
		"weight 10001", "is not host:port", "is not a number in 1..65535", "payload version 2, newer", "exceeds 16384", "bad config JSON"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "bad payload") && !strings.Contains(line, "level=WARN") {
			t.Errorf("a skipped payload is not logged at Warn: %s", line)
		}
	}
	ls, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || len(ls[0].Providers) != 2 || len(ls[0].Skipped) != 9 {
		t.Errorf("List = %+v, want 2 providers and 9 skipped nodes", ls)
	}
}

func TestPaths(t *testing.T) {
	p, err := newPaths("/yrpc/")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		e    registry.Endpoint
		want string
	}{
		{registry.Endpoint{Key: registry.Key{Service: "a.B"}, Role: registry.Provider, Addr: "1.2.3.4:5"},
			"/yrpc/a.B/_default/_default/providers/1.2.3.4:5"},
		{registry.Endpoint{Key: registry.Key{Service: "a.B", Group: "x/y", Version: ".."}, Role: registry.Consumer, Addr: "[::1]:5"},
			"/yrpc/a.B/x%2Fy/%2E./consumers/%5B::1%5D:5"},
	}
	for _, tc := range tests {
		if got := p.endpoint(tc.e); got != tc.want {
			t.Errorf("endpoint(%+v) = %q, want %q", tc.e, got, tc.want)
		}
	}
	if g, err := parseGroupSegment("%2E."); err != nil || g != ".." {
		t.Errorf("parseGroupSegment = %q, %v", g, err)
	}
}

// FuzzDecodeEndpoint: whatever a node holds, a payload the decoder
// accepts is one a consumer may route to (Validate passes, the limits
// hold), and it survives re-encoding unchanged.
func FuzzDecodeEndpoint(f *testing.F) {
	k := registry.Key{Service: "a.B"}
	full := prov(k, "[::1]:7001")
	full.Weight, full.App, full.Tags = 300, "users", map[string]string{"zone": "hk-1"}
	full.TLS, full.Token, full.Methods, full.Protocols = true, "tok", []string{"Get", "List"}, []string{"yrpc", "grpc"}
	for _, e := range []registry.Endpoint{prov(k, "1.2.3.4:5"), full} {
		b, err := encodeEndpoint(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(escape(e.Addr), b)
	}
	f.Add("x", []byte(`{"addr":"x","tags":{"a":"b"},"weight":-1}`))
	f.Add("x:1", []byte(`{"addr":"x:1","payload_version":2}`))
	f.Add("x:1", []byte(`{"addr":"x:1","weight":10001,"unknown":[1]}`))
	f.Add("x:1", []byte(`{"addr":"x:1","tls":"yes","methods":"Get"}`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		e, err := decodeEndpoint(k, registry.Provider, name, data)
		if err != nil {
			return
		}
		if err := e.Validate(); err != nil || len(data) > registry.MaxPayloadSize || e.Weight > registry.MaxWeight ||
			e.PayloadVersion > registry.PayloadVersion || registry.CheckAddr(e.Addr) != nil {
			t.Fatalf("accepted %q %q as %+v (%v)", name, data, e, err)
		}
		b, err := encodeEndpoint(e)
		if err != nil {
			if strings.Contains(err.Error(), "exceeds") {
				return // re-encoding can grow a payload near the limit (escaped "<", the version)
			}
			t.Fatalf("re-encoding %+v: %v", e, err)
		}
		again, err := decodeEndpoint(k, registry.Provider, name, b)
		if err != nil {
			t.Fatalf("decoding the re-encoding %q: %v", b, err)
		}
		e.PayloadVersion = registry.PayloadVersion
		if diff := cmp.Diff(e, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("re-encoding changed the endpoint (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeConfig(f *testing.F) {
	b, _ := json.Marshal(registry.Config{
		RateLimit: &registry.RateLimit{Rate: 1.5, Burst: 2, PerApp: true},
		Instances: map[string]registry.InstanceConfig{"a:1": {Weight: 3, Draining: true}},
		Mocks:     map[string]registry.MockConfig{"Get": {Action: "value", Value: []byte{1, 2}, Expires: time.Unix(1e9, 0).UTC()}},
	})
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeConfig(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("re-encoding a decoded config: %v", err)
		}
		if _, err := decodeConfig(again); err != nil {
			t.Fatalf("decoding a re-encoded config: %v", err)
		}
	})
}

func BenchmarkDecodeEndpoint(b *testing.B) {
	e := prov(registry.Key{Service: "a.B"}, "10.0.0.1:7001")
	e.Tags = map[string]string{"zone": "hk-1"}
	data, _ := encodeEndpoint(e)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeEndpoint(e.Key, registry.Provider, "10.0.0.1:7001", data); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBurstCoalesced(t *testing.T) {
	e := newEnv(t)
	p := e.open(e.options())
	o := e.options()
	var stall atomic.Bool
	var listings atomic.Int32
	blocked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	o.hookList = func(registry.Key, int, error) {
		listings.Add(1)
		if stall.Load() {
			once.Do(func() { close(blocked); <-release })
		}
	}
	c := e.open(o)
	var releaseOnce sync.Once
	unstall := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unstall) // runs before c.Close even when the test fails
	k := registry.Key{Service: "pkg.Burst"}
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the first snapshot", registrytest.HasAddrs())

	stall.Store(true)
	mustRegister(t, p, prov(k, "10.0.1.00:80"))
	select { // the watcher's loop is busy; the burst arrives meanwhile
	case <-blocked:
	case <-time.After(registrytest.Timeout):
		t.Fatal("no listing after the first registration")
	}
	const n = 50
	want := []string{"10.0.1.00:80"}
	for i := 1; i < n; i++ {
		ep := prov(k, fmt.Sprintf("10.0.1.%02d:80", i))
		mustRegister(t, p, ep)
		want = append(want, ep.Addr)
		ep.App = "changed" // and a payload change per node
		mustRegister(t, p, ep)
	}
	before := listings.Load()
	unstall()
	h.WaitFor(t, "all providers", registrytest.HasAddrs(want...))
	if got := listings.Load() - before; got > 3 {
		t.Errorf("%d listings for a burst of %d events, want one or two", got, 2*n)
	}
}

// TestEmptyConfigLeavesNothing: a config change that leaves the config
// empty deletes its node, and the key's nodes when nothing else is in
// them, so that no empty key stays listed.
func TestEmptyConfigLeavesNothing(t *testing.T) {
	e := newEnv(t)
	r := e.open(e.options())
	ctx := context.Background()
	set := func(k registry.Key, rl *registry.RateLimit) {
		t.Helper()
		if err := r.UpdateConfig(ctx, k, func(c *registry.Config) error { c.RateLimit = rl; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	keys := func() []string {
		t.Helper()
		ls, err := r.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range ls {
			out = append(out, l.Key.String())
		}
		return out
	}
	lone := registry.Key{Service: "pkg.Typo"}
	served := registry.Key{Service: "pkg.Served", Group: "g"}
	sibling := registry.Key{Service: "pkg.Served", Group: "h"}
	mustRegister(t, r, prov(served, "10.0.0.1:80"))
	for _, k := range []registry.Key{lone, served, sibling} {
		set(k, &registry.RateLimit{Rate: 1, Burst: 1})
	}
	if got := keys(); len(got) != 3 {
		t.Fatalf("keys = %v, want 3", got)
	}
	for _, k := range []registry.Key{lone, served, sibling} {
		set(k, nil)
	}
	if got := keys(); !slices.Equal(got, []string{"pkg.Served[g]"}) {
		t.Errorf("keys after removing every config = %v, want only the served one", got)
	}
	for _, path := range []string{e.root + "/pkg.Typo", e.root + "/pkg.Served/h"} {
		if ok, _, err := e.raw.Exists(path); err != nil || ok {
			t.Errorf("%s still exists (%v)", path, err)
		}
	}
	// The served key keeps an empty config node (see createKey).
	if data, _, err := e.raw.Get(r.paths.config(served)); err != nil || len(data) != 0 {
		t.Errorf("the served key's config node holds %q, %v; want it empty", data, err)
	}
	set(lone, nil) // nothing stored: nothing created
	if ok, _, _ := e.raw.Exists(e.root + "/pkg.Typo"); ok {
		t.Error("storing an empty config created nodes")
	}
	// A key whose providers all left, never configured, is listed (empty)
	// until an empty config is stored (`ctl rm SERVICE all --force`),
	// which removes it.
	retired := registry.Key{Service: "pkg.Retired", Version: "1"}
	mustRegister(t, r, prov(retired, "10.0.0.2:80"))
	if err := r.Deregister(ctx, prov(retired, "10.0.0.2:80")); err != nil {
		t.Fatal(err)
	}
	if got := keys(); !slices.Equal(got, []string{"pkg.Retired@1", "pkg.Served[g]"}) {
		t.Fatalf("keys after the last provider left = %v", got)
	}
	set(retired, nil)
	if got := keys(); !slices.Equal(got, []string{"pkg.Served[g]"}) {
		t.Errorf("keys after storing an empty config in the retired key = %v, want only the served one", got)
	}
}
