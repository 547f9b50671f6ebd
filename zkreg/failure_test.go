package zkreg

// Tests of the failure rules against a real ZooKeeper: session expiry,
// stale nodes, disconnects, event storms, an unreachable server and failed
// listings.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

func TestSessionExpiryReRegisters(t *testing.T) {
	e := newEnv(t)
	proxy := zktest.NewProxy(t, e.zk)
	p := e.open(e.options(proxy.Addr()))
	c := e.open(e.options())
	k := registry.Key{Service: "pkg.Expiry"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))

	old := p.SessionID()
	pw, ok := proxy.Password(old)
	if !ok {
		t.Fatalf("proxy did not see session %#x", old)
	}
	start := time.Now()
	if err := zktest.Expire(e.zk, old, pw); err != nil {
		t.Fatal(err)
	}
	path := p.paths.endpoint(prov(k, "10.0.0.1:80"))
	waitFor(t, "the node back in a new session", func() bool {
		ok, st, err := e.raw.Exists(path)
		return err == nil && ok && st.EphemeralOwner != old && st.EphemeralOwner == p.SessionID()
	})
	took := time.Since(start)
	t.Logf("node back %v after the session expired (session timeout %v)", took, testSession)
	if took > testSession+time.Second {
		t.Errorf("node back after %v, want within session timeout + 1s", took)
	}
	for _, l := range h.lists() {
		if len(l) == 0 {
			t.Errorf("watcher saw an empty provider list during the expiry: %v", h.lists())
			break
		}
	}
}

func TestStaleNodeReplaced(t *testing.T) {
	e := newEnv(t)
	r := e.open(e.options())
	k := registry.Key{Service: "pkg.Stale", Group: "g"}
	ep := prov(k, "10.0.0.1:80")
	path := r.paths.endpoint(ep)
	// A node of another session at our path, as left by an old session.
	if err := r.mkdirs(r.conn(), parent(path), NodeProviders); err != nil {
		t.Fatal(err)
	}
	if _, err := e.raw.Create(path, []byte(`{"addr":"10.0.0.1:80","app":"stale"}`), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, r, ep)
	data, st, err := e.raw.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.EphemeralOwner != r.SessionID() || !strings.Contains(string(data), `"app":"test"`) {
		t.Errorf("node owner %#x (want %#x), data %s", st.EphemeralOwner, r.SessionID(), data)
	}
}

// TestReplacedNodeNeverMissing: a registry replacing a node of another
// session at its path (its own expired session's, as after a ZooKeeper
// outage) never leaves the path empty: a watcher that reads right after
// the old node's deletion finds the new one. The registry's writes are
// slowed down, so a delete and a create sent apart would leave a gap of
// at least that long.
func TestReplacedNodeNeverMissing(t *testing.T) {
	e := newEnv(t)
	var delay atomic.Int64 // per write of the registry's connection
	o := e.options()
	o.Dial = func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &slowConn{Conn: c, delay: &delay}, nil
	}
	r := e.open(o)
	k := registry.Key{Service: "pkg.Replace"}
	ep := prov(k, "10.0.0.1:80")
	path := r.paths.endpoint(ep)
	if err := r.mkdirs(r.conn(), parent(path), NodeProviders); err != nil {
		t.Fatal(err)
	}
	if _, err := e.raw.Create(path, []byte(`{"addr":"10.0.0.1:80","app":"old"}`), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	ok, _, ch, err := e.raw.ExistsW(path)
	if err != nil || !ok {
		t.Fatalf("watch the old node: exists %t, %v", ok, err)
	}
	seen := make(chan string, 1)
	go func() {
		ev := <-ch
		ok, _, err := e.raw.Exists(path)
		seen <- fmt.Sprintf("%v, then exists %t (%v)", ev.Type, ok, err)
	}()
	delay.Store(int64(300 * time.Millisecond))
	mustRegister(t, r, ep)
	delay.Store(0)
	if got, want := <-seen, fmt.Sprintf("%v, then exists true (<nil>)", zk.EventNodeDeleted); got != want {
		t.Errorf("watcher of the replaced node saw %s; want %s", got, want)
	}
	if _, st, err := e.raw.Get(path); err != nil || st.EphemeralOwner != r.SessionID() {
		t.Errorf("node after Register: %v, owner %#x (want %#x)", err, st.EphemeralOwner, r.SessionID())
	}
}

// TestReplaceEndpointFails: a replacement that loses a race (the node gone
// or changed) fails with the error ensure looks again on, and changes
// nothing.
func TestReplaceEndpointFails(t *testing.T) {
	e := newEnv(t)
	r := e.open(e.options())
	path := r.paths.endpoint(prov(registry.Key{Service: "pkg.ReplaceRace"}, "10.0.0.1:80"))
	if err := r.mkdirs(r.conn(), parent(path), NodeProviders); err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"addr":"10.0.0.1:80"}`)
	if err := r.replaceEndpoint(r.conn(), path, data, 0, registry.Provider); !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("replacing a missing node: %v, want ErrNoNode", err)
	}
	if _, err := e.raw.Create(path, data, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if err := r.replaceEndpoint(r.conn(), path, data, 1, registry.Provider); !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("replacing a node of another version: %v, want ErrBadVersion", err)
	}
	if _, st, err := e.raw.Get(path); err != nil || st.EphemeralOwner != e.raw.SessionID() {
		t.Errorf("node after the failed replacements: %v, owner %#x (want the old %#x)", err, st.EphemeralOwner, e.raw.SessionID())
	}
}

// slowConn delays every write by delay.
type slowConn struct {
	net.Conn
	delay *atomic.Int64
}

func (c *slowConn) Write(p []byte) (int, error) {
	if d := time.Duration(c.delay.Load()); d > 0 {
		time.Sleep(d) // injected latency, not a wait
	}
	return c.Conn.Write(p)
}

func TestShortDisconnectNoFlap(t *testing.T) {
	e := newEnv(t)
	proxy := zktest.NewProxy(t, e.zk)
	p := e.open(e.options())
	c := e.open(e.options(proxy.Addr()))
	k := registry.Key{Service: "pkg.Flap"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	mustRegister(t, c, registry.Endpoint{Key: k, Role: registry.Consumer, Addr: "c1"})
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))
	sid, connects := c.SessionID(), c.connects.Load()

	proxy.Cut()
	waitFor(t, "the consumer to notice the disconnect", func() bool { return c.conn().State() != zk.StateHasSession })
	proxy.Restore()
	waitFor(t, "the consumer to reconnect", func() bool { return c.connects.Load() > connects })
	if got := c.SessionID(); got != sid {
		t.Fatalf("session changed from %#x to %#x on a short disconnect", sid, got)
	}
	// Watches still work after the reconnection.
	mustRegister(t, p, prov(k, "10.0.0.2:80"))
	h.WaitFor(t, "the second provider", registrytest.HasAddrs("10.0.0.1:80", "10.0.0.2:80"))
	want := [][]string{{"10.0.0.1:80"}, {"10.0.0.1:80", "10.0.0.2:80"}}
	if got := h.lists(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("watcher saw %v, want exactly %v (no flap)", got, want)
	}
}

func TestManySessionEventsConverge(t *testing.T) {
	e := newEnv(t)
	proxy := zktest.NewProxy(t, e.zk)
	o := e.options(proxy.Addr())
	block, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var stall atomic.Bool
	// Stall the session loop at its next wake-up so that events pile up
	// unhandled.
	o.hookSession = func(zk.State, int64) {
		if stall.Load() {
			once.Do(func() { close(block); <-release })
		}
	}
	p := e.open(o)
	var releaseOnce sync.Once
	unstall := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unstall) // runs before p.Close even when the test fails
	k := registry.Key{Service: "pkg.Events"}
	ep := prov(k, "10.0.0.1:80")
	mustRegister(t, p, ep)
	countFrom := p.events.Load()

	old := p.SessionID()
	pw, _ := proxy.Password(old)
	stall.Store(true)
	if err := zktest.Expire(e.zk, old, pw); err != nil {
		t.Fatal(err)
	}
	select { // the loop gets stuck in its next wake-up
	case <-block:
	case <-time.After(registrytest.Timeout):
		t.Fatal("the session loop did not wake up")
	}
	waitFor(t, "a new session", func() bool { return p.SessionID() != old && p.conn().State() == zk.StateHasSession })
	for i := range 3 {
		n := proxy.Accepted()
		proxy.Cut()
		proxy.Restore()
		waitFor(t, fmt.Sprintf("reconnection %d", i), func() bool {
			return proxy.Accepted() > n && p.conn().State() == zk.StateHasSession
		})
	}
	events := p.events.Load() - countFrom
	t.Logf("%d session events while the session loop was stalled", events)
	// Each reconnection is Disconnected, Connecting, Connected, HasSession
	// (plus Expired once): far more than go-zk's 6 slots.
	if events <= 6 {
		t.Fatalf("only %d session events; the test did not overflow go-zk's channel", events)
	}
	path := p.paths.endpoint(ep)
	if ok, _, _ := e.raw.Exists(path); ok {
		t.Fatalf("node exists while the session loop is stalled; the test proves nothing")
	}
	unstall()
	waitFor(t, "the node re-created in the current session", func() bool {
		ok, st, err := e.raw.Exists(path)
		return err == nil && ok && st.EphemeralOwner == p.SessionID()
	})
	c := e.open(e.options())
	watchHistory(t, c, k).WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))
}

func TestUnreachableKeepsCache(t *testing.T) {
	e := newEnv(t)
	proxy := zktest.NewProxy(t, e.zk)
	p := e.open(e.options())
	c := e.open(e.options(proxy.Addr()))
	k := registry.Key{Service: "pkg.Unreachable"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	consumer := registry.Endpoint{Key: k, Role: registry.Consumer, Addr: "c1"}
	mustRegister(t, c, consumer)
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))
	old := c.SessionID()

	proxy.Cut()
	// ZooKeeper is unreachable for longer than the session: the server
	// expires it (the consumer node goes) while the client keeps its cache.
	waitFor(t, "the consumer's session to expire on the server", func() bool {
		ok, _, err := e.raw.Exists(c.paths.endpoint(consumer))
		return err == nil && !ok
	})
	if s, _ := h.Latest(); len(s.Providers) != 1 {
		t.Fatalf("cache lost while ZooKeeper is unreachable: %s", registrytest.Describe(s))
	}
	proxy.Restore()
	waitFor(t, "a new session with the consumer node back", func() bool {
		ok, st, err := e.raw.Exists(c.paths.endpoint(consumer))
		return err == nil && ok && st.EphemeralOwner != old && st.EphemeralOwner == c.SessionID()
	})
	mustRegister(t, p, prov(k, "10.0.0.2:80"))
	h.WaitFor(t, "watches working in the new session", registrytest.HasAddrs("10.0.0.1:80", "10.0.0.2:80"))
	for _, l := range h.lists() {
		if len(l) == 0 {
			t.Errorf("watcher saw an empty list: %v", h.lists())
		}
	}
}

func TestFailedListingKeepsCache(t *testing.T) {
	e := newEnv(t)
	proxy := zktest.NewProxy(t, e.zk)
	p := e.open(e.options())
	o := e.options(proxy.Addr())
	failed := make(chan struct{}, 1)
	o.hookList = func(_ registry.Key, _ int, err error) {
		if err != nil {
			select {
			case failed <- struct{}{}:
			default:
			}
		}
	}
	c := e.open(o)
	k := registry.Key{Service: "pkg.Failed"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))

	// The providers node becomes unreadable, so every listing fails with
	// NoAuth (ZooKeeper also stops sending its events to us, so expire the
	// consumer's session to make it list again from scratch).
	dir := p.paths.providers(k)
	noRead := []zk.ACL{{Perms: zk.PermAll &^ zk.PermRead, Scheme: "world", ID: "anyone"}}
	if _, err := e.raw.SetACL(dir, noRead, -1); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, p, prov(k, "10.0.0.2:80"))
	pw, _ := proxy.Password(c.SessionID())
	if err := zktest.Expire(e.zk, c.SessionID(), pw); err != nil {
		t.Fatal(err)
	}
	select {
	case <-failed:
	case <-time.After(registrytest.Timeout):
		t.Fatal("no failed listing")
	}
	if s, _ := h.Latest(); !slices.Equal(registrytest.Addrs(s), []string{"10.0.0.1:80"}) {
		t.Fatalf("a failed listing changed the cache: %s", registrytest.Describe(s))
	}
	// Readable again: the retry (with backoff) catches up.
	if _, err := e.raw.SetACL(dir, zk.WorldACL(zk.PermAll), -1); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, "both providers after recovery", registrytest.HasAddrs("10.0.0.1:80", "10.0.0.2:80"))
	for _, l := range h.lists() {
		if len(l) == 0 {
			t.Errorf("watcher saw an empty list: %v", h.lists())
		}
	}
}

// TestTreeWiped plays a ZooKeeper restarted with an empty data dir: the
// whole tree is gone and the sessions expire. Providers rebuild their paths;
// consumers keep their providers meanwhile.
func TestTreeWiped(t *testing.T) {
	e := newEnv(t)
	proxy := zktest.NewProxy(t, e.zk)
	p := e.open(e.options(proxy.Addr()))
	c := e.open(e.options())
	k := registry.Key{Service: "pkg.Wiped", Group: "g", Version: "2"}
	ep := prov(k, "10.0.0.1:80")
	mustRegister(t, p, ep)
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))

	old := p.SessionID()
	pw, _ := proxy.Password(old)
	deleteAll(e.raw, e.root)
	if err := zktest.Expire(e.zk, old, pw); err != nil {
		t.Fatal(err)
	}
	path := p.paths.endpoint(ep)
	waitFor(t, "the node back under a rebuilt tree", func() bool {
		ok, st, err := e.raw.Exists(path)
		return err == nil && ok && st.EphemeralOwner == p.SessionID() && st.EphemeralOwner != old
	})
	// The consumer follows the rebuilt tree: a new provider shows up.
	mustRegister(t, p, prov(k, "10.0.0.2:80"))
	h.WaitFor(t, "both providers", registrytest.HasAddrs("10.0.0.1:80", "10.0.0.2:80"))
	for _, l := range h.lists() {
		if len(l) == 0 {
			t.Errorf("watcher saw an empty list: %v", h.lists())
		}
	}
}

// TestDeletedNodeHeals: a node deleted behind the provider's back (an
// operator, a tool) comes back in the same session; a node that another live
// session took over is left to it (no fight).
func TestDeletedNodeHeals(t *testing.T) {
	e := newEnv(t)
	var logs logBuf
	o := e.options()
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	p := e.open(o)
	k := registry.Key{Service: "pkg.Heal"}
	ep := prov(k, "10.0.0.1:80")
	mustRegister(t, p, ep)
	path := p.paths.endpoint(ep)
	sid := p.SessionID()

	if err := e.raw.Delete(path, -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted node back", func() bool {
		ok, st, err := e.raw.Exists(path)
		return err == nil && ok && st.EphemeralOwner == sid
	})

	// Another live process claims the address (atomically: delete ours,
	// create its own): it keeps it.
	_, err := e.raw.Multi(
		&zk.DeleteRequest{Path: path, Version: -1},
		&zk.CreateRequest{Path: path, Data: []byte(`{"addr":"10.0.0.1:80","app":"other"}`),
			Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagEphemeral},
	)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the provider to look at the node", func() bool {
		return strings.Contains(logs.String(), "another session owns our node")
	})
	_, st, err := e.raw.Get(path)
	if err != nil || st.EphemeralOwner != e.raw.SessionID() {
		t.Errorf("the other process's node was replaced (owner %#x, want %#x): %v", st.EphemeralOwner, e.raw.SessionID(), err)
	}
	// Deregister does not delete the other process's node either.
	if err := p.Deregister(context.Background(), ep); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := e.raw.Exists(path); !ok {
		t.Errorf("Deregister deleted another session's node")
	}
}

// TestRestartWipedReRegisters restarts a ZooKeeper of the test's own with an
// empty data dir. That server refuses every client that has seen a later
// zxid than its own, which go-zk retries for ever; the registry replaces a
// connection without a session for 1.5 session timeouts, so the provider
// registers again and the watcher follows, without ever seeing an empty
// list. The server comes back either at once (the registries are refused
// first) or after the registries replaced their connections.
func TestRestartWipedReRegisters(t *testing.T) {
	for _, tc := range []struct {
		name     string
		downLong bool // start the server again only after both replaced their connections
		// The registries use ACLs; p presents its credentials again on its
		// new connection (or it could not re-create its nodes).
		locked bool
	}{
		{name: "back_at_once"},
		{name: "down_past_the_session", downLong: true},
		{name: "locked_down_past_the_session", downLong: true, locked: true},
	} {
		t.Run(tc.name, func(t *testing.T) { testRestartWiped(t, tc.downLong, tc.locked) })
	}
}

func testRestartWiped(t *testing.T, downLong, locked bool) {
	srv := zktest.StartServer(t)
	e := &env{t: t, zk: srv.Addr(), root: "/yrpcwiped"}
	po, co := e.options(), e.options()
	if locked {
		po.ACL, co.ACL = lockedPolicy(t), lockedPolicy(t)
		po.Auth = []Credential{provCred, opsCred} // p writes config too
	}
	p := e.open(po)
	c := e.open(co)
	k := registry.Key{Service: "pkg.RestartWiped"}
	ep := prov(k, "10.0.0.1:80")
	mustRegister(t, p, ep)
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))
	// Both clients see a zxid the new server will not reach by itself: p
	// writes, c reads every config it is told about.
	const writes = 30
	for i := range writes {
		err := p.UpdateConfig(context.Background(), k, func(cfg *registry.Config) error {
			cfg.RateLimit = &registry.RateLimit{Rate: float64(i + 1), Burst: 1}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	h.WaitFor(t, "the last config", func(s registry.Snapshot) bool {
		return s.Config.RateLimit != nil && s.Config.RateLimit.Rate == writes
	})
	oldP, oldC := p.SessionID(), c.SessionID()
	connP, connC := p.conn(), c.conn()

	down := time.Now()
	srv.Stop()
	srv.Wipe()
	if downLong {
		waitFor(t, "both registries to replace their connections", func() bool {
			return p.conn() != connP && c.conn() != connC
		})
		t.Logf("connections replaced %v after the server stopped", time.Since(down).Round(time.Millisecond))
	}
	srv.Start()
	up := time.Now()

	raw, events, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(zkLogger{slog.New(slog.DiscardHandler)}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		raw.Close()
		for range events {
		}
	})
	path := p.paths.endpoint(ep)
	waitFor(t, "the provider node back in a new session", func() bool {
		ok, st, err := raw.Exists(path)
		return err == nil && ok && st.EphemeralOwner != oldP && st.EphemeralOwner == p.SessionID()
	})
	t.Logf("provider node back %v after the server came back (refused stale sessions: %t)",
		time.Since(up).Round(time.Millisecond), strings.Contains(srv.Log(), "Refusing session request"))
	mustRegister(t, p, prov(k, "10.0.0.2:80"))
	h.WaitFor(t, "the watcher to follow the new tree", registrytest.HasAddrs("10.0.0.1:80", "10.0.0.2:80"))
	t.Logf("watcher converged %v after the server came back", time.Since(up).Round(time.Millisecond))
	if got := c.SessionID(); got == oldC || got == 0 {
		t.Errorf("watcher session %#x, want a new one (old %#x)", got, oldC)
	}
	for _, l := range h.lists() {
		if len(l) == 0 {
			t.Errorf("watcher saw an empty provider list: %v", h.lists())
			break
		}
	}
}

// A registration whose connection is lost is tried again on the next one,
// instead of failing the provider's start (as it did when ZooKeeper
// dropped a connection under load).
func TestRegisterOutlivesALostConnection(t *testing.T) {
	e := newEnv(t)
	proxy := zktest.NewProxy(t, e.zk)
	logs := new(logBuf)
	o := e.options(proxy.Addr())
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	o.SessionTimeout = 10 * time.Second // Register's window: room for go-zk's reconnection on a loaded machine
	r := e.open(o)
	p := prov(registry.Key{Service: "pkg.Lost"}, "10.0.0.1:80")

	proxy.Cut()
	waitFor(t, "the registry to notice the disconnect", func() bool { return r.conn().State() != zk.StateHasSession })
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), registrytest.Timeout)
		defer cancel()
		done <- r.Register(ctx, p)
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(registrytest.Timeout); !strings.Contains(logs.String(), "registration lost with its connection"); {
		select {
		case err := <-done:
			t.Fatalf("Register while the connection was down returned %v; want it to wait for the next connection", err)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for Register to lose a request with the connection")
		}
	}
	proxy.Restore()
	if err := <-done; err != nil {
		t.Fatalf("Register after the connection came back: %v", err)
	}
	ok, st, err := e.raw.Exists(r.paths.endpoint(p))
	if err != nil || !ok || st.EphemeralOwner != r.SessionID() {
		t.Fatalf("node: exists %t, owner %#x (want %#x), %v", ok, st.EphemeralOwner, r.SessionID(), err)
	}
}
